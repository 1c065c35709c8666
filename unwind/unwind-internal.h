/* unwind/unwind-internal.h - private to unwind/: memory map, ELF images,
 * symbol tables, the memory reader, core files, the target object and its
 * lifetime rules, and the engine table.  Register facts are arch/'s. */
#ifndef STACKSPY_UNWIND_INTERNAL_H
#define STACKSPY_UNWIND_INTERNAL_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "arch/arch.h"
#include "ptrace/clock.h"
#include "ptrace/sample.h"
#include "unwind/unwind.h"

/* Call from long loops: every UNWIND_YIELD_EVERY calls, the hook of
 * unwind_set_yield (unwind.c). */
#define UNWIND_YIELD_EVERY 4096
void unwind_yield(void);

/* ---- memory map (maps.c) ------------------------------------------------ */

#define MAPPING_R 0x1
#define MAPPING_W 0x2
#define MAPPING_X 0x4

struct elf_image;

/* One line of /proc/PID/maps. */
struct mapping {
	uint64_t start, end;      /* [start, end) */
	uint64_t offset;          /* file offset of start */
	dev_t dev;                /* makedev(major, minor) of the maps line */
	ino_t inode;
	unsigned perms;           /* MAPPING_R|W|X */
	char *path;               /* NULL for anonymous; "[vdso]", "[stack]"... */
	bool deleted;             /* path ended in " (deleted)" (stripped here) */
	/* Filled lazily by unwind.c: */
	struct elf_image *image;  /* NULL if not an ELF file or not openable */
	bool image_tried;
	bool bias_known;
	uint64_t bias;            /* runtime address = ELF vaddr + bias */
	uint64_t checked;         /* the epoch it was last found still the
				     same file (unwind_target_maps_current) */
};

struct module_map {
	struct mapping *v;        /* sorted by start, non-overlapping */
	size_t n;
};

/* Parse /proc/PID/maps.  Returns 0 or -errno (-ESRCH if the process is gone). */
int module_map_read(pid_t pid, struct module_map *out);
/* Parse maps text (for tests and core files). Returns 0 or -EINVAL. */
int module_map_parse(const char *text, struct module_map *out);
void module_map_free(struct module_map *m);
/* Binary search; NULL if addr is in no mapping. */
struct mapping *module_map_find(const struct module_map *m, uint64_t addr);

/* ---- ELF images (elf-image.c) ------------------------------------------- */

struct elf_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	unsigned flags;           /* PF_R|PF_W|PF_X */
};

struct symtab;
struct cfi_index;

/* One ELF object: a file on disk (mmap'd read-only, whole) or a copy in our
 * memory (the vdso).  Shared by every mapping of the same (dev, inode); a
 * file behind a mapping (elf_cache_get) is also shared between targets
 * through the image pool (elf-image.c). */
struct elf_image {
	char *path;               /* as opened (for messages) */
	dev_t dev;
	ino_t ino;
	const unsigned char *data;/* whole file */
	size_t size;
	bool mmapped;             /* data is an mmap (else malloc'd) */
	struct elf_segment *segs; /* PT_LOAD headers */
	size_t nsegs;
	uint64_t entry;           /* e_entry: where the process starts (an
				     executable's _start), 0 if none */
	uint64_t eh_frame_hdr_vaddr;  /* PT_GNU_EH_FRAME, 0 if none */
	uint64_t eh_frame_hdr_size;
	unsigned char build_id[64];
	size_t build_id_len;
	struct symtab *symtab;    /* built on first lookup */
	bool symtab_tried;
	struct cfi_index *cfi_index;  /* FDEs of an .eh_frame without a
					 header, sorted (cfi-read.c), built on
					 first lookup */
	bool cfi_index_tried;
	struct elf_image *next;   /* cache chain (images the cache owns) */
	/* Pooled images (pool.* in elf-image.c, under its lock): */
	unsigned refs;            /* targets' caches holding it */
	uint64_t unused_since;    /* pool sequence when refs fell to 0 */
	off_t st_size;            /* the file as it was opened: a file */
	struct timespec st_mtim;  /* rewritten in place is not the same */
	struct elf_image *pool_next;
};

