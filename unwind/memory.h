/* unwind/memory.h - the memory reader every engine reads the target
 * through: the stack snapshot first, then the files behind file-backed
 * mappings, the vdso copy, and process_vm_readv last.  Defined in
 * unwind/memory.c.
 *
 * Private to unwind/ (and its unit tests).
 */
#ifndef STACKSPY_UNWIND_MEMORY_H
#define STACKSPY_UNWIND_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct stack_snapshot;
struct unwind_target;

/* Reads, in order: the stack snapshot, the file behind a read-only
 * file-backed mapping, the vdso copy, process_vm_readv. */
struct memory_reader {
	struct unwind_target *target;
	const struct stack_snapshot *snap;
};

/* Copy len bytes at target address addr into buf.  Returns 0 or -EFAULT. */
int memory_read(struct memory_reader *r, uint64_t addr, void *buf, size_t len);

#endif
