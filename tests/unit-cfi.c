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

int
main(int argc, char **argv)
{
	struct elf_cache cache = { 0 };
	int err = 0;
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
