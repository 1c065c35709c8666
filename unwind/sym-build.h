/* unwind/sym-build.h - a symbol table being built: its compact entries,
 * the builder the sources add to (unwind_symtab_add, symbols.h), the reader of
 * an ELF file's .symtab and .dynsym, and the sort.  Defined in
 * unwind/sym-build.c.
 *
 * Private to symtab.c, which builds tables from its sources (plt.c and
 * gopclntab.c only see struct sym_build through unwind_symtab_add); it calls
 * nothing above the images.
 */
#ifndef STACKSPY_UNWIND_SYM_BUILD_H
#define STACKSPY_UNWIND_SYM_BUILD_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image;

/* One function: 24 bytes, its name in place in the file's string table
 * (or the MiniDebugInfo, or the block of PLT names), so that a table of
 * millions is a compact index over the mapped file rather than a copy.
 * While the table is built, len is st_size (clamped to 32 bits) or, with
 * SYM_REACH, how far it may reach to the end of its section, and info
 * holds what decides among aliases; once built, len is end - start. */
struct sym {
	uint64_t start;
	const char *name;
	uint32_t len;
	uint32_t info;            /* SYM_RANK_MASK, SYM_REACH */
};
#define SYM_RANK_MASK 0x3u        /* 0 GLOBAL, 1 WEAK, 2 other, 3 synthesized */
#define SYM_REACH     0x4u

/* Why a table was not taken (struct sym_build.over). */
enum sym_over { SYM_FITS, SYM_OVER_MODULE, SYM_OVER_RUN, SYM_OVER_TIME };

struct sym_build {
	struct sym *v;
	size_t n, cap;
	uint64_t charged;         /* bytes of v taken from the run's budget */
	uint64_t max_funcs;       /* the module's budget */
	uint64_t started;         /* ptrace_clock_monotonic_ns() */
	uint64_t deadline;
	enum sym_over over;
	/* The string tables of mapped files the names are in: the sort
	 * reads the names of aliases, and drops these pages as it goes. */
	struct sym_strings {
		const struct elf_image *img;
		const char *p;
		size_t len;
	} strs[4];
	unsigned nstrs;
	unsigned name_reads;      /* by the sort, since the last drop */
};

/* Append the functions of the first section of type `type` (SHT_SYMTAB
 * or SHT_DYNSYM) of the ELF at data/size to b; img is the mapped file
 * they are in (NULL: our memory).  Returns the number added, 0 when there
 * is none, -E2BIG over a budget (b->over), -ENOMEM. */
long unwind_symtab_collect(struct sym_build *b, const struct elf_image *img,
		    const unsigned char *data, size_t size, Elf64_Word type);
/* Sort v in place by start, the preferred alias first, within b's time.
 * false when the time ran out first (b->over). */
bool unwind_symtab_sort(struct sym_build *b, struct sym *v, size_t n, unsigned depth);

#endif
