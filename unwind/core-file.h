/* unwind/core-file.h - the reader of core files: segments, threads
 * (NT_PRSTATUS), mapped files (NT_FILE), auxv, of any class and byte
 * order.  Defined in unwind/core-file.c; unwind/core-target.c makes a
 * target of one.
 *
 * Private to unwind/ (and its unit tests).
 */
#ifndef STACKSPY_UNWIND_CORE_FILE_H
#define STACKSPY_UNWIND_CORE_FILE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
	/* NT_ARM_PAC_MASK ("LINUX", aarch64 with pointer authentication):
	 * the bits of an instruction address that hold its signature. */
	bool has_pac_mask;
	uint64_t pac_insn_mask;
	pid_t pid;                /* pr_pid of NT_PRPSINFO, else the first thread's */
	char comm[17];            /* pr_fname */
	char state;               /* pr_sname, '?' if unknown */
	char **warnings;          /* collected while opening, for the command */
	size_t nwarnings;
};

/* Parse a core image held in memory (not copied: data must outlive c).
 * Returns 0 or -ENOEXEC/-ENOMEM; *why (if not NULL) is then a static
 * phrase such as "not an ELF file" or "program header table outside the
 * file".  On success free with unwind_core_file_free(). */
int unwind_core_file_parse(struct core_file *c, const unsigned char *data, size_t size,
		    const char **why);
/* Open and mmap path, then unwind_core_file_parse.  Returns NULL with *err and
 * *why (NULL when strerror(-*err) says it all). */
struct core_file *unwind_core_file_open(const char *path, int *err, const char **why);
/* Free what unwind_core_file_open allocated, c included. */
void unwind_core_file_free(struct core_file *c);
/* Free what unwind_core_file_parse allocated (not the data, not c itself). */
void unwind_core_file_release(struct core_file *c);
/* Copy len bytes of the dumped memory at addr (only where p_filesz covers
 * them).  Returns 0 or -EFAULT. */
int unwind_core_read(const struct core_file *c, uint64_t addr, void *buf, size_t len);
/* The PT_LOAD segment containing addr (binary search), or NULL. */
const struct core_segment *unwind_core_segment_find(const struct core_file *c,
					     uint64_t addr);
/* Value of auxv entry type (AT_*).  Returns 0 or -ENOENT. */
int unwind_core_auxv(const struct core_file *c, uint64_t type, uint64_t *val);
/* A 16/32/64-bit value or a word (4 or 8 bytes by class) in the core's
 * byte order. */
uint64_t unwind_core_get(const struct core_file *c, const unsigned char *p, size_t size);
/* Bytes in a word of the core's class. */
static inline size_t
core_word_size(const struct core_file *c)
{
	return c->elf_class == ELFCLASS64 ? 8 : 4;
}
/* Is this core for the architecture the fp/cfi engines unwind (the host's)? */
bool unwind_core_file_native(const struct core_file *c);

#endif
