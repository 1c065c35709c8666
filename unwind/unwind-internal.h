/* unwind/unwind-internal.h - private to unwind/: memory map, ELF images,
 * symbol tables, the memory reader, and the engine table. */
#ifndef STACKSPY_UNWIND_INTERNAL_H
#define STACKSPY_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

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

/* One ELF object: a file on disk (mmap'd read-only, whole) or a copy in our
 * memory (the vdso).  Shared by every mapping of the same (dev, inode). */
struct elf_image {
	char *path;               /* as opened (for messages) */
	dev_t dev;
	ino_t ino;
	const unsigned char *data;/* whole file */
	size_t size;
	bool mmapped;             /* data is an mmap (else malloc'd) */
	struct elf_segment *segs; /* PT_LOAD headers */
	size_t nsegs;
	uint64_t eh_frame_hdr_vaddr;  /* PT_GNU_EH_FRAME, 0 if none */
	uint64_t eh_frame_hdr_size;
	unsigned char build_id[64];
	size_t build_id_len;
	struct symtab *symtab;    /* built on first lookup */
	bool symtab_tried;
	struct elf_image *next;   /* cache chain */
};

struct elf_cache {
	struct elf_image *head;
};

/* Find or open the ELF file behind mapping m of process pid.  Opens
 * /proc/PID/root/<path> and checks (dev, inode) against the maps line; if the
 * file was replaced or deleted, falls back to /proc/PID/map_files/START-END.
 * Returns NULL (with *err set to a negative errno) when the file cannot be
 * opened or is not ELF.  The image belongs to the cache. */
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

/* Load bias of mapping m (whose file is img): runtime = vaddr + bias.
 * Uses the PT_LOAD containing m->offset.  Returns 0 or -ENOENT. */
int elf_image_bias(const struct elf_image *img, const struct mapping *m,
		   uint64_t *bias);

/* ---- symbols (symtab.c) ------------------------------------------------- */

/* Name of the function containing vaddr (an ELF virtual address of img),
 * from .symtab, else a separate debug file found by build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), else .dynsym.  STT_FUNC and
 * STT_GNU_IFUNC only; an address past st_size is not covered.  flags are
 * UNWIND_SYM_*: by default the name is demangled (C++/Rust); demangled
 * forms are computed once and cached in the symbol table.  The string is
 * owned by img.  Sets *offset = vaddr - symbol start; NULL if none. */
const char *elf_image_lookup(struct elf_image *img, uint64_t vaddr,
			     unsigned flags, uint64_t *offset);

/* Demangle C++/Rust names.  Returns a malloc'd string, or NULL if name is
 * not mangled (or demangling is compiled out).  with_params keeps the C++
 * parameter list. */
char *symbol_demangle(const char *name, bool with_params);

void symtab_free(struct symtab *s);

/* ---- memory reader (memory.c) ------------------------------------------- */

/* Reads, in order: the stack snapshot, the file behind a read-only
 * file-backed mapping, the vdso copy, process_vm_readv. */
struct memory_reader {
	struct unwind_target *target;
	const struct stack_snapshot *snap;
};

/* Copy len bytes at target address addr into buf.  Returns 0 or -EFAULT. */
int memory_read(struct memory_reader *r, uint64_t addr, void *buf, size_t len);

/* ---- the target (unwind.c) ---------------------------------------------- */

struct cfi_state;

struct unwind_target {
	pid_t pid;
	struct module_map maps;
	struct elf_cache elves;
	struct elf_image *vdso;   /* copy taken at open, or NULL */
	uint64_t vdso_start, vdso_end;
	struct cfi_state *cfi;    /* libunwind address space, per-module tables */
	uint64_t maps_loaded_ns;  /* CLOCK_MONOTONIC of the last reload */
	struct mapping *last_map; /* last lookup's answer: reads come in runs */
	unsigned generation;
};

/* The mapping containing addr with its image and bias resolved (image may be
 * NULL for anonymous memory).  NULL if addr is unmapped. */
struct mapping *unwind_target_mapping(struct unwind_target *t, uint64_t addr);

/* ---- registers (arch-*.c) ----------------------------------------------- */

#define UNWIND_NREGS 17   /* DWARF numbering: x86-64 0..16 (16 = rip) */

struct unwind_regs {
	uint64_t r[UNWIND_NREGS];
	uint32_t valid;           /* bit i: r[i] is known */
};

/* DWARF numbers of the special registers on this host. */
extern const int arch_reg_ip, arch_reg_sp, arch_reg_fp;

/* Raw NT_PRSTATUS to DWARF-numbered registers.  Returns 0 or -EINVAL. */
int arch_regs_from_prstatus(const unsigned char *raw, size_t len,
			    struct unwind_regs *out);

/* ---- engines ------------------------------------------------------------- */

struct unwinder {
	const char *name;
	enum unwind_how first_how;  /* how frames[0] is labelled */
	/* Append frames after frames[0] (filled by the caller from regs, *n
	 * is 1) up to max; regs is the innermost frame's registers and is
	 * consumed.  Returns the stop reason. */
	enum unwind_stop (*walk)(struct unwind_target *t, struct memory_reader *mr,
				 struct unwind_regs *regs, struct unwind_frame *frames,
				 int *n, int max);
};

extern const struct unwinder unwinder_fp;     /* engine-fp.c */
extern const struct unwinder unwinder_cfi;    /* engine-cfi.c */
extern const struct unwinder unwinder_auto;   /* engine-cfi.c: cfi, fp per frame */

/* engine-cfi.c: the libunwind address space and per-module table cache. */
struct cfi_state *cfi_state_new(struct unwind_target *t);
void cfi_state_free(struct cfi_state *c);
/* Forget cached unwind info (the memory map changed). */
void cfi_state_flush(struct cfi_state *c);

/* One frame-pointer step from regs (ip, sp, fp updated).  Returns 0, or the
 * stop reason when the chain ends or is not plausible. */
int fp_step(struct unwind_target *t, struct memory_reader *mr,
	    struct unwind_regs *regs, enum unwind_stop *stop);

#endif
