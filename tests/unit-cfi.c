/* tests/unit-cfi.c - unwind/cfi-read.c's FDE lookup on a real ELF file,
 * driven by tests/cfi-read.test: for each "START END" line on stdin (an
 * FDE as readelf lists it), unwind_cfi_find at START and at END - 1, once through
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

#include "arch/arch.h"
#include "tests/check.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"

static void
look(struct elf_image *img, const char *how, uint64_t start, uint64_t end)
{
	struct cfi_fde a, b;
	int ra = unwind_cfi_find(img, start, &a), rb = unwind_cfi_find(img, end - 1, &b);
	if (ra == 0 && rb == 0 && a.start == b.start && a.range == b.range)
		printf("%s %" PRIx64 " %" PRIx64 " %d\n", how, a.start, a.start + a.range,
		       unwind_cfi_fde_ra_undefined(&a));
	else
		printf("miss %s %" PRIx64 " %" PRIx64 "\n", how, start, end);
	/* Just past it: another FDE, or none. */
	CHECK(unwind_cfi_find(img, end, &a) != 0 || a.start >= end,
	      "%s: %" PRIx64 " found in the FDE before", how, end);
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
		CHECK(unwind_cfi_rules_at(&f, rows[i].pc, 8, false, &rs) == 0, "pc %#" PRIx64,
		      rows[i].pc);
		CHECK(rs.ra_signed == rows[i].signed_, "pc %#" PRIx64 ": signed %d", rows[i].pc,
		      rs.ra_signed);
		CHECK(rs.reg[30].kind == rows[i].x30, "pc %#" PRIx64 ": x30 rule %d", rows[i].pc,
		      rs.reg[30].kind);
		CHECK(rs.cfa.reg == 31 && rs.cfa.off == rows[i].cfa_off, "pc %#" PRIx64, rows[i].pc);
	}
}

/* A fake target for expressions: 64 bytes of memory at 0x1000, registers
 * r[i] = 0x1000 + 8 * i. */
static unsigned char fake_mem[64];

static int
fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < 0x1000 || addr - 0x1000 > sizeof(fake_mem) || len > sizeof(fake_mem) - (addr - 0x1000))
		return -EFAULT;
	memcpy(buf, fake_mem + (addr - 0x1000), len);
	return 0;
}

static int
fake_reg(void *ctx, uint64_t reg, uint64_t *val)
{
	(void)ctx;
	if (reg >= 17)
		return -EINVAL;
	*val = 0x1000 + 8 * reg;
	return 0;
}

static int
eval(const unsigned char *e, size_t len, uint64_t *out)
{
	static const struct cfi_env env = { .word_size = 8, .read = fake_read, .reg = fake_reg };
	return unwind_cfi_expr_eval(e, len, 0, &env, out);
}

/* What issue 32's hostile tables do to the interpreter: each refused with
 * its own code, none a signal, an undefined operation or a hang
 * (tests/security-cfi.test runs them through stackspy). */
