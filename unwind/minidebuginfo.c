/* unwind/minidebuginfo.c - MiniDebugInfo (Fedora, and others since):
 * .gnu_debugdata is an xz-packed ELF file whose .symtab holds the
 * functions that are not in .dynsym. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#ifdef HAVE_LZMA
# include <lzma.h>
#endif

#include "unwind/elf-image.h"
#include "unwind/symbols.h"

/* A decompressed MiniDebugInfo larger than this is not believed (an xz
 * bomb in a hostile container must not eat our memory); below it, the
 * limit relative to the module (MINIDEBUG_RATIO) applies. */
#define MINIDEBUG_MAX (256u << 20)
/* What the xz decoder itself may take (its dictionary, which the
 * stream's header sizes: 65 MiB for xz -9): a header asking for more
 * is not believed either. */
#define MINIDEBUG_DECODER_MEMLIMIT (96u << 20)

#ifdef HAVE_LZMA
/* xz-decompress p[0, len) into a malloc'd buffer of at most max bytes.
 * Returns its size, 0 on any failure (corrupt, truncated, too large: *big
 * set, out of memory). */
static size_t xz_decompress(const unsigned char *p, size_t len, size_t max, unsigned char **out,
			    bool *big)
{
	lzma_stream zs = LZMA_STREAM_INIT;
	unsigned char *buf = NULL;
	size_t cap = 0;
	lzma_ret r;

	*out = NULL;
	if (lzma_stream_decoder(&zs, MINIDEBUG_DECODER_MEMLIMIT, 0) != LZMA_OK)
		return 0;
	zs.next_in = p;
	zs.avail_in = len;
	do {
		if (zs.avail_out == 0) {
			size_t ncap = cap ? cap * 2 : len * 4 + 4096;
			unsigned char *nb;

			if (cap >= max) {
				*big = true;
				r = LZMA_MEM_ERROR;
				break;
			}
			if (ncap > max)
				ncap = max;
			if (!(nb = realloc(buf, ncap))) {
				r = LZMA_MEM_ERROR;
				break;
			}
			buf = nb;
			zs.next_out = buf + cap;
			zs.avail_out = ncap - cap;
			cap = ncap;
		}
		/* LZMA_FINISH: all input is there; a truncated stream ends
		 * in LZMA_BUF_ERROR instead of looping. */
		r = lzma_code(&zs, LZMA_FINISH);
	} while (r == LZMA_OK);
	size_t n = cap - zs.avail_out;
	lzma_end(&zs);
	if (r != LZMA_STREAM_END) {
		free(buf);
		return 0;
	}
	*out = buf;
	return n;
}
#endif

size_t
unwind_minidebuginfo_read(const struct elf_image *img, unsigned char **out)
{
	*out = NULL;
#ifdef HAVE_LZMA
	Elf64_Shdr sh;

	if (!unwind_elf_find_section(img->data, img->size, ".gnu_debugdata", &sh))
		return 0;
	size_t max = img->size * MINIDEBUG_RATIO;
	if (max < MINIDEBUG_MIN_LIMIT)
		max = MINIDEBUG_MIN_LIMIT;
	if (max > MINIDEBUG_MAX)
		max = MINIDEBUG_MAX;
	bool big = false;
	size_t n = xz_decompress(img->data + sh.sh_offset, sh.sh_size, max, out, &big);
	if (big) {
		char a[32], b[32];

		unwind_note_skipped(img->path, "not read: its MiniDebugInfo (.gnu_debugdata, %s "
				    "compressed) decompresses to more than %s; names there come from "
				    "what else it has",
				    unwind_size_text(sh.sh_size, a, sizeof(a)),
				    unwind_size_text(max, b, sizeof(b)));
	}
	return n;
#else
	(void)img;
	return 0;
#endif
}
