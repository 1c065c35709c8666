/* sampler/frames.c - the frame ids of an address: symbol or module name,
 * --inline's inlined functions, the module column of top; cached per
 * address (addr-cache.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/collapse.h"
#include "sampler/profiler-internal.h"

void
root_name(char *buf, size_t len, const char *comm, pid_t pid, pid_t tid)
{
	if (tid)
		snprintf(buf, len, "%s-%d/%d", comm, (int)pid, (int)tid);
	else
		snprintf(buf, len, "%s-%d", comm, (int)pid);
	/* perf's stackcollapse: spaces in thread names become underscores;
	 * so do control characters, which the folded writer would turn into
	 * spaces. */
	for (char *c = buf; *c; c++)
		if (*c == ' ' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '_';
}

/* The first module a frame name was seen in (names are interned without
 * it); only on a name's first sight, so the cost is per name, not per
 * sample.  Out of memory only leaves the column empty. */
static void
frame_module_note(struct profiler *p, uint32_t id, const char *module)
{
	if (id >= p->nframe_modules) {
		size_t n = p->nframe_modules ? p->nframe_modules : 256;
		while (n <= id)
			n *= 2;
		char **v = realloc(p->frame_modules, n * sizeof(*v));
		if (!v)
			return;
		memset(v + p->nframe_modules, 0, (n - p->nframe_modules) * sizeof(*v));
		p->frame_modules = v;
		p->nframe_modules = n;
	}
	if (!p->frame_modules[id]) {
		const char *base = strrchr(module, '/');
		p->frame_modules[id] = strdup(base ? base + 1 : module);
	}
}

/* The interned name of the physical frame at ip (no cache). */
static uint32_t
frame_name_id(struct profiler *p, struct proc_state *ps, uint64_t ip, bool caller)
{
	struct unwind_symbol sym;
	char buf[512];
	const char *name;
	unwind_symbolize(ps->ut, ip, caller, p->cfg.sym_flags, &sym);
	if (sym.function) {
		name = sym.function;
	} else if (sym.module) {
		const char *base = strrchr(sym.module, '/');
		snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : sym.module);
		name = buf;
	} else {
		name = "[unknown]";
	}
	int r = collapse_intern(p->stacks, name);
	uint32_t id = r < 0 ? 0 : (uint32_t)r;
	if (r >= 0 && sym.module)
		frame_module_note(p, id, sym.module);
	return id;
}

/* With --inline, one physical frame can be several: the function holding
 * the code, then the functions inlined into it at ip, outermost first
 * (root-first order, as stacks are stored), each named name_[i] as
 * flamegraph tools expect.  The lists live in p->seq (count, ids...) and the
 * address cache maps to their index. */
static size_t
frame_ids_inline(struct profiler *p, struct proc_state *ps, uint64_t ip, bool caller,
		 uint32_t *out)
{
	uint64_t key = caller ? ip - 1 : ip;
	uint32_t at;
	if (key && addr_cache_get(&ps->names, key, &at)) {
		memcpy(out, &p->seq[at + 1], p->seq[at] * sizeof(*out));
		return p->seq[at];
	}
	struct unwind_source_frame sf[MAX_INLINE];
	int ns = unwind_source(ps->ut, ip, caller, p->cfg.sym_flags, sf, MAX_INLINE);
	size_t n = 0;
	out[n++] = frame_name_id(p, ps, ip, caller);
	for (int k = ns - 2; k >= 0; k--) {
		char name[512];
		if (!sf[k].inlined || !sf[k].function)
			continue;
		snprintf(name, sizeof(name), "%s_[i]", sf[k].function);
		int r = collapse_intern(p->stacks, name);
		if (r >= 0)
			out[n++] = (uint32_t)r;
	}
	if (key && p->seq_n + n + 1 <= UINT32_MAX) {
		if (p->seq_n + n + 1 > p->seq_cap) {
			size_t ncap = p->seq_cap ? 2 * p->seq_cap : 4096;
			uint32_t *nv = realloc(p->seq, ncap * sizeof(*nv));
			if (!nv)
				return n;
			p->seq = nv;
			p->seq_cap = ncap;
		}
		p->seq[p->seq_n] = (uint32_t)n;
		memcpy(&p->seq[p->seq_n + 1], out, n * sizeof(*out));
		addr_cache_put(&ps->names, key, (uint32_t)p->seq_n);
		p->seq_n += n + 1;
	}
	return n;
}

/* The frame ids of the physical frame at ip, root first: one, or with
 * --inline up to MAX_INLINE.  Names are cached per lookup address. */
size_t
frame_ids(struct profiler *p, struct proc_state *ps, uint64_t ip, bool caller, uint32_t *out)
{
	if (p->cfg.inline_frames)
		return frame_ids_inline(p, ps, ip, caller, out);
	uint64_t key = caller ? ip - 1 : ip;
	if (key && addr_cache_get(&ps->names, key, out))
		return 1;
	out[0] = frame_name_id(p, ps, ip, caller);
	if (key)
		addr_cache_put(&ps->names, key, out[0]);
	return 1;
}