static void
test_hostile_expr(void)
{
	static const unsigned char div_overflow[] = { 0x30, 0x20, 0x31, 0x08, 63, 0x24, 0x16, 0x1b };
	static const unsigned char div_zero[] = { 0x35, 0x30, 0x1b };
	static const unsigned char mod_zero[] = { 0x35, 0x30, 0x1d };
	static const unsigned char div_ok[] = { 0x08, 0xf9, 0x32, 0x1b };   /* 249 / 2 */
	static const unsigned char div_neg[] = { 0x09, 0xf9, 0x32, 0x1b };  /* -7 / 2 */
	static const unsigned char skip_loop[] = { 0x2f, 0xfd, 0xff };      /* skip -3 */
	static const unsigned char bra_loop[] = { 0x31, 0x28, 0xfc, 0xff }; /* lit1; bra -4 */
	static const unsigned char pick255[] = { 0x30, 0x15, 0xff };
	static const unsigned char shifts[] = { 0x31, 0x08, 200, 0x24, 0x31, 0x08, 200, 0x25,
						0x22, 0x31, 0x20, 0x08, 200, 0x26, 0x22 };
	static const unsigned char kernel[] = { 0x0e, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0x06 };
	static const unsigned char deref_ok[] = { 0x73, 0x00, 0x06 };       /* [r3] */
	static const unsigned char bregx_huge[] = { 0x92, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00 };
	static const unsigned char leb100[] = {
		0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
	};
	unsigned char deep[1024];
	uint64_t v;

	CHECK(eval(div_overflow, sizeof(div_overflow), &v) == -EDOM, "INT64_MIN / -1");
	CHECK(eval(div_zero, sizeof(div_zero), &v) == -EDOM, "/ 0");
	CHECK(eval(mod_zero, sizeof(mod_zero), &v) == -EDOM, "mod 0");
	CHECK(eval(div_ok, sizeof(div_ok), &v) == 0 && v == 124, "249 / 2: %" PRIu64, v);
	CHECK(eval(div_neg, sizeof(div_neg), &v) == 0 && (int64_t)v == -3, "-7 / 2: %" PRId64,
	      (int64_t)v);
	CHECK(eval(skip_loop, sizeof(skip_loop), &v) == -ELOOP, "skip loop");
	CHECK(eval(bra_loop, sizeof(bra_loop), &v) == -ELOOP, "bra loop");
	CHECK(eval(pick255, sizeof(pick255), &v) == -EINVAL, "pick 255");
	CHECK(eval(shifts, sizeof(shifts), &v) == 0 && v == UINT64_MAX, "shifts of 200: %" PRIx64, v);
	CHECK(eval(kernel, sizeof(kernel), &v) == -EFAULT, "deref of a kernel address");
	fake_mem[24] = 0x42;
	CHECK(eval(deref_ok, sizeof(deref_ok), &v) == 0 && v == 0x42, "deref [r3]");
	CHECK(eval(bregx_huge, sizeof(bregx_huge), &v) == -EINVAL, "bregx 0xffffffff");
	CHECK(eval(leb100, sizeof(leb100), &v) == -EINVAL, "a 100-byte LEB128");
	memset(deep, 0x30, sizeof(deep));               /* 1,024 x lit0 */
	CHECK(eval(deep, sizeof(deep), &v) == -EOVERFLOW, "1,024-deep stack");
	CHECK(eval(deep, CFI_MAX_EXPR_DEPTH - 1, &v) == 0, "%d-deep stack",
	      CFI_MAX_EXPR_DEPTH);
}

/* An FDE of ins (a CIE of def_cfa r7+8, ra column 16) over [0x1000,
 * 0x1100): unwind_cfi_rules_at at pc. */
static int
rules(const unsigned char *ins, size_t len, uint64_t pc, struct cfi_rules *rs)
{
	static const unsigned char cie_ins[] = { 0x0c, 7, 8, 0x90, 1 };
	struct cfi_fde f;
	memset(&f, 0, sizeof(f));
	f.start = 0x1000;
	f.range = 0x100;
	f.ins = ins;
	f.end = ins + len;
	f.cie.code_align = 1;
	f.cie.data_align = -8;
	f.cie.ra_column = 16;
	f.cie.ins = cie_ins;
	f.cie.end = cie_ins + sizeof(cie_ins);
	return unwind_cfi_rules_at(&f, pc, 8, false, rs);
}