/* A target's images: those it owns (head: the vdso copy, core files'
 * images, separate debug files) and references to pooled ones (files
 * behind mappings, shared with other targets: a build starts the same
 * compiler hundreds of times, and its symbol table is read once). */
struct elf_cache {
	struct elf_image *head;
	struct elf_image **shared;
	size_t nshared, shared_cap;
};

/* Find or open the ELF file behind mapping m of process pid.  Opens
 * /proc/PID/root/<path> and checks (dev, inode) against the maps line; if the
 * file was replaced or deleted, falls back to /proc/PID/map_files/START-END.
 * Returns NULL (with *err set to a negative errno) when the file cannot be
 * opened or is not ELF.  The image comes from the pool when another target
 * opened the same file (same dev, inode, size and mtime) and is referenced
 * by the cache until elf_cache_free; the pool keeps up to
 * ELF_POOL_UNUSED_MAX images no target references, the last released. */
#define ELF_POOL_UNUSED_MAX 32
struct elf_image *elf_cache_get(struct elf_cache *c, pid_t pid,
				const struct mapping *m, int *err);
/* Open an ELF file by path (core files, --exe). NULL and *err on failure. */
struct elf_image *elf_cache_open_path(struct elf_cache *c, const char *path,
				      int *err);
/* Wrap a copy of in-memory ELF (the vdso).  Takes ownership of buf
 * (malloc'd).  NULL if it is not ELF. */
struct elf_image *elf_image_from_memory(struct elf_cache *c, void *buf,
					size_t len, const char *name);
void elf_cache_free(struct elf_cache *c);
/* Around what an image builds lazily (its symbol table): pooled images
 * are shared by dump's two threads. */
void elf_image_lock(void);
void elf_image_unlock(void);

/* Open path (absolute, as the target sees it) read-only inside the root of
 * process pid, resolving every symlink relative to that root (openat2's
 * RESOLVE_IN_ROOT), so that a container's files cannot send us outside it.
 * pid <= 0: path as it is.  Only regular files: see elf_open_regular.
 * Returns an fd or -errno. */
int elf_open_in_root(pid_t pid, const char *path);
/* The same, but a symlink as the last component is not followed (-ELOOP):
 * for files the target names for us to read (its perf map), where a link
 * could point at a file of root's or at /proc/kmsg. */
int elf_open_in_root_nofollow(pid_t pid, const char *path);

/* mmap the file open on fd whole (prot PROT_READ, or with PROT_WRITE for a
 * private writable view), guarded: if the file is truncated while mapped
 * (a container can do that to a library), the SIGBUS of a read is caught
 * and the mapping replaced by zeros, which every reader treats as a file
 * without the data.  Returns the mapping or MAP_FAILED (errno set). */
void *file_map(int fd, size_t len, int prot);
void file_unmap(const void *p, size_t len);

/* Open a file we are going to read, safely: first with O_PATH (opening a
 * FIFO would wait for ever, opening a device has side effects: a
 * container can create both), then, only if it is a regular file, for
 * reading.  A path under /proc/PID/root/ is resolved inside that root
 * (RESOLVE_IN_ROOT) where the kernel has openat2.  Returns an fd or
 * -errno (-EINVAL: not a regular file). */
int elf_open_regular(const char *path);

/* Load bias of mapping m (whose file is img): runtime = vaddr + bias.
 * Uses the PT_LOAD containing m->offset.  Returns 0 or -ENOENT. */
int elf_image_bias(const struct elf_image *img, const struct mapping *m,
		   uint64_t *bias);

/* In v, n elements of stride bytes sorted by the uint64_t start at byte
 * offset start_off, how many start at or below addr (so the candidate that
 * may hold addr is element count - 1): the one binary search of every
 * table of address ranges (maps, symbols, perf maps, core segments). */
