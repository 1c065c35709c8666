/* tests/symbols-gen.c - an ELF file with a symbol table as large as asked,
 * for the tests and benchmarks of symbol table bounds
 * (tests/security-symbols.test, bench/hostile-symbols.sh).
 *
 *   symbols-gen IN OUT N [spread]
 *
 * IN is a 64-bit little-endian ELF file with a .symtab (a library built
 * with cc, or its debug file from objcopy --only-keep-debug).  OUT is IN
 * with N more function symbols "junkNNN" appended to its .symtab, each one
 * byte long, laid over IN's .text byte after byte (so that, read, they
 * would name every frame there; with "spread", 16 bytes each, one after
 * the other from the end of .text on, as a real table's functions are,
 * naming none of IN's code), the .strtab and .symtab moved to the end
 * of the file and the section headers after them.  Everything else is
 * IN's bytes, so the program headers, .dynsym and build-id stay.  Written
 * in one pass with a buffer per section: seconds for 20,000,000 symbols.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void die(const char *what)
{
	fprintf(stderr, "symbols-gen: %s\n", what);
	exit(1);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0)
		die("cannot read the input");
	p = malloc((size_t)n);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
		die("cannot read the input");
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void put(FILE *f, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, f) != n)
		die("cannot write the output");
}

int main(int argc, char **argv)
{
	if (argc != 4 && !(argc == 5 && strcmp(argv[4], "spread") == 0))
		die("usage: symbols-gen IN OUT N [spread]");
	int spread = argc == 5;
	size_t len;
	unsigned char *in = slurp(argv[1], &len);
	unsigned long long n = strtoull(argv[3], NULL, 10);
	Elf64_Ehdr eh;

	if (len < sizeof(eh))
		die("input too short");
	memcpy(&eh, in, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shoff > len || eh.e_shnum > (len - eh.e_shoff) / sizeof(Elf64_Shdr))
		die("input is not a 64-bit little-endian ELF file with sections");
	Elf64_Shdr *sh = malloc(eh.e_shnum * sizeof(*sh));
	if (!sh)
		die("out of memory");
	memcpy(sh, in + eh.e_shoff, eh.e_shnum * sizeof(*sh));

	const Elf64_Shdr *shstr = eh.e_shstrndx < eh.e_shnum ? &sh[eh.e_shstrndx] : NULL;
	unsigned symi = 0, texti = 0;
	for (unsigned i = 1; i < eh.e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB)
			symi = i;
		if (shstr && sh[i].sh_name < shstr->sh_size &&
		    strcmp((const char *)in + shstr->sh_offset + sh[i].sh_name, ".text") == 0)
			texti = i;
	}
	if (!symi || !texti || sh[symi].sh_link >= eh.e_shnum)
		die("input has no .symtab or no .text");
	Elf64_Shdr *sym = &sh[symi], *str = &sh[sym->sh_link];
	if (sym->sh_offset + sym->sh_size > len || str->sh_offset + str->sh_size > len ||
	    sh[texti].sh_size == 0)
		die("input's tables lie outside it");

	FILE *out = fopen(argv[2], "wb");
	if (!out)
		die("cannot create the output");
	put(out, in, len);
	/* 8-byte alignment for the symbol table. */
	static const unsigned char zeros[8];
	size_t at = len;
	put(out, zeros, (8 - at % 8) % 8);
	at += (8 - at % 8) % 8;

	/* .strtab: the old names, then junk0, junk1, ... */
	uint64_t str_off = at, str_old = str->sh_size;
	put(out, in + str->sh_offset, str->sh_size);
	at += str->sh_size;
	char name[32];
	for (unsigned long long i = 0; i < n; i++) {
		int l = snprintf(name, sizeof(name), "junk%llu", i);
		put(out, name, (size_t)l + 1);
		at += (size_t)l + 1;
	}
	uint64_t str_size = at - str_off;
	put(out, zeros, (8 - at % 8) % 8);
	at += (8 - at % 8) % 8;

	/* .symtab: the old entries, then one per junk name. */
	uint64_t sym_off = at;
	put(out, in + sym->sh_offset, sym->sh_size);
	at += sym->sh_size;
	uint64_t name_at = str_old;
	uint64_t after = (sh[texti].sh_addr + sh[texti].sh_size + 15) & ~(uint64_t)15;
	for (unsigned long long i = 0; i < n; i++) {
		Elf64_Sym s = {
			.st_name = (Elf64_Word)name_at,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = (Elf64_Section)texti,
			.st_value = spread ? after + 16 * i : sh[texti].sh_addr + i % sh[texti].sh_size,
			.st_size = spread ? 16 : 1,
		};
		name_at += (uint64_t)snprintf(name, sizeof(name), "junk%llu", i) + 1;
		put(out, &s, sizeof(s));
		at += sizeof(s);
	}
	if (name_at > UINT32_MAX)
		die("too many names for 32-bit name offsets");
	uint64_t sym_size = at - sym_off;

	sym->sh_offset = sym_off;
	sym->sh_size = sym_size;
	str->sh_offset = str_off;
	str->sh_size = str_size;
	eh.e_shoff = at;
	put(out, sh, eh.e_shnum * sizeof(*sh));
	if (fseek(out, 0, SEEK_SET) != 0)
		die("cannot write the output");
	put(out, &eh, sizeof(eh));
	if (fclose(out) != 0)
		die("cannot write the output");
	free(sh);
	free(in);
	return 0;
}
