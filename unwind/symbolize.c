/* unwind/symbolize.c - an address to a function and module name, and the
 * module names kept alive across map reloads (in a name pool,
 * name-pool.c). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace/clock.h"
#include "unwind/maps.h"
#include "unwind/perf-map.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

/* ---- names that live as long as the target ------------------------------ */

const char *
unwind_target_intern(struct unwind_target *t, const char *s)
{
	const char *r = unwind_name_pool_intern(&t->names, s, UNWIND_MAX_MODULE_NAME_BYTES);
	if (!r)
		t->dropped.module_names++;
	return r;
}

/* ---- naming a frame ------------------------------------------------------ */

/* After a miss the file is looked at again at most every PERF_MAP_MISS_NS
 * (as the maps are, target.c): a dump names the same data address, a
 * condition variable its 1000 threads wait on, 1000 times, and each look
 * costs three system calls (bench/dump-parked.sh).  A hit always looks,
 * for lines appended since. */
#define PERF_MAP_MISS_NS (10 * NS_PER_MS)

static const char *
perf_map_name(struct unwind_target *t, uint64_t addr, uint64_t *off)
{
	if (!t->ops->jit_name)
		return NULL;
	uint64_t now = ptrace_clock_monotonic_ns();
	if (t->perf_map_miss_ns && now - t->perf_map_miss_ns < PERF_MAP_MISS_NS)
		return unwind_perf_map_find(t->perf_map, addr, off);
	const char *name = t->ops->jit_name(t, addr, off);
	t->perf_map_miss_ns = name ? 0 : now;
	return name;
}

/* Name ip (looked up at look) in mapping m. */
static int
symbolize_in(struct unwind_target *t, struct mapping *m, uint64_t ip, uint64_t look,
	     unsigned flags, struct unwind_symbol *sym)
{
	if ((flags & UNWIND_SYM_DATA) && !m->path && m > t->maps.v && m[-1].end == m->start &&
	    m[-1].path && m[-1].path[0] == '/')
		m = unwind_target_mapping(t, m->start - 1);
	/* m->path goes with the map at its next reload; the caller may keep
	 * the name until unwind_target_free (unwind.h). */
	if (m->path && !(m->path[0] == '[' && strcmp(m->path, "[vdso]") != 0))
		sym->module = unwind_target_intern(t, m->path);
	if (m->image && m->bias_known) {
		uint64_t off = 0;
		sym->module_offset = ip - m->bias;
		sym->function = unwind_elf_image_lookup(m->image, look - m->bias, flags, &off);
		if (sym->function)
			sym->offset = off + (ip - look);
	} else {
		sym->module_offset = ip - m->start + m->offset;
		/* JIT code: anonymous memory named only by the JIT's perf
		 * map (tests/symbols-perfmap.test).  Not only where the maps
		 * say x: a JIT that flips its pages between writable and
		 * executable (W^X, as V8 does) is seen through a snapshot of
		 * the maps that can say rw- for code that just ran
		 * (tests/symbols-perfmap-grow.test); the map only names
		 * code anyway. */
		if (!m->image && (!m->path || m->path[0] == '[')) {
			uint64_t off = 0;
			sym->function = perf_map_name(t, look, &off);
			if (sym->function)
				sym->offset = off + (ip - look);
		}
	}
	return sym->module ? 0 : -ENOENT;
}

static int
symbolize(struct unwind_target *t, uint64_t ip, bool caller,
	  unsigned flags, struct unwind_symbol *sym)
{
	uint64_t look = caller && ip > 0 ? ip - 1 : ip;
	memset(sym, 0, sizeof(*sym));
	struct mapping *m = unwind_target_mapping(t, look);
	return m ? symbolize_in(t, m, ip, look, flags, sym) : -ENOENT;
}

int
unwind_symbolize(struct unwind_target *t, uint64_t ip, bool caller,
		 unsigned flags, struct unwind_symbol *sym)
{
	unwind_target_enter(t);
	int r = symbolize(t, ip, caller, flags, sym);
	unwind_target_leave(t);
	return r;
}

int
unwind_symbolize_swapped(struct unwind_target *t, uint64_t ip, bool caller,
			 unsigned flags, struct unwind_symbol *sym)
{
	uint64_t look = caller && ip > 0 ? ip - 1 : ip;
	memset(sym, 0, sizeof(*sym));
	struct mapping *m = &t->at_stop;
	if (!t->at_stop_found || look < m->start || look >= m->end)
		return -ENOENT;
	unwind_target_enter(t);
	int r = symbolize_in(t, m, ip, look, flags & ~UNWIND_SYM_DATA, sym);
	unwind_target_leave(t);
	return r;
}
