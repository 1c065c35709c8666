/* unwind/memory.c - where the unwinder's reads are served from.
 *
 * The thread is running again while we unwind, so its live memory is the
 * last resort: the stack comes from the snapshot taken while it was
 * stopped, code and unwind tables from the ELF file mmap'd once, the vdso
 * from the copy taken at open.  This is what makes unwinding cost ~10 us
 * instead of one PTRACE_PEEKDATA per word (DESIGN.md).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ptrace/sample.h"
#include "unwind/maps.h"
#include "unwind/memory.h"
#include "unwind/target.h"

static bool
inside(uint64_t addr, size_t len, uint64_t start, uint64_t size)
{
	return addr >= start && addr - start <= size && len <= size - (addr - start);
}

/* Log the snapshot's bytes [addr, addr + len) that a read took, in
 * words of up to 8 bytes. */
static void
log_snapshot(struct memory_log *log, uint64_t addr, const unsigned char *p, size_t len)
{
	while (len > 0 && log->ok) {
		if (log->n == MEMORY_LOG_MAX) {
			log->ok = false;
			return;
		}
		struct memory_log_read *e = &log->r[log->n++];
		e->addr = addr;
		e->len = len < 8 ? (unsigned)len : 8;
		e->value = 0;
		memcpy(&e->value, p, e->len);
		addr += e->len;
		p += e->len;
		len -= e->len;
	}
}

int
unwind_memory_read(struct memory_reader *r, uint64_t addr, void *buf, size_t len)
{
	const struct stack_snapshot *s = r->snap;
	if (s && s->stack && inside(addr, len, s->stack_start, s->stack_len)) {
		memcpy(buf, s->stack + (addr - s->stack_start), len);
		if (r->log)
			log_snapshot(r->log, addr, buf, len);
		return 0;
	}
	struct unwind_target *t = r->target;
	if (t->vdso && inside(addr, len, t->vdso_start, t->vdso_end - t->vdso_start)) {
		memcpy(buf, t->vdso->data + (addr - t->vdso_start), len);
		return 0;
	}
	/* A core file's dumped memory is what the process had (relocated
	 * GOTs, heap, stacks); the files only fill what it left out. */
	if (t->ops->read_own && t->ops->read_own(t, addr, buf, len) == 0)
		return 0;
	struct mapping *m = unwind_target_mapping(t, addr);
	/* Only read-only mappings: a writable one (.data, .got) may differ
	 * from the file. */
	if (m && m->image && m->image->mmapped && !(m->perms & MAPPING_W) &&
	    inside(addr, len, m->start, m->end - m->start)) {
		uint64_t off = addr - m->start + m->offset;
		if (inside(off, len, 0, m->image->size)) {
			memcpy(buf, m->image->data + off, len);
			return 0;
		}
	}
	/* Code swapped since the stop (unwind_walk): what is there now is
	 * another library's. */
	if (!t->ops->read_live || (addr < t->swapped_end && addr + len > t->swapped_start))
		return -EFAULT;
	/* Live memory (heap, JIT code, a writable mapping) may change. */
	if (r->log)
		r->log->ok = false;
	return t->ops->read_live(t, addr, buf, len) == 0 ? 0 : -EFAULT;
}