static void
test_hostile_rows(void)
{
	static unsigned char big[(CFI_MAX_INSN_BYTES) + 1];
	static const unsigned char restore[] = { 0x0b };
	static const unsigned char reg_huge[] = { 0x05, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01,
						  0x0d, 0xff, 0xff, 0xff, 0xff, 0x0f };
	static const unsigned char off_overflow[] = { 0x05, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff,
						      0xff, 0xff, 0xff, 0xff, 0x7f };
	static const unsigned char args_size[] = { 0x2e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						   0xff, 0xff, 0xff, 0x01 };
	static const unsigned char adv_wrap[] = { 0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 16 };
	struct cfi_rules rs;

	memset(big, 0x0a, CFI_MAX_STATES + 1);          /* remember_state */
	CHECK(rules(big, CFI_MAX_STATES, 0x1000, &rs) == 0, "%d remember_state", CFI_MAX_STATES);
	CHECK(rules(big, CFI_MAX_STATES + 1, 0x1000, &rs) == -EOVERFLOW, "remember_state nest");
	CHECK(rules(restore, sizeof(restore), 0x1000, &rs) == -EINVAL,
	      "restore_state without remember_state");
	memset(big, 0, sizeof(big));                    /* nops */
	CHECK(rules(big, sizeof(big), 0x1000, &rs) == -E2BIG, "1 MiB of nops");
	CHECK(rules(big, CFI_MAX_INSNS, 0x1000, &rs) == -E2BIG, "%u nops run",
	      (unsigned)CFI_MAX_INSNS);
	CHECK(rules(big, CFI_MAX_INSNS - 8, 0x1000, &rs) == 0, "fewer nops");
	for (size_t i = 0; i + 1 < CFI_MAX_INSNS; i += 2) {
		big[i] = 0x0a;                          /* remember_state, */
		big[i + 1] = 0x0b;                      /* restore_state */
	}
	CHECK(rules(big, CFI_MAX_INSNS, 0x1000, &rs) == -E2BIG, "remember/restore pairs");
	CHECK(rules(big, 200, 0x1000, &rs) == 0, "100 remember/restore pairs");
	CHECK(rules(reg_huge, sizeof(reg_huge), 0x1000, &rs) == 0 && rs.cfa.reg == 0xffffffffu,
	      "register 0xffffffff");
	CHECK(rules(off_overflow, sizeof(off_overflow), 0x1000, &rs) == 0, "offset * -8");
	CHECK(rules(args_size, sizeof(args_size), 0x1000, &rs) == 0, "huge GNU_args_size");
	CHECK(rules(adv_wrap, sizeof(adv_wrap), 0x10ff, &rs) == 0 && rs.cfa.off == 8,
	      "advance_loc4 past the end: %" PRId64, rs.cfa.off);
}

/* One step whose columns each run an expression of 9,999 operations
 * (under the bound of one): the step's shared count refuses it. */
static void
test_hostile_apply(void)
{
	/* lit0, 4,998 x (lit0 drop), lit0, nop: 9,999 operations */
	static unsigned char e[2 + 2 * 4998 + 1];
	static const struct cfi_env env = { .word_size = 8, .read = fake_read, .reg = fake_reg };
	struct cfi_rules rs;
	struct arch_regs in, out;
	uint64_t v;

	e[0] = 0x30;
	for (size_t i = 1; i + 1 < sizeof(e); i += 2) {
		e[i] = 0x30;
		e[i + 1] = 0x13;
	}
	e[sizeof(e) - 1] = 0x96;        /* DW_OP_nop */
	CHECK(eval(e, sizeof(e), &v) == 0, "one expression under the bound");
	memset(&rs, 0, sizeof(rs));
	rs.cfa.kind = CFI_RULE_REGISTER;
	rs.cfa.reg = 7;
	rs.cfa.off = 8;
	rs.ra_column = 16;
	rs.reg[16].kind = CFI_RULE_OFFSET;
	rs.reg[16].off = -8;
	for (int i = 0; i < 6; i++) {
		rs.reg[i].kind = CFI_RULE_VAL_EXPR;
		rs.reg[i].expr = e;
		rs.reg[i].expr_len = sizeof(e);
	}
	memset(&in, 0, sizeof(in));
	for (unsigned i = 0; i < arch_x86_64.nregs; i++) {
		in.r[i] = 0x1000 + 8 * i;
		in.valid |= UINT64_C(1) << i;
	}
	CHECK(unwind_cfi_apply(&rs, &env, &arch_x86_64, &in, &out) == -ELOOP,
	      "six expressions of 9,999 operations in one step");
	rs.reg[1].kind = rs.reg[2].kind = rs.reg[3].kind = rs.reg[4].kind = rs.reg[5].kind =
		CFI_RULE_SAME;
	CHECK(unwind_cfi_apply(&rs, &env, &arch_x86_64, &in, &out) == 0, "one of them");
}

int
main(int argc, char **argv)
{
	struct elf_cache cache = { 0 };
	int err = 0;
	test_pac_rows();
	test_hostile_expr();
	test_hostile_rows();
	test_hostile_apply();
	if (argc != 2) {
		fprintf(stderr, "usage: unit-cfi ELF-FILE < FDE-RANGES\n");
		return 2;
	}
	struct elf_image *img = unwind_elf_cache_open_path(&cache, argv[1], &err);
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
	unwind_elf_cache_free(&cache);
	return check_exit_status("unit-cfi");
}