size_t spans_upto(const void *v, size_t n, size_t stride, size_t start_off, uint64_t addr);

/* Do [off, off + len) lie inside size bytes?  Overflow-safe: off and len
 * come from files we do not trust. */
static inline bool
span_inside(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* The header of the section called `name` of the ELF at data/size, if it
 * has contents in the file, inside it, and is not compressed.  false if
 * there is none (elf-image.c). */
bool elf_find_section(const unsigned char *data, size_t size, const char *name,
		      Elf64_Shdr *out);

/* ---- symbols (symtab.c, debug-file.c, minidebuginfo.c, plt.c,
 *      demangle.c, perf-map.c) ----------------------------------------------- */

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

struct perf_map;

/* Name of JIT code at addr from the target's /tmp/perf-PID.map (perf's
 * format, PID as the target sees itself), read inside its root on first
 * use, then only what was appended since (read whole again when the file
 * was replaced, shrank or was rewritten); a later line replaces the older
 * entries it overlaps.  Only whole lines count (a JIT writes them whole).
 * *pm is created here, with the caps of unwind.h.  NULL when no line
 * covers addr.  The string belongs to *pm and stays valid until
 * perf_map_free(). */
const char *perf_map_lookup(struct perf_map **pm, pid_t pid, uint64_t addr,
			    uint64_t *offset);
/* The same from what was read already, without looking at the file. */
const char *perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *offset);
/* Other caps than unwind.h's, and read_max: the bytes read at one lookup
 * at most (default 16 MiB; the rest at the next ones), for tests; *pm is
 * created here. */
void perf_map_set_limits(struct perf_map **pm, size_t max_entries,
			 size_t max_name_bytes, size_t read_max);

struct perf_map_usage {
	size_t entries;           /* kept now */
	size_t name_bytes;        /* distinct names kept */
	uint64_t dropped;         /* lines left out at the caps */
	const char *refused;      /* why the file there now was not read (a
				     static string), NULL: read or absent */
	long refused_uid;         /* the owner of the file refused */
};
/* pm may be NULL (all zero). */
void perf_map_usage(const struct perf_map *pm, struct perf_map_usage *u);
void perf_map_free(struct perf_map *pm);

/* ---- memory reader (memory.c) ------------------------------------------- */

/* Reads, in order: the stack snapshot, the file behind a read-only
 * file-backed mapping, the vdso copy, process_vm_readv. */
struct memory_reader {
	struct unwind_target *target;
	const struct stack_snapshot *snap;
};

/* Copy len bytes at target address addr into buf.  Returns 0 or -EFAULT. */
int memory_read(struct memory_reader *r, uint64_t addr, void *buf, size_t len);

/* ---- core files (core-file.c, core-target.c) ------------------------------ */

/* The reader knows no architecture: it parses ELFCLASS32 and ELFCLASS64
 * cores of either byte order and hands out each thread's pr_reg bytes as
 * they are in the file (the core's byte order); arch/ interprets them
 * (arch_regs_from_prstatus with the table of the core's e_machine). */

struct core_segment {             /* one PT_LOAD of the core */
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;  /* filesz clamped to the file */
	unsigned flags;           /* PF_R|PF_W|PF_X */
};

struct core_thread {              /* one NT_PRSTATUS */
	pid_t tid;                /* pr_pid */
	int cursig;               /* pr_cursig */
	const unsigned char *regs;/* pr_reg, inside the core's data */
	size_t regs_len;
};

struct core_file_map {            /* one NT_FILE entry */
	uint64_t start, end;      /* [start, end) */
	uint64_t offset;          /* file offset in bytes (pages * page size) */
	char *path;               /* malloc'd */
};

