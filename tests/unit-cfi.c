/* tests/unit-cfi.c - unwind/cfi-read.c's FDE lookup on a real ELF file,
 * driven by tests/cfi-read.test: for each "START END" line on stdin (an
 * FDE as readelf lists it), cfi_find at START and at END - 1, once through
 * the file's .eh_frame_hdr (when it has one) and once through the table
 * cfi-read.c builds from .eh_frame alone.  Prints
 *   hdr|index START END RA_UNDEFINED
 * for each lookup whose two ends agree, in hex, and "miss ..." for the
 * others; the test compares that with readelf's own reading.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"

static void
look(struct elf_image *img, const char *how, uint64_t start, uint64_t end)
{
	struct cfi_fde a, b;
	int ra = cfi_find(img, start, &a), rb = cfi_find(img, end - 1, &b);
	if (ra == 0 && rb == 0 && a.start == b.start && a.range == b.range)
		printf("%s %" PRIx64 " %" PRIx64 " %d\n", how, a.start, a.start + a.range,
		       cfi_fde_ra_undefined(&a));
	else
		printf("miss %s %" PRIx64 " %" PRIx64 "\n", how, start, end);
	/* Just past it: another FDE, or none. */
	CHECK(cfi_find(img, end, &a) != 0 || a.start >= end, "%s: %" PRIx64 " found in the FDE before",
	      how, end);
}

/* cfi-exec.c's rows of a pac-ret function as GCC writes it for aarch64
 * (spin_2 of tests/targets/vm/live.c at -O2 -mbranch-protection=standard:
 * paciasp; stp x29, x30, [sp, #-16]!; mov x29, sp; ... ldp; autiasp;
 * ret): RA_SIGN_STATE from DW_CFA_AARCH64_negate_ra_state, and x30
 * where it is. */
static void
test_pac_rows(void)
{
	static const unsigned char ins[] = {
		0x41,             /* advance_loc 1 (4 bytes): after paciasp */
		0x2d,             /* negate_ra_state */
		0x41,             /* after stp */
		0x0e, 16,         /* def_cfa_offset 16 */
		0x9d, 2,          /* offset x29, cfa-16 */
		0x9e, 1,          /* offset x30, cfa-8 */
		0x48,             /* advance 8 insns: at autiasp */
		0xde,             /* restore x30 */
		0xdd,             /* restore x29 */
		0x0e, 0,          /* def_cfa_offset 0 */
		0x41,             /* at ret */
		0x2d,             /* negate_ra_state */
	};
	static const unsigned char cie_ins[] = { 0x0c, 31, 0 };   /* def_cfa sp+0 */
	struct cfi_fde f;
	struct cfi_rules rs;
	memset(&f, 0, sizeof(f));
	f.start = 0x1000;
	f.range = 0x30;
	f.ins = ins;
	f.end = ins + sizeof(ins);
	f.cie.code_align = 4;
	f.cie.data_align = -8;
	f.cie.ra_column = 30;
	f.cie.ins = cie_ins;
	f.cie.end = cie_ins + sizeof(cie_ins);
	static const struct {
		uint64_t pc;
		bool signed_;
		enum cfi_rule_kind x30;
		int64_t cfa_off;
	} rows[] = {
		{ 0x1000, false, CFI_RULE_SAME, 0 },      /* paciasp */
		{ 0x1004, true, CFI_RULE_SAME, 0 },       /* stp: x30 signed */
		{ 0x1008, true, CFI_RULE_OFFSET, 16 },
		{ 0x1024, true, CFI_RULE_OFFSET, 16 },
		{ 0x1028, true, CFI_RULE_SAME, 0 },       /* autiasp */
		{ 0x102c, false, CFI_RULE_SAME, 0 },      /* ret */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CHECK(cfi_rules_at(&f, rows[i].pc, 8, false, &rs) == 0, "pc %#" PRIx64, rows[i].pc);
		CHECK(rs.ra_signed == rows[i].signed_, "pc %#" PRIx64 ": signed %d", rows[i].pc,
		      rs.ra_signed);
		CHECK(rs.reg[30].kind == rows[i].x30, "pc %#" PRIx64 ": x30 rule %d", rows[i].pc,
		      rs.reg[30].kind);
		CHECK(rs.cfa.reg == 31 && rs.cfa.off == rows[i].cfa_off, "pc %#" PRIx64, rows[i].pc);
	}
}

int
main(int argc, char **argv)
{
	struct elf_cache cache = { 0 };
	int err = 0;
	test_pac_rows();
	if (argc != 2) {
		fprintf(stderr, "usage: unit-cfi ELF-FILE < FDE-RANGES\n");
		return 2;
	}
	struct elf_image *img = elf_cache_open_path(&cache, argv[1], &err);
	if (!img) {
		fprintf(stderr, "unit-cfi: %s: %s\n", argv[1], strerror(-err));
		return 2;
	}
	uint64_t hdr = img->eh_frame_hdr_vaddr;
	uint64_t start, end;
	while (scanf("%" SCNx64 " %" SCNx64, &start, &end) == 2) {
		if (end <= start)
			continue;
		if (hdr) {
			img->eh_frame_hdr_vaddr = hdr;
			look(img, "hdr", start, end);
		}
		/* The same without the header: the table built from
		 * .eh_frame (once, on the first lookup). */
		img->eh_frame_hdr_vaddr = 0;
		look(img, "index", start, end);
	}
	img->eh_frame_hdr_vaddr = hdr;
	elf_cache_free(&cache);
	return check_exit_status("unit-cfi");
}
