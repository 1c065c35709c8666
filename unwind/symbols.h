/* unwind/symbols.h - the names of code: symbol tables (.symtab,
 * .dynsym, PLT stubs, Go's .gopclntab), separate debug files and
 * MiniDebugInfo, demangling, and the inputs skipped at a size limit.
 * Defined in unwind/symtab.c, unwind/sym-build.c, unwind/debug-file.c,
 * unwind/minidebuginfo.c, unwind/plt.c, unwind/gopclntab.c and
 * unwind/demangle.c.
 *
 * Private to unwind/ (and its unit tests).  Names returned belong to the image
 * they were looked up in.
 */
#ifndef STACKSPY_UNWIND_SYMBOLS_H
#define STACKSPY_UNWIND_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ptrace/clock.h"

struct elf_cache;
struct elf_image;
struct symtab;

/* A symbol table being built (sym-build.c): the functions found so far, in
 * their compact form, and the module's and the run's budgets they are
 * charged to. */
struct sym_build;

/* Add a function of [start, start + size) (size 0: unknown, then up to the
 * next one, or to sec_end when that is not 0) named name (NUL-terminated
 * in memory that stays while the table does); rank decides among aliases
 * of an address: 0 GLOBAL, 1 WEAK, 2 other, 3 synthesized (preferred
 * first).  Returns 0, -E2BIG when the module's or the run's budget is
 * spent (the table is then dropped and said), or -ENOMEM (sym-build.c). */
int unwind_symtab_add(struct sym_build *b, uint64_t start, uint64_t size, uint64_t sec_end,
	       const char *name, unsigned rank);
/* Charge len bytes of a block of names a table keeps (the PLT's) to the
 * run's symbol budget: 0, or -E2BIG when they do not fit.  Given back by
 * unwind_symtab_uncharge_names, or by the table that keeps them (sym-build.c). */
int unwind_symtab_charge_names(size_t len);
void unwind_symtab_uncharge_names(size_t len);

/* PLT stubs have no symbol; entry k of .plt.sec (IBT) or of .plt after its
 * header jumps through the k-th .rela.plt relocation: add "func@plt" for
 * each (x86-64 and aarch64, host byte order).  The names go in one malloc'd
 * block, *names of *names_len bytes, charged to the run's symbol budget
 * (the caller frees it and gives them back).  Returns the number added,
 * -E2BIG or -ENOMEM (plt.c). */
long unwind_plt_symbols(const struct elf_image *img, struct sym_build *b, char **names,
		 size_t *names_len);

/* The decompressed .gnu_debugdata of img (MiniDebugInfo, an ELF file),
 * malloc'd in *out.  Returns its size, 0 when there is none, it is corrupt
 * or too large, or stackspy was built without liblzma (minidebuginfo.c). */
size_t unwind_minidebuginfo_read(const struct elf_image *img, unsigned char **out);

/* Name of the function containing vaddr (an ELF virtual address of img),
 * from .symtab, else a separate debug file found by build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), else .dynsym.  STT_FUNC and
 * STT_GNU_IFUNC only; an address past st_size is not covered.  flags are
 * UNWIND_SYM_*: by default the name is demangled (C++/Rust); demangled
 * forms are computed once and cached in the symbol table.  The string is
 * owned by img.  Sets *offset = vaddr - symbol start; NULL if none. */
const char *unwind_elf_image_lookup(struct elf_image *img, uint64_t vaddr,
			     unsigned flags, uint64_t *offset);

/* Sees a separate debug file that matches the image searched for: it is
 * dbg, the only image of the cache *file.  Returns > 0 to end the search
 * with it (*file, copied by value, then belongs to the callee), 0 to try
 * the next candidate (the caller frees *file), or -ENOMEM. */
typedef long elf_debug_take_fn(void *arg, struct elf_cache *file,
			       struct elf_image *dbg);

/* The separate debug files of img, in symtab.c's order: by build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug inside the target's root, then
 * ours), then by .gnu_debuglink (GDB's directories; CRC checked).  Each
 * that exists and matches goes to take(arg, ...) until one is taken.
 * Returns take's positive answer, 0 if none was taken, or -ENOMEM. */
long unwind_elf_debug_file_search(const struct elf_image *img, elf_debug_take_fn *take,
			   void *arg);

/* The functions of a Go binary (1.18 and later) from its .gopclntab, which
 * stripping leaves: names point into img's data.  Returns the number
 * added (0 when there is no such table), -E2BIG or -ENOMEM (gopclntab.c). */
long unwind_gopclntab_symbols(const struct elf_image *img, struct sym_build *b);

/* Demangle C++/Rust names.  Returns a malloc'd string, or NULL if name is
 * not mangled (or demangling is compiled out).  with_params keeps the C++
 * parameter list. */
char *unwind_symbol_demangle(const char *name, bool with_params);

void unwind_symtab_free(struct symtab *s);

/* ---- inputs skipped at a limit (debug-file.c) ----------------------------
 * Debug files and compressed sections come from the target's side: a
 * file over its limit is not read, and said once in the summary
 * (unwind_skipped_next, unwind.h).  The limits are relative to the module
 * the input describes, with a floor for small modules.  What is built from
 * what is read (symbol tables, CFI copies) has budgets of its own, per
 * module and per run: unwind/budget.h. */
#define DEBUG_FILE_MIN_LIMIT  (256ull << 20)  /* a debug file may be this */
#define DEBUG_FILE_RATIO      64              /*   or 64 times its module */
#define MINIDEBUG_MIN_LIMIT   (2ull << 20)    /* .gnu_debugdata decompressed (it holds
						 only the local function symbols: a
						 few KB to a few MB) */
#define MINIDEBUG_RATIO       2               /*   or 2 times its module */
/* Checking a debug file's CRC (a module without a build-id) reads it
 * whole: at most this long. */
#define DEBUG_FILE_CRC_BUDGET_NS (250 * NS_PER_MS)
/* Say that path (a debug file, or the module whose section it is) was not
 * read, and why (printf-style); each path once. */
void unwind_note_skipped(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "12.3 MiB": a size for such a note. */
const char *unwind_size_text(uint64_t bytes, char *buf, size_t len);

#endif