struct core_file {
	char *path;               /* as given (messages) */
	const unsigned char *data;
	size_t size;
	bool mmapped;             /* data is our mmap of the file */
	unsigned machine;         /* e_machine: EM_X86_64, EM_MIPS... */
	int elf_class;            /* ELFCLASS32 or ELFCLASS64 */
	bool big_endian;
	struct core_segment *segs;/* sorted by vaddr, overlaps dropped */
	size_t nsegs;
	struct core_thread *threads;  /* in note order (the dumping thread first) */
	size_t nthreads, threads_cap;
	struct core_file_map *files;  /* NT_FILE, sorted, overlaps dropped */
	size_t nfiles;
	bool has_nt_file;
	const unsigned char *auxv;/* NT_AUXV descriptor, or NULL */
	size_t auxv_len;
	bool has_prpsinfo;
	pid_t pid;                /* pr_pid of NT_PRPSINFO, else the first thread's */
	char comm[17];            /* pr_fname */
	char state;               /* pr_sname, '?' if unknown */
	char **warnings;          /* collected while opening, for the command */
	size_t nwarnings;
};

/* Parse a core image held in memory (not copied: data must outlive c).
 * Returns 0 or -ENOEXEC/-ENOMEM; *why (if not NULL) is then a static
 * phrase such as "not an ELF file" or "program header table outside the
 * file".  On success free with core_file_free(). */
int core_file_parse(struct core_file *c, const unsigned char *data, size_t size,
		    const char **why);
/* Open and mmap path, then core_file_parse.  Returns NULL with *err and
 * *why (NULL when strerror(-*err) says it all). */
struct core_file *core_file_open(const char *path, int *err, const char **why);
/* Free what core_file_open allocated, c included. */
void core_file_free(struct core_file *c);
/* Free what core_file_parse allocated (not the data, not c itself). */
void core_file_release(struct core_file *c);
/* Copy len bytes of the dumped memory at addr (only where p_filesz covers
 * them).  Returns 0 or -EFAULT. */
int core_read(const struct core_file *c, uint64_t addr, void *buf, size_t len);
/* The PT_LOAD segment containing addr (binary search), or NULL. */
const struct core_segment *core_segment_find(const struct core_file *c,
					     uint64_t addr);
/* Value of auxv entry type (AT_*).  Returns 0 or -ENOENT. */
int core_auxv(const struct core_file *c, uint64_t type, uint64_t *val);
/* A 16/32/64-bit value or a word (4 or 8 bytes by class) in the core's
 * byte order. */
uint64_t core_get(const struct core_file *c, const unsigned char *p, size_t size);
/* Bytes in a word of the core's class. */
static inline size_t
core_word_size(const struct core_file *c)
{
	return c->elf_class == ELFCLASS64 ? 8 : 4;
}
/* Is this core for the architecture the fp/cfi engines unwind (the host's)? */
bool core_file_native(const struct core_file *c);

/* ---- the target (target.c) ---------------------------------------------- */

/* Who owns what (the public side is in unwind.h):
 *
 * - The target owns its memory map (maps), the ELF images (elves, which
 *   outlive any map: a mapping's image pointer stays valid until
 *   unwind_target_free), the vdso copy, the perf map, the DWARF handles and
 *   the interned module names.
 * - A struct mapping (from unwind_target_mapping or module_map_find on
 *   t->maps) is an element of the current map array.  A reload (a lookup
 *   that misses, at most ten times a second, or unwind_target_reload_maps)
 *   replaces that array; while a public call is running (t->busy > 0) the
 *   old array is only retired and is freed when the outermost public call
 *   returns.  So a mapping pointer is valid until the public call that
 *   obtained it returns, and never beyond: keep values, not the pointer,
 *   across calls.  Every public entry point that can reach
 *   unwind_target_mapping brackets its work with target_enter/leave.
 */

/* The engines' per-target states (struct unwinder's slot). */
enum unwind_state_slot {
	UNWIND_STATE_CFI,         /* engine-cfi.c: cfi and auto */
	UNWIND_STATE_SLOTS,
};
struct name_pool;

