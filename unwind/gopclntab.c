/* unwind/gopclntab.c - function names of a stripped Go binary from
 * .gopclntab, the table the Go runtime itself reads for its tracebacks, so
 * `strip` and `go build -ldflags=-s` leave it in place.
 *
 * The layout is Go 1.18's and later's (magic 0xfffffff0, 0xfffffff1 since
 * 1.20): a header of pointer-sized fields, then a function table of
 * (entry offset from the start of the text, offset of the function's
 * record) 32-bit pairs, sorted, whose last entry's entry offset is the end
 * of the text; each record starts with its entry offset and the offset of
 * its name in the function name table.  Older layouts give no names.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "unwind/elf-image.h"
#include "unwind/symbols.h"

#define GO_MAGIC_118 0xfffffff0u
#define GO_MAGIC_120 0xfffffff1u

/* Header fields after the 8 bytes of magic, pads, minLC and ptrSize. */
enum { GO_NFUNC, GO_NFILES, GO_TEXT, GO_FUNCNAME, GO_CU, GO_FILETAB,
       GO_PCTAB, GO_PCLN, GO_NFIELDS };

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get_word(const unsigned char *p, unsigned size)
{
	if (size == 4)
		return get32(p);
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

long
unwind_gopclntab_symbols(const struct elf_image *img, struct sym_build *b)
{
	Elf64_Shdr sh, text;
	const unsigned char *p;
	uint64_t f[GO_NFIELDS], len;
	unsigned ps;
	long added = 0;

	if (!unwind_elf_find_section(img->data, img->size, ".gopclntab", &sh))
		return 0;
	p = img->data + sh.sh_offset;
	len = sh.sh_size;
	if (len < 8)
		return 0;
	uint32_t magic = get32(p);

	/* Host byte order only: the tables are the target's, which is ours
	 * for every engine that names Go frames. */
	if ((magic != GO_MAGIC_118 && magic != GO_MAGIC_120) || p[4] || p[5])
		return 0;
	ps = p[7];
	if ((ps != 4 && ps != 8) || len < 8 + (uint64_t)GO_NFIELDS * ps)
		return 0;
	for (int i = 0; i < GO_NFIELDS; i++)
		f[i] = get_word(p + 8 + (size_t)i * ps, ps);
	/* A position-independent binary has its text start relocated at
	 * load time: the file may hold 0; the text section is where it
	 * starts. */
	if (f[GO_TEXT] == 0) {
		if (!unwind_elf_find_section(img->data, img->size, ".text", &text))
			return 0;
		f[GO_TEXT] = text.sh_addr;
	}
	uint64_t nfunc = f[GO_NFUNC], pcln = f[GO_PCLN], names = f[GO_FUNCNAME];

	if (nfunc == 0 || nfunc > len / 8 || pcln > len ||
	    (nfunc + 1) * 8 > len - pcln || names > len)
		return 0;
	const unsigned char *ft = p + pcln;

	for (uint64_t i = 0; i < nfunc; i++) {
		uint32_t entry = get32(ft + 8 * i), rec = get32(ft + 8 * i + 4);
		uint32_t next = get32(ft + 8 * (i + 1));
		int32_t name_off;

		if (next <= entry || rec > len - pcln || len - pcln - rec < 8)
			continue;
		memcpy(&name_off, ft + rec + 4, 4);
		if (name_off < 0 || (uint64_t)name_off >= len - names)
			continue;
		const char *name = (const char *)p + names + name_off;

		/* The name must end inside the section. */
		if (!*name || !memchr(name, '\0', len - names - (uint64_t)name_off))
			continue;
		int r = unwind_symtab_add(b, f[GO_TEXT] + entry, next - entry, 0, name, 2);

		if (r < 0)
			return r;
		added++;
	}
	return added;
}
