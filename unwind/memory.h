/* unwind/memory.h - the memory reader every engine reads the target
 * through: the stack snapshot first, then the files behind file-backed
 * mappings, the vdso copy, and process_vm_readv last.  Defined in
 * unwind/memory.c.
 *
 * Private to unwind/ (and its unit tests).
 */
#ifndef STACKSPY_UNWIND_MEMORY_H
#define STACKSPY_UNWIND_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack_snapshot;
struct unwind_target;

/* What a walk read that may differ from one sample to the next: the
 * words it took from the stack snapshot (engine-dwarf.c keeps a walk
 * with its log, and a later snapshot that holds the same values there
 * takes its frames).  Reads served by the files and the vdso are the
 * same while the memory map is; a read of the live process makes the
 * walk unfit to be kept (ok false). */
#define MEMORY_LOG_MAX 256

struct memory_log {
	bool ok;
	size_t n;
	struct memory_log_read {
		uint64_t addr;
		uint64_t value;       /* len bytes, as read (host order) */
		unsigned len;         /* 1 to 8 */
	} r[MEMORY_LOG_MAX];
};

/* Reads, in order: the stack snapshot, the file behind a read-only
 * file-backed mapping, the vdso copy, process_vm_readv. */
struct memory_reader {
	struct unwind_target *target;
	const struct stack_snapshot *snap;
	struct memory_log *log;   /* NULL: reads are not logged */
};

/* Copy len bytes at target address addr into buf.  Returns 0 or -EFAULT. */
int unwind_memory_read(struct memory_reader *r, uint64_t addr, void *buf, size_t len);

#endif