struct unwind_target {
	pid_t pid;
	struct module_map maps;
	struct module_map *retired;  /* replaced while busy, freed at leave */
	size_t nretired, retired_cap;
	unsigned busy;            /* depth of public calls running on t */
	struct elf_cache elves;
	struct elf_image *vdso;   /* copy taken at open, or NULL */
	uint64_t vdso_start, vdso_end;
	void *state[UNWIND_STATE_SLOTS];  /* the engines' own (struct unwinder's
				     init/flush/fini): cfi's libunwind address
				     space and per-module tables */
	uint64_t maps_loaded_ns;  /* CLOCK_MONOTONIC of the last reload */
	bool map_files_denied;    /* /proc/PID/map_files cannot be read */
	struct mapping *last_map; /* last lookup's answer: reads come in runs */
	struct perf_map *perf_map; /* /tmp/perf-PID.map, loaded on first use */
	uint64_t perf_map_miss_ns; /* when it last named nothing, or 0 */
	unsigned generation;      /* bumped by every maps reload */
	struct core_file *core;   /* core-file target (pid 0), else NULL */
	const struct arch *arch;  /* NULL: from core, else arch_host() */
	struct source_cache *source;  /* DWARF per image (source.c), or NULL */
	struct name_pool *names;  /* module paths handed out (symbolize.c) */
	struct unwind_dropped dropped;  /* perf_map_lines is perf_map's */
};

/* A public call starts / ends on t: see "Who owns what" above. */
void target_enter(struct unwind_target *t);
void target_leave(struct unwind_target *t);

/* The mapping containing addr with its image and bias resolved (image may be
 * NULL for anonymous memory).  NULL if addr is unmapped.  Valid until the
 * public call running on t returns. */
struct mapping *unwind_target_mapping(struct unwind_target *t, uint64_t addr);

/* A copy of s that lives as long as t (module names outlive map reloads).
 * NULL on allocation failure or past UNWIND_MAX_MODULE_NAME_BYTES (counted
 * in t->dropped.module_names). */
const char *target_intern(struct unwind_target *t, const char *s);

/* A set of strings, created on first use in *p: the pooled copy of s,
 * added if it is new and the strings' sizes stay within max_bytes.  NULL
 * when out of memory or over max_bytes.  The copies live until
 * name_pool_free (symbolize.c). */
const char *name_pool_intern(struct name_pool **p, const char *s, size_t max_bytes);
/* The sizes of the strings in p (0 for NULL). */
size_t name_pool_bytes(const struct name_pool *p);
void name_pool_free(struct name_pool *p);

/* ---- source positions (source.c) ----------------------------------------- */

struct source_cache;

#ifdef HAVE_LIBDW
/* Close the DWARF handles of unwind_source(); before the images go. */
void source_cache_free(struct source_cache *c);
#else
static inline void source_cache_free(struct source_cache *c) { (void)c; }
#endif

/* ---- the target's architecture (target.c) ------------------------------- */

/* The arch/ table of the target: from e_machine/EI_CLASS/EI_DATA for a
 * core file (what lets a MIPS core be unwound on an x86-64 host), else the
 * host's.  NULL when stackspy has no table for it: every engine is then
 * unavailable, with ARCH_UNSUPPORTED_REASON. */
const struct arch *unwind_target_arch(struct unwind_target *t);

/* ---- engines ------------------------------------------------------------- */

struct unwinder {
	enum unwind_how first_how;  /* how frames[0] is labelled */
	/* Append frames after frames[0] (filled by the caller from regs, *n
	 * is 1) up to max; regs is the innermost frame's registers and is
	 * consumed.  Returns the stop reason. */
	enum unwind_stop (*walk)(struct unwind_target *t, struct memory_reader *mr,
				 struct arch_regs *regs, struct unwind_frame *frames,
				 int *n, int max);
	/* The engine's own state for a target, in t->state[slot] (strace's
	 * unwind_tcb_init/fin): made by init when the target is opened (NULL
	 * init: the engine keeps none), emptied by flush when its memory map
	 * is read again, freed by fini with the target.  Engines that share
	 * one state (cfi and auto) name the same slot; unwind_state_owners
	 * says whose hooks run. */
	enum unwind_state_slot slot;
	void *(*init)(struct unwind_target *t);
	void (*flush)(void *state);
	void (*fini)(void *state);
};

