/* sampler/frames.c - the frame ids of an address: symbol or module name,
 * --inline's inlined functions, the module column of top; cached per
 * address (unwind_proc.names).  The unwinder's: names are looked up
 * without a lock, interned and noted under p->stacks_lock. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

int
profiler_intern(struct profiler *p, const char *name)
{
	pthread_mutex_lock(&p->stacks_lock);
	int id = collapse_intern(p->stacks, name);
	pthread_mutex_unlock(&p->stacks_lock);
	return id;
}

void
profiler_stacks_lock(struct profiler *p)
{
	pthread_mutex_lock(&p->stacks_lock);
}

void
profiler_stacks_unlock(struct profiler *p)
{
	pthread_mutex_unlock(&p->stacks_lock);
}

/* Grows the tables indexed by frame id (frame_modules and the others of
 * its kind) to hold id. Returns false when out of memory. */
static bool
frame_tables_reserve(struct profiler *p, uint32_t id)
{
	if (id < p->nframe_modules)
		return true;
	/* One capacity for the four: each grows from it to the same new one.
	 * A failure leaves those already grown larger than it says, unused
	 * (the next call grows them again, to the same size). */
	size_t cap = 0;
#define GROW(field) do { \
		cap = p->nframe_modules; \
		if (BASE_GROW_ZERO(p->field, cap, (size_t)id + 1, 256) < 0) \
			return false; \
	} while (0)
	GROW(frame_modules);
	GROW(frame_offsets);
	GROW(frame_files);
	GROW(frame_lines);
#undef GROW
	p->nframe_modules = cap;
	return true;
}

/* The first module a frame name was seen in (names are interned without
 * it); only on a name's first sight, so the cost is per name, not per
 * sample.  Out of memory only leaves the column empty. */
static void
frame_module_note(struct profiler *p, uint32_t id, const char *module, uint64_t offset)
{
	if (!frame_tables_reserve(p, id))
		return;
	/* The whole path (pprof's mappings); top shows its basename. */
	if (!p->frame_modules[id]) {
		p->frame_modules[id] = strdup(module);
		p->frame_offsets[id] = offset;
	}
}

/* The interned name of the physical frame at ip (no cache). */
static uint32_t
frame_name_id(struct profiler *p, struct unwind_proc *up, uint64_t ip, bool caller, bool swapped)
{
	struct unwind_symbol sym;
	char buf[512];
	if (swapped)
		unwind_symbolize_swapped(up->ut, ip, caller, p->cfg.sym_flags, &sym);
	else
		unwind_symbolize(up->ut, ip, caller, p->cfg.sym_flags, &sym);
	const char *name = collapse_name_frame(buf, sizeof(buf), sym.function, sym.module);
	pthread_mutex_lock(&p->stacks_lock);
	int r = collapse_intern(p->stacks, name);
	uint32_t id = r < 0 ? 0 : (uint32_t)r;
	if (r >= 0 && sym.module)
		frame_module_note(p, id, sym.module, sym.module_offset);
	pthread_mutex_unlock(&p->stacks_lock);
	return id;
}

/* --inline: the source position a frame name was first seen at (pprof's
 * Function and Line). */
static void
frame_source_note(struct profiler *p, uint32_t id, const struct unwind_source_frame *sf)
{
	if (!sf->file || !frame_tables_reserve(p, id) || p->frame_files[id])
		return;
	p->frame_files[id] = strdup(sf->file);
	p->frame_lines[id] = sf->line;
}

/* With --inline, one physical frame can be several: the function holding
 * the code, then the functions inlined into it at ip, outermost first
 * (root-first order, as stacks are stored), each named name_[i] as
 * flamegraph tools expect.  The lists live in p->uw_own.seq (count,
 * ids...) and the address cache maps to their index. */
