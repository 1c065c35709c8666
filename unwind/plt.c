/* unwind/plt.c - names for PLT stubs ("func@plt"). */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
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
long unwind_plt_symbols(const struct elf_image *img, struct sym_build *b, char **names_out,
		 size_t *names_len_out)
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

	if (!unwind_elf_find_section(img->data, img->size, ".rela.plt", &rel) ||
	    rel.sh_type != SHT_RELA || rel.sh_entsize != sizeof(Elf64_Rela))
		return 0;
	if (unwind_elf_find_section(img->data, img->size, ".plt.sec", &plt)) {
		header = 0;
	} else if (unwind_elf_find_section(img->data, img->size, ".plt", &plt)) {
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
				if (l + sizeof("@plt") > SIZE_MAX / 2 - names_len) {
					added = -E2BIG;
					goto out;
				}
				names_len += l + sizeof("@plt");
				continue;
			}
			memcpy(names + at, nm, l);
			memcpy(names + at + l, "@plt", sizeof("@plt"));
			/* Rank 3: below any real symbol at the same address. */
			int err = unwind_symtab_add(b, plt.sh_addr + header + k * entsize, entsize,
						    0, names + at, 3);
			if (err < 0) {
				added = err;
				goto out;
			}
			at += l + sizeof("@plt");
			added++;
		}
		if (pass == 0) {
			if (names_len == 0)
				goto out;
			/* A hostile .rela.plt can name one long name many
			 * times: the block is charged before it is made. */
			if (unwind_symtab_charge_names(names_len) < 0) {
				added = -E2BIG;
				goto out;
			}
			names = malloc(names_len);
			if (!names) {
				unwind_symtab_uncharge_names(names_len);
				added = -ENOMEM;
				goto out;
			}
			*names_out = names;
			*names_len_out = names_len;
		}
	}
out:
	elf_end(e);
	return added;
}