/* The unwinder whose hooks make and free each slot's state (unwind.c). */
extern const struct unwinder *const unwind_state_owners[UNWIND_STATE_SLOTS];
/* target.c: every engine's state of t made (after its map is read),
 * flushed, freed; the target's owner (target.c, core-target.c) calls
 * these, never an engine's own functions. */
void unwind_target_state_init(struct unwind_target *t);
void unwind_target_state_flush(struct unwind_target *t);
void unwind_target_state_fini(struct unwind_target *t);

extern const struct unwinder unwinder_fp;     /* engine-fp.c */
extern const struct unwinder unwinder_cfi;    /* engine-cfi.c */
extern const struct unwinder unwinder_auto;   /* engine-cfi.c: cfi, fp per frame */
extern const struct unwinder unwinder_mips;   /* engine-mips.c */

/* engine-mips.c: one step of the MIPS prologue-analysis unwinder, pure
 * code over callbacks so tests/unit-mips.c runs it on instruction arrays. */
struct mips_env {
	const struct arch *arch;
	void *ctx;
	/* Read len bytes at addr.  0 or -EFAULT. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	/* Start (and name, may be NULL) of the function containing addr, from
	 * the symbol table.  0, or -ENOENT when no symbol covers addr. */
	int (*func)(void *ctx, uint64_t addr, uint64_t *start, const char **name);
	/* [lo, hi) of the executable mapping containing addr.  0 or -ENOENT. */
	int (*code)(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi);
	/* [lo, hi) of the stack mapping containing addr.  0 or -ENOENT. */
	int (*stack)(void *ctx, uint64_t addr, uint64_t *lo, uint64_t *hi);
	/* Is the function starting at start (holding pc) where a stack
	 * begins: the program's entry point (ELF e_entry), or code whose
	 * CFI says the return address is undefined (glibc's thread start)?
	 * NULL: only the names __start, _start, __thread_start say so. */
	bool (*outermost)(void *ctx, uint64_t pc, uint64_t start);
};

/* Unwind one frame: regs (r0..r31 and the pc in slot env->arch->reg_ip;
 * the valid bits say which are known) become the caller's.  Returns 0, or -1 with *stop set.  Sets
 * *signal when the frame was a sigreturn trampoline (the caller's pc is
 * then exact, not a return address). */
int mips_step(const struct mips_env *env, struct arch_regs *regs,
	      bool *signal, enum unwind_stop *stop);

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

/* ---- call frame information (cfi-read.c) -------------------------------- */

/* Pointer encodings (DW_EH_PE_*) and the call frame instructions read
 * here (DW_CFA_*); our own names: elfutils' <dwarf.h> has the DWARF ones. */
#define CFI_PE_absptr   0x00
#define CFI_PE_uleb128  0x01
#define CFI_PE_udata2   0x02
#define CFI_PE_udata4   0x03
#define CFI_PE_udata8   0x04
#define CFI_PE_sleb128  0x09
#define CFI_PE_sdata2   0x0a
#define CFI_PE_sdata4   0x0b
#define CFI_PE_sdata8   0x0c
#define CFI_PE_pcrel    0x10
#define CFI_PE_datarel  0x30
#define CFI_PE_omit     0xff
#define CFI_OP_nop              0x00
#define CFI_OP_offset_extended  0x05
#define CFI_OP_undefined        0x07
#define CFI_OP_same_value       0x08
#define CFI_OP_register         0x09
#define CFI_OP_def_cfa          0x0c
#define CFI_OP_def_cfa_register 0x0d
#define CFI_OP_def_cfa_offset   0x0e
#define CFI_OP_offset           0x80   /* high two bits; the register in the low six */

