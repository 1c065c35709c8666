/* unwind/target.c - the target object as the files below its owner use
 * it: its memory map and the mappings' images, reloads of the map and
 * the lifetime rules of what they hand out (unwind/target.h, "Who owns
 * what"), and the target's architecture.  The engines, memory.c,
 * symbolize.c and source.c call it; it calls none of them (a reload
 * flushes the engines' states through the owners target-open.c recorded
 * in the target).  Opening and freeing a target, which frees what those
 * built, is target-open.c's. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "base/base.h"
#include "ptrace/clock.h"
#include "ptrace/sample.h"
#include "unwind/elf-image.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

void
unwind_target_enter(struct unwind_target *t)
{
	t->busy++;
}

void
unwind_target_leave(struct unwind_target *t)
{
	if (--t->busy > 0)
		return;
	/* The safe point: no mapping pointer is held any more. */
	for (size_t i = 0; i < t->nretired; i++)
		unwind_module_map_free(&t->retired[i]);
	t->nretired = 0;
}

/* Put the current map aside until unwind_target_leave.  Returns 0 or -ENOMEM. */
static int
retire_maps(struct unwind_target *t)
{
	if (BASE_GROW(t->retired, t->retired_cap, t->nretired + 1, 4) < 0)
		return -ENOMEM;
	t->retired[t->nretired++] = t->maps;
	return 0;
}

/* Remember the executable file mappings of map old that are not in map
 * fresh (same start, file and offset): a library unloaded, perhaps to
 * have another loaded at its address (unwind_target_code_at_stop). */
static void
remember_past(struct unwind_target *t, const struct module_map *old, const struct module_map *fresh)
{
	for (size_t i = 0; i < old->n; i++) {
		const struct mapping *m = &old->v[i];
		if (!(m->perms & MAPPING_X) || !m->image || !m->image->mmapped || !m->bias_known ||
		    !m->path)
			continue;
		const struct mapping *f = unwind_module_map_find(fresh, m->start);
		if (f && f->start == m->start && f->inode == m->inode && f->dev == m->dev &&
		    f->offset == m->offset)
			continue;
		const char *path = unwind_name_pool_intern(&t->names, m->path,
							   UNWIND_MAX_MODULE_NAME_BYTES);
		if (!path) {
			t->dropped.module_names++;
			continue;
		}
		struct mapping *p = &t->past[t->npast++ % UNWIND_PAST_MAPS];
		*p = *m;
		p->path = (char *)path;
		p->checked = 0;
	}
}

int
unwind_target_reload_maps(struct unwind_target *t)
{
	struct module_map fresh;
	if (!t->ops->read_maps)
		return -ENOTSUP;
	int r = t->ops->read_maps(t, &fresh);
	if (r < 0)
		return r;
	remember_past(t, &t->maps, &fresh);
	if (t->busy == 0) {
		unwind_module_map_free(&t->maps);
	} else if (retire_maps(t) < 0) {
		/* Cannot keep the old array alive: keep using it. */
		unwind_module_map_free(&fresh);
		return -ENOMEM;
	}
	t->maps = fresh;
	t->last_map = NULL;
	t->generation++;
	t->maps_loaded_ns = ptrace_clock_monotonic_ns();
	/* A library may now live where another one was. */
	unwind_target_state_flush(t);
	return 0;
}

void
unwind_target_state_flush(struct unwind_target *t)
{
	for (int i = 0; i < UNWIND_STATE_SLOTS; i++) {
		const struct unwinder *u = t->state_owner[i];
		if (u && u->flush && t->state[i])
			u->flush(t->state[i]);
	}
}

bool
unwind_target_maps_current(struct unwind_target *t, const struct unwind_frame *frames, int n,
			   uint64_t epoch)
{
	if (!t->ops->read_maps)
		return true;            /* a core does not change */
	if (t->map_files_denied) {
		if (ptrace_clock_monotonic_ns() - t->maps_loaded_ns < NS_PER_SEC)
			return true;
		return unwind_target_reload_maps(t) < 0;
	}
	for (int i = 0; i < n; i++) {
		struct mapping *m = unwind_module_map_find(&t->maps, frames[i].ip);
		/* Mapped after the map was read (it may have been read in
		 * the moment between a dlclose and a dlopen): read again,
		 * once for the tick, and for a late stop at most every
		 * 10 ms (a walk astray misses too). */
		if (!m && frames[i].ip &&
		    (t->maps_loaded_ns < epoch ||
		     ptrace_clock_monotonic_ns() - t->maps_loaded_ns > 10 * NS_PER_MS))
			return unwind_target_reload_maps(t) < 0;
		if (!m || !m->inode || m->checked == epoch)
			continue;
		int same = t->ops->mapping_same(t, m);
		if (same == 1) {
			m->checked = epoch;
			continue;
		}
		if (same == -EPERM) {
			t->map_files_denied = true;
			return true;
		}
		/* Another file there, or the range changed (ENOENT): the
		 * map as it is now. */
		return unwind_target_reload_maps(t) < 0;
	}
	return true;
}

