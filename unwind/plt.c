/* unwind/plt.c - names for PLT stubs ("func@plt"). */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"

/* PLT stubs have no symbol, but a stack stopped in one (a lazy binding, a
 * thread preempted on its way into libc) deserves a name: "func@plt", as
 * gdb and perf say.  Entry k of .plt.sec (IBT) or of .plt after its header
 * jumps through the k-th .rela.plt relocation: the sizes are in the arch/
 * table (x86-64 and aarch64).
 * Returns the number added, or -ENOMEM. */
long plt_symbols(const struct elf_image *img, struct raw_sym **raw, size_t *n,
		 size_t *cap, char **names_out)
{
	Elf *e;
	GElf_Ehdr eh;
	Elf64_Shdr rel, plt;
	GElf_Shdr dsym, dstr;
	Elf_Scn *scn;
	const struct arch *a;
	size_t header, entsize, count, names_len = 0;
	long added = 0;
	char *names = NULL;

	if (!elf_find_section(img->data, img->size, ".rela.plt", &rel) ||
	    rel.sh_type != SHT_RELA || rel.sh_entsize != sizeof(Elf64_Rela))
		return 0;
	if (elf_find_section(img->data, img->size, ".plt.sec", &plt)) {
		header = 0;
	} else if (elf_find_section(img->data, img->size, ".plt", &plt)) {
		header = 1;       /* the architecture's size, below */
	} else {
		return 0;
	}
	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return 0;
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_ident[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		goto out;
	/* The layout of the stubs is the architecture's (arch/). */
	a = arch_from_elf(eh.e_machine, ELFCLASS64, eh.e_ident[EI_DATA] == ELFDATA2MSB);
	if (!a || a->plt_entry == 0)
		goto out;
	header = header ? a->plt_header : 0;
	entsize = a->plt_entry;
	scn = elf_getscn(e, rel.sh_link);
	if (!scn || !gelf_getshdr(scn, &dsym) || dsym.sh_type != SHT_DYNSYM ||
	    !span_inside(img->size, dsym.sh_offset, dsym.sh_size) ||
	    dsym.sh_entsize != sizeof(Elf64_Sym))
		goto out;
	scn = elf_getscn(e, dsym.sh_link);
	if (!scn || !gelf_getshdr(scn, &dstr) || dstr.sh_type != SHT_STRTAB ||
	    dstr.sh_size == 0 || !span_inside(img->size, dstr.sh_offset, dstr.sh_size))
		goto out;
	count = rel.sh_size / sizeof(Elf64_Rela);
	if (plt.sh_size < header || (plt.sh_size - header) / entsize < count)
		goto out;

	/* One block for every name: "name@plt\0" each. */
	for (int pass = 0; pass < 2; pass++) {
		size_t at = 0;

		for (size_t k = 0; k < count; k++) {
			Elf64_Rela r;
			Elf64_Sym sym;
			const char *nm;
			size_t l;
			uint64_t si;

			memcpy(&r, img->data + rel.sh_offset + k * sizeof(r), sizeof(r));
			si = ELF64_R_SYM(r.r_info);
			if (si == 0 || (si + 1) * sizeof(sym) > dsym.sh_size)
				continue;
			memcpy(&sym, img->data + dsym.sh_offset + si * sizeof(sym), sizeof(sym));
			if (sym.st_name == 0 || sym.st_name >= dstr.sh_size)
				continue;
			nm = (const char *)img->data + dstr.sh_offset + sym.st_name;
			l = strnlen(nm, dstr.sh_size - sym.st_name);
			if (l == dstr.sh_size - sym.st_name)
				continue;
			if (pass == 0) {
				names_len += l + sizeof("@plt");
				continue;
			}
			struct raw_sym *rs = raw_sym_append(raw, n, cap);
			if (!rs) {
				added = -ENOMEM;
				goto out;
			}
			memcpy(names + at, nm, l);
			memcpy(names + at + l, "@plt", sizeof("@plt"));
			rs->start = plt.sh_addr + header + k * entsize;
			rs->size = entsize;
			rs->sec_end = 0;
			rs->name = names + at;
			/* Below any real symbol at the same address. */
			rs->rank = 3;
			rs->underscores = 0;
			at += l + sizeof("@plt");
			added++;
		}
		if (pass == 0) {
			if (names_len == 0)
				goto out;
			names = malloc(names_len);
			if (!names) {
				added = -ENOMEM;
				goto out;
			}
			*names_out = names;
		}
	}
out:
	elf_end(e);
	return added;
}