/* A section of CIEs and FDEs: .eh_frame (eh) or .debug_frame. */
struct cfi_section {
	const unsigned char *p;
	size_t len;
	uint64_t vaddr;           /* where it is mapped (sh_addr): .eh_frame's
				     pc-relative pointers count from there */
	bool eh;
	bool be;                  /* big-endian */
	unsigned addr_size;       /* 4 or 8 */
	uint64_t datarel;         /* base of datarel pointers (.eh_frame_hdr), 0:
				     none taken */
};

/* One entry of a section: its body (after the id) is [body, end). */
struct cfi_entry {
	size_t off;               /* of its length field in the section */
	const unsigned char *body, *end;
	uint64_t body_at;         /* the body's vaddr */
	bool is_cie;
	uint64_t cie_off;         /* an FDE's CIE, offset in the section
				     (UINT64_MAX: the pointer is bad) */
};

struct cfi_cie {
	unsigned version;
	const unsigned char *fields, *fields_end;  /* code and data alignment,
						      return address column,
						      as written */
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_column;
	unsigned fde_enc;         /* CFI_PE_*: its FDEs' addresses */
	bool aug_data;            /* its FDEs have augmentation data ('z') */
	bool signal;              /* 'S': a signal frame's */
	const unsigned char *ins, *end;  /* initial instructions */
};

struct cfi_fde {
	uint64_t start, range;    /* the code it covers (ELF vaddr) */
	const unsigned char *ins, *end;  /* its instructions */
	struct cfi_cie cie;       /* cfi_find: its CIE */
};

/* .eh_frame_hdr's search table, as linkers write it (datarel sdata4 pairs
 * of (start, FDE)). */
struct cfi_hdr {
	uint64_t hdr_vaddr, eh_frame_vaddr, table_vaddr, count;
	const unsigned char *table;
	bool be;
};

/* Bytes of the LEB128 number at p (0: it runs past end). */
size_t cfi_leb_len(const unsigned char *p, const unsigned char *end);
/* Decode the value encoded as enc at p (before end); at: p's vaddr, for
 * pc-relative values; relative: apply the pc- or data-relative part (not
 * for an FDE's range).  The bytes read, 0 when it cannot be read. */
size_t cfi_read_encoded(const struct cfi_section *s, const unsigned char *p,
			const unsigned char *end, unsigned enc, uint64_t at, bool relative,
			uint64_t *val);
/* The entry at *off into *e, *off moved past it: 1, or 0 at the end (a
 * terminator, or a length that does not fit). */
int cfi_next_entry(const struct cfi_section *s, size_t *off, struct cfi_entry *e);
/* A CIE's fields (versions 1 and 3, and 4 in .debug_frame; .eh_frame's
 * augmentations z, R, L, P, S, B, G).  false if it cannot be read. */
bool cfi_cie_parse(const struct cfi_section *s, const struct cfi_entry *e, struct cfi_cie *c);
/* An FDE of CIE c: its code range and instructions. */
bool cfi_fde_parse(const struct cfi_section *s, const struct cfi_entry *e,
		   const struct cfi_cie *c, struct cfi_fde *f);
/* img's section `name` (.eh_frame or .debug_frame), decompressed into
 * *owned (the caller frees it) when compressed.  0, -ENOENT or -errno. */
int cfi_section_get(const struct elf_image *img, const char *name, struct cfi_section *out,
		    unsigned char **owned);
/* len bytes of img at ELF vaddr (*avail: how many there are from there
 * in its segment), or NULL. */
const unsigned char *cfi_image_at(const struct elf_image *img, uint64_t vaddr, size_t len,
				  size_t *avail);
/* img's .eh_frame_hdr, if it has a table stackspy takes. */
bool cfi_hdr_read(const struct elf_image *img, struct cfi_hdr *h);
/* The FDE covering vaddr and its CIE: through .eh_frame_hdr, else through
 * a table of .eh_frame built once per image.  0 or -ENOENT. */