static void
resolve_image(struct unwind_target *t, struct mapping *m)
{
	m->image_tried = true;
	if (!m->path)
		return;
	if (strcmp(m->path, "[vdso]") == 0) {
		m->image = t->vdso;
	} else if (m->path[0] == '[') {
		return;
	} else if (t->ops->open_image) {
		int err = 0;
		m->image = t->ops->open_image(t, m, &err);
	}
	if (m->image && unwind_elf_image_bias(m->image, m, &m->bias) == 0)
		m->bias_known = true;
}

/* Do the n bytes of code at addr in mapping m's file equal code? */
static bool
file_code_is(const struct mapping *m, uint64_t addr, const unsigned char *code, size_t n)
{
	if (!m->image || !m->image->mmapped || !span_inside(m->end - m->start, addr - m->start, n))
		return false;
	uint64_t off = addr - m->start + m->offset;
	return span_inside(m->image->size, off, n) && memcmp(m->image->data + off, code, n) == 0;
}

/* The newest past mapping at pc whose file holds the n bytes code. */
static const struct mapping *
past_with_code(const struct unwind_target *t, uint64_t pc, const unsigned char *code, size_t n)
{
	unsigned have = t->npast < UNWIND_PAST_MAPS ? t->npast : UNWIND_PAST_MAPS;
	for (unsigned k = 1; k <= have; k++) {
		const struct mapping *p = &t->past[(t->npast - k) % UNWIND_PAST_MAPS];
		if (pc >= p->start && pc < p->end && file_code_is(p, pc, code, n))
			return p;
	}
	return NULL;
}

bool
unwind_target_code_at_stop(struct unwind_target *t, const struct stack_snapshot *s, uint64_t pc)
{
	t->swapped_start = t->swapped_end = 0;
	t->at_stop_found = false;
	size_t n = s->code_len;
	if (!n || !t->ops->read_live || n > sizeof(s->code))
		return false;
	struct mapping *m = unwind_target_mapping(t, pc);
	if (m) {
		/* Only a read-only mapping of a file we read (memory.c's
		 * rule), whose mapping holds the n bytes. */
		if (!m->image || !m->image->mmapped || (m->perms & MAPPING_W) ||
		    !span_inside(m->end - m->start, pc - m->start, n) ||
		    file_code_is(m, pc, s->code, n))
			return false;
		/* Not the file's code: patched in memory (then it still
		 * is), or another library's, swapped since (then it is
		 * not). */
		unsigned char now[sizeof(s->code)];
		if (t->ops->read_live(t, pc, now, n) == 0 && memcmp(now, s->code, n) == 0)
			return false;
	}
	/* Swapped, or unmapped since the stop: the library that was there,
	 * if the map held it once. */
	const struct mapping *p = past_with_code(t, pc, s->code, n);
	if (p) {
		t->at_stop = *p;
		t->at_stop_found = true;
		m = &t->at_stop;
	}
	if (!m)
		return false;
	t->swapped_start = m->start;
	t->swapped_end = m->end;
	return true;
}

struct mapping *
unwind_target_mapping(struct unwind_target *t, uint64_t addr)
{
	if (addr >= t->swapped_start && addr < t->swapped_end)
		return t->at_stop_found ? &t->at_stop : NULL;
	struct mapping *m = t->last_map;
	if (m && addr >= m->start && addr < m->end)
		return m;
	m = unwind_module_map_find(&t->maps, addr);
	if (!m && t->ops->read_maps &&
	    ptrace_clock_monotonic_ns() - t->maps_loaded_ns > 100 * NS_PER_MS) {
		/* Mapped since we last looked (dlopen, a new thread's stack):
		 * re-read, at most ten times a second. */
		if (unwind_target_reload_maps(t) == 0)
			m = unwind_module_map_find(&t->maps, addr);
	}
	if (m && !m->image_tried)
		resolve_image(t, m);
	if (m)
		t->last_map = m;
	return m;
}

uint64_t
unwind_target_stack_end(void *target, uint64_t sp)
{
	struct unwind_target *t = target;
	/* Runs while the thread is stopped: a lookup, never a reload. */
	struct mapping *m = unwind_module_map_find(&t->maps, sp);
	return m ? m->end : 0;
}

const struct arch *
unwind_target_arch(struct unwind_target *t)
{
	return t->arch ? t->arch : arch_host();
}

uint64_t
unwind_target_ra_mask(struct unwind_target *t)
{
	const struct arch *a = unwind_target_arch(t);
	/* The kernel's own mask, where the core kept it or a stop of the
	 * live process read it (ptrace/sample.c): a kernel with another
	 * virtual address size signs other bits.  Kernels give bits
	 * 54..VA_BITS only, though the signature of an instruction address
	 * runs into the top byte too (no top-byte ignore for instructions),
	 * where no user address has bits. */
	uint64_t kernel = t->pac_mask;
	if (kernel && a && a->ra_pac_mask)
		return kernel | (UINT64_C(0xff) << 56);
	return a ? a->ra_pac_mask : 0;
}
