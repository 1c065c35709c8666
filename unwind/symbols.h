/* unwind/symbols.h - the names of code: symbol tables (.symtab,
 * .dynsym, PLT stubs, Go's .gopclntab), separate debug files and
 * MiniDebugInfo, demangling, and the inputs skipped at a size limit.
 * Defined in unwind/symtab.c, unwind/debug-file.c, unwind/minidebuginfo.c,
 * unwind/plt.c, unwind/gopclntab.c and unwind/demangle.c.
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

/* Build-time form of a symbol: the fields that decide among aliases and
 * bound size-0 symbols. */
struct raw_sym {
	uint64_t start, size;
	uint64_t sec_end;         /* end of its section, 0 if unknown */
	const char *name;
	unsigned rank;            /* 0 GLOBAL, 1 WEAK, 2 other, 3 synthesized */
	unsigned underscores;
};

/* One more entry at the end of *raw (n used, cap allocated), or NULL when
 * out of memory (symtab.c). */
struct raw_sym *raw_sym_append(struct raw_sym **raw, size_t *n, size_t *cap);

/* PLT stubs have no symbol; entry k of .plt.sec (IBT) or of .plt after its
 * header jumps through the k-th .rela.plt relocation: add "func@plt" for
 * each (x86-64 and aarch64, host byte order).  The names go in one malloc'd
 * block, *names (the caller frees it).  Returns the number added, or
 * -ENOMEM (plt.c). */
long plt_symbols(const struct elf_image *img, struct raw_sym **raw, size_t *n,
		 size_t *cap, char **names);

/* The decompressed .gnu_debugdata of img (MiniDebugInfo, an ELF file),
 * malloc'd in *out.  Returns its size, 0 when there is none, it is corrupt
 * or too large, or stackspy was built without liblzma (minidebuginfo.c). */
size_t minidebuginfo_read(const struct elf_image *img, unsigned char **out);

/* Name of the function containing vaddr (an ELF virtual address of img),
 * from .symtab, else a separate debug file found by build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), else .dynsym.  STT_FUNC and
 * STT_GNU_IFUNC only; an address past st_size is not covered.  flags are
 * UNWIND_SYM_*: by default the name is demangled (C++/Rust); demangled
 * forms are computed once and cached in the symbol table.  The string is
 * owned by img.  Sets *offset = vaddr - symbol start; NULL if none. */
const char *elf_image_lookup(struct elf_image *img, uint64_t vaddr,
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
long elf_debug_file_search(const struct elf_image *img, elf_debug_take_fn *take,
			   void *arg);

/* The functions of a Go binary (1.18 and later) from its .gopclntab, which
 * stripping leaves: names point into img's data.  Returns the number
 * added (0 when there is no such table), or -ENOMEM (gopclntab.c). */
long gopclntab_symbols(const struct elf_image *img, struct raw_sym **raw,
		       size_t *n, size_t *cap);

/* Demangle C++/Rust names.  Returns a malloc'd string, or NULL if name is
 * not mangled (or demangling is compiled out).  with_params keeps the C++
 * parameter list. */
char *symbol_demangle(const char *name, bool with_params);

void symtab_free(struct symtab *s);

/* ---- inputs skipped at a limit (debug-file.c) ----------------------------
 * Debug files and compressed sections come from the target's side: a
 * file over its limit is not read, and said once in the summary
 * (unwind_skipped_next, unwind.h).  The limits are relative to the module
 * the input describes, with a floor for small modules. */
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