static size_t
frame_ids_inline(struct profiler *p, struct unwind_proc *up, uint64_t ip, bool caller,
		 uint32_t *out)
{
	uint64_t key = caller ? ip - 1 : ip;
	uint32_t at;
	if (key && base_map_get(&up->names, key, &at)) {
		memcpy(out, &p->uw_own.seq[at + 1], p->uw_own.seq[at] * sizeof(*out));
		return p->uw_own.seq[at];
	}
	struct unwind_source_frame sf[MAX_INLINE_PER_FRAME];
	int ns = unwind_source(up->ut, ip, caller, p->cfg.sym_flags, sf, MAX_INLINE_PER_FRAME);
	size_t n = 0;
	out[n++] = frame_name_id(p, up, ip, caller, false);
	pthread_mutex_lock(&p->stacks_lock);
	if (ns > 0)
		frame_source_note(p, out[0], &sf[ns - 1]);
	for (int k = ns - 2; k >= 0; k--) {
		char name[512];
		if (!sf[k].inlined || !sf[k].function)
			continue;
		int r = collapse_intern(p->stacks, collapse_name_inline(name, sizeof(name),
									sf[k].function));
		if (r >= 0) {
			frame_source_note(p, (uint32_t)r, &sf[k]);
			out[n++] = (uint32_t)r;
		}
	}
	pthread_mutex_unlock(&p->stacks_lock);
	if (key && p->uw_own.seq_n + n + 1 <= UINT32_MAX) {
		if (BASE_GROW(p->uw_own.seq, p->uw_own.seq_cap, p->uw_own.seq_n + n + 1, 4096) < 0)
			return n;
		p->uw_own.seq[p->uw_own.seq_n] = (uint32_t)n;
		memcpy(&p->uw_own.seq[p->uw_own.seq_n + 1], out, n * sizeof(*out));
		/* out of memory: uncached, only slower */
		base_map_put(&up->names, key, (uint32_t)p->uw_own.seq_n);
		p->uw_own.seq_n += n + 1;
	}
	return n;
}

/* A Python frame (UNWIND_HOW_PYTHON): "qualname (dir/file.py:line)",
 * cached by code object and line (keys with bit 63 set, never an
 * address); its file and line go to pprof's Function and Line. */
static size_t
frame_id_python(struct profiler *p, struct unwind_proc *up, const struct unwind_frame *f,
		uint32_t *out)
{
	uint64_t key = 0;
	if (f->line < 0x8000 && f->ip < (1ull << 48))
		key = 1ull << 63 | (uint64_t)f->line << 48 | f->ip;
	if (key && base_map_get(&up->names, key, out))
		return 1;
	struct unwind_python_name py;
	char name[1024];
	if (!unwind_python_name(up->ut, f, &py))
		return 0;
	collapse_name_python(name, sizeof(name), py.function, py.file, py.line);
	pthread_mutex_lock(&p->stacks_lock);
	int r = collapse_intern(p->stacks, name);
	uint32_t id = r < 0 ? 0 : (uint32_t)r;
	if (r >= 0 && frame_tables_reserve(p, id) && !p->frame_files[id]) {
		p->frame_files[id] = strdup(py.file);
		p->frame_lines[id] = py.line;
	}
	pthread_mutex_unlock(&p->stacks_lock);
	out[0] = id;
	if (key && !(p->cfg.inline_frames))
		base_map_put(&up->names, key, id);
	return 1;
}

/* The frame ids of frames[k], root first (see profiler_frame_ids). */
size_t
profiler_frame_ids_of(struct profiler *p, struct unwind_proc *up,
		      const struct unwind_frame *frames, int k, uint32_t *out)
{
	if (frames[k].how == UNWIND_HOW_PYTHON)
		return frame_id_python(p, up, &frames[k], out);
	if (frames[k].swapped) {
		/* Its library was swapped since the stop: named from the one
		 * that was there, not cached for the address. */
		out[0] = frame_name_id(p, up, frames[k].ip, unwind_frame_is_caller(frames, k), true);
		return 1;
	}
	return profiler_frame_ids(p, up, frames[k].ip, unwind_frame_is_caller(frames, k), out);
}

/* The frame ids of the physical frame at ip, root first: one, or with
 * --inline up to MAX_INLINE_PER_FRAME.  Names are cached per lookup
 * address. */
size_t
profiler_frame_ids(struct profiler *p, struct unwind_proc *up, uint64_t ip, bool caller,
		   uint32_t *out)
{
	if (p->cfg.inline_frames)
		return frame_ids_inline(p, up, ip, caller, out);
	uint64_t key = caller ? ip - 1 : ip;
	if (key && base_map_get(&up->names, key, out))
		return 1;
	out[0] = frame_name_id(p, up, ip, caller, false);
	if (key)
		base_map_put(&up->names, key, out[0]);
	return 1;
}
