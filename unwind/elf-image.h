/* unwind/elf-image.h - ELF images: the files behind a target's mappings
 * (mmap'd once per (dev, inode), pooled between targets), in-memory copies
 * (the vdso), their segments and sections, and opening the target's files
 * safely (inside its root, regular files only, guarded against
 * truncation).  Defined in unwind/elf-image.c.
 *
 * Private to unwind/ (and its unit tests).  Images belong to the struct elf_cache
 * that returned them (a target's) until unwind_elf_cache_free.
 */
#ifndef STACKSPY_UNWIND_ELF_IMAGE_H
#define STACKSPY_UNWIND_ELF_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct mapping;

struct elf_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	unsigned flags;           /* PF_R|PF_W|PF_X */
};

struct symtab;
struct cfi_index;

/* One ELF object: a file on disk (mmap'd read-only, whole) or a copy in our
 * memory (the vdso).  Shared by every mapping of the same (dev, inode); a
 * file behind a mapping (unwind_elf_cache_get) is also shared between targets
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
	struct symtab *symtab;    /* built on first lookup (symtab.c) */
	bool symtab_tried;
	struct cfi_index *cfi_index;  /* FDEs of an .eh_frame without a
					 header, sorted (cfi-read.c), built on
					 first lookup */
	bool cfi_index_tried;
	struct cfi_index *cfi_debug_index;  /* FDEs of its .debug_frame,
					       sorted, built on first lookup
					       (engine-dwarf.c) */
	bool cfi_debug_index_tried;
	/* What is built on the image (above) is freed with it by the
	 * function its builder sets here when it builds it (symtab.c:
	 * unwind_symtab_free, cfi-read.c: unwind_cfi_index_free), NULL until then: the
	 * image calls nothing of the files that build on it. */
	void (*free_symtab)(struct symtab *s);
	void (*free_cfi_index)(struct cfi_index *x);
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
 * by the cache until unwind_elf_cache_free; the pool keeps up to
 * ELF_POOL_UNUSED_MAX images no target references, the last released. */
#define ELF_POOL_UNUSED_MAX 32
struct elf_image *unwind_elf_cache_get(struct elf_cache *c, pid_t pid,
				const struct mapping *m, int *err);
/* Open an ELF file by path (core files, --exe). NULL and *err on failure. */
struct elf_image *unwind_elf_cache_open_path(struct elf_cache *c, const char *path,
				      int *err);
/* Wrap a copy of in-memory ELF (the vdso).  Takes ownership of buf
 * (malloc'd).  NULL if it is not ELF. */
struct elf_image *unwind_elf_image_from_memory(struct elf_cache *c, void *buf,
					size_t len, const char *name);
void unwind_elf_cache_free(struct elf_cache *c);
/* Around what an image builds lazily (its symbol table): pooled images
 * are shared by dump's two threads. */
void unwind_elf_image_lock(void);
void unwind_elf_image_unlock(void);

/* Open path (absolute, as the target sees it) read-only inside the root of
 * process pid, resolving every symlink relative to that root (openat2's
 * RESOLVE_IN_ROOT), so that a container's files cannot send us outside it.
 * pid <= 0: path as it is.  Only regular files: see unwind_elf_open_regular.
 * Returns an fd or -errno. */
int unwind_elf_open_in_root(pid_t pid, const char *path);
/* The same, but a symlink as the last component is not followed (-ELOOP):
 * for files the target names for us to read (its perf map), where a link
 * could point at a file of root's or at /proc/kmsg. */
int unwind_elf_open_in_root_nofollow(pid_t pid, const char *path);

/* mmap the file open on fd whole (prot PROT_READ, or with PROT_WRITE for a
 * private writable view), guarded: if the file is truncated while mapped
 * (a container can do that to a library), the SIGBUS of a read is caught
 * and the mapping replaced by zeros, which every reader treats as a file
 * without the data.  Returns the mapping or MAP_FAILED (errno set). */
void *unwind_file_map(int fd, size_t len, int prot);
void unwind_file_unmap(const void *p, size_t len);

/* The pages of img's mapped file that hold [p, p + len) are dropped from
 * our memory (the page cache keeps them: a later read faults one back):
 * for a reader that goes once through a table of hundreds of MiB
 * (symtab.c), which would else stay resident.  Nothing for an image in
 * our memory. */
void unwind_elf_image_release(const struct elf_image *img, const void *p, size_t len);

/* Open a file we are going to read, safely: first with O_PATH (opening a
 * FIFO would wait for ever, opening a device has side effects: a
 * container can create both), then, only if it is a regular file, for
 * reading.  A path under /proc/PID/root/ is resolved inside that root
 * (RESOLVE_IN_ROOT) where the kernel has openat2.  Returns an fd or
 * -errno (-EINVAL: not a regular file). */
int unwind_elf_open_regular(const char *path);

/* The PT_LOAD of img whose file range (from its page) holds file offset
 * off, the first in file order; NULL if none. */
const struct elf_segment *unwind_elf_image_segment_at(const struct elf_image *img,
						      uint64_t off);

/* Load bias of mapping m (whose file is img): runtime = vaddr + bias.
 * Uses the PT_LOAD containing m->offset.  Returns 0 or -ENOENT. */
int unwind_elf_image_bias(const struct elf_image *img, const struct mapping *m,
		   uint64_t *bias);

/* The header of the section called `name` of the ELF at data/size, if it
 * has contents in the file, inside it, and is not compressed.  false if
 * there is none (elf-image.c). */
bool unwind_elf_find_section(const unsigned char *data, size_t size, const char *name,
		      Elf64_Shdr *out);

/* The value and size of the first defined symbol called name of ELF type
 * `type` (STT_OBJECT, STT_FUNC), from .dynsym, else .symtab (a data
 * symbol, which the symbol tables of symtab.c do not keep: CPython's
 * _PyRuntime).  false if there is none (elf-image.c). */
bool unwind_elf_image_symbol(const struct elf_image *img, const char *name, int type,
			     uint64_t *value, uint64_t *size);

#endif