int cfi_find(struct elf_image *img, uint64_t vaddr, struct cfi_fde *out);
/* Does f say, before its first instruction that advances the location,
 * that the return address is undefined (the outermost frame: glibc's
 * _start and clone mark theirs so)? */
bool cfi_fde_ra_undefined(const struct cfi_fde *f);
void cfi_index_free(struct cfi_index *x);

/* debug-frame.c: the .debug_frame of a module (of its file, else of its
 * separate debug file; compressed or not) rewritten as .eh_frame CIEs and
 * FDEs, followed by a sorted table in .eh_frame_hdr's format, for
 * libunwind's remote API (UNW_INFO_FORMAT_REMOTE_TABLE). */
struct debug_frame {
	unsigned char *buf;       /* the rewrite, served at `base` */
	size_t len;
	uint64_t table_off;       /* the (int32 start, int32 FDE) pairs */
	size_t count;             /* pairs */
};

/* Build it for a module loaded with bias and served at base (a multiple of
 * 8, within 2 GiB below the module's code: the table's entries are 32-bit
 * offsets from it).  Returns 0, -ENOENT when there is no .debug_frame with
 * an FDE for the module, -ENOMEM or -EFBIG. */
int debug_frame_build(const struct elf_image *img, uint64_t bias, uint64_t base,
		      struct debug_frame *out);
/* The same from the module's .eh_frame, for a module without a usable
 * .eh_frame_hdr (static links: GNU ld writes none unless asked; musl-gcc).
 * Returns 0, -ENOENT when there is no .eh_frame with an FDE, or -errno. */
int eh_frame_build(const struct elf_image *img, uint64_t bias, uint64_t base,
		   struct debug_frame *out);
void debug_frame_free(struct debug_frame *df);


/* One frame-pointer step from regs (ip, sp, fp of the target's arch/ table
 * updated).  Returns 0, 1 when the frame at regs was the signal trampoline
 * (the new frame was interrupted: every register restored, its ip
 * exact), or -1 with the stop reason when the chain ends or is not
 * plausible. */
int fp_step(struct unwind_target *t, struct memory_reader *mr,
	    struct arch_regs *regs, enum unwind_stop *stop);
/* engine-x86.c: one step of x86-64 code without CFI, from regs (ip, sp,
 * rbp updated).  x86_heur_step: a pc outside executable memory (exact:
 * frames[0] or an interrupted frame) returns to [sp]; an epilogue or the
 * prologue decoded from the function's symbol gives the frame.  *how says
 * which.  x86_scan_step: the first return address up the stack.  Both
 * return 1 when they stepped, 0 when they cannot (other architectures
 * too); every return address they take is in executable memory right
 * after a call. */
int x86_heur_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		  bool exact, enum unwind_how *how, bool *no_symbol);
/* Is ra a return address: in executable memory, right after a call?
 * (true on other architectures: not checked there.)  *no_symbol above:
 * no symbol gave the pc's function (its code may keep no frame pointer). */
bool x86_plausible_ra(struct unwind_target *t, struct memory_reader *mr, uint64_t ra);
int x86_scan_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs);

/* A pc outside executable memory (frames[0], or a frame a signal
 * interrupted: exact) on an architecture with a link register and calls
 * it knows (aarch64): the call went through a bad pointer, and the caller
 * goes on at the link register, if the instruction before it is a call.
 * Returns 1 when it stepped (only the pc changes), else 0. */
int lr_bad_pc_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		   bool exact);

/* The signal-trampoline part of fp_step alone (arch->sigtramp): 1 when
 * the frame at regs is the trampoline and regs now hold the interrupted
 * registers, 0 when it is not the trampoline, -1 when it is but its
 * sigframe is not as expected. */
int fp_sigtramp_step(struct unwind_target *t, struct memory_reader *mr,
		     struct arch_regs *regs);

#endif
