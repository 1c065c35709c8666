/* unwind/unwind.c - the target object, engine dispatch, symbolization. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "unwind/unwind-internal.h"

static const char *const engine_names[] = {
	[UNWIND_ENGINE_AUTO] = "auto",
	[UNWIND_ENGINE_FP] = "fp",
	[UNWIND_ENGINE_CFI] = "cfi",
	[UNWIND_ENGINE_MIPS] = "mips",
};

int
unwind_engine_parse(const char *s, enum unwind_engine *out)
{
	for (size_t i = 0; i < sizeof(engine_names) / sizeof(engine_names[0]); i++) {
		if (strcmp(s, engine_names[i]) == 0) {
			*out = (enum unwind_engine)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *
unwind_engine_name(enum unwind_engine e)
{
	return (unsigned)e < sizeof(engine_names) / sizeof(engine_names[0]) ? engine_names[e] : "?";
}

const char *
unwind_how_name(enum unwind_how h)
{
	switch (h) {
	case UNWIND_HOW_CFI: return "cfi";
	case UNWIND_HOW_FP: return "fp";
	case UNWIND_HOW_MIPS: return "mips";
	}
	return "?";
}

const char *
unwind_stop_reason(enum unwind_stop s)
{
	switch (s) {
	case UNWIND_STOP_END: return "end of stack";
	case UNWIND_STOP_DEPTH: return "depth limit reached";
	case UNWIND_STOP_NOINFO: return "no unwind information";
	case UNWIND_STOP_BAD_FRAME: return "implausible frame";
	case UNWIND_STOP_MEMORY: return "memory not readable";
	case UNWIND_STOP_UNSUPPORTED: return "engine not supported here";
	case UNWIND_STOP_ISA: return "microMIPS/MIPS16 code is not analysed";
	}
	return "?";
}

/* Copy the vdso now: it is the same for the life of the process, and its
 * code and unwind tables are needed for every clock_gettime sample. */
static void
copy_vdso(struct unwind_target *t)
{
	for (size_t i = 0; i < t->maps.n; i++) {
		struct mapping *m = &t->maps.v[i];
		if (!m->path || strcmp(m->path, "[vdso]") != 0)
			continue;
		size_t len = (size_t)(m->end - m->start);
		void *buf = malloc(len);
		if (!buf)
			return;
		struct iovec local = { .iov_base = buf, .iov_len = len };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)m->start, .iov_len = len };
		if (process_vm_readv(t->pid, &local, 1, &remote, 1, 0) != (ssize_t)len) {
			free(buf);
			return;
		}
		t->vdso = elf_image_from_memory(&t->elves, buf, len, "[vdso]");
		if (t->vdso) {
			t->vdso_start = m->start;
			t->vdso_end = m->end;
		}
		return;
	}
}

struct unwind_target *
unwind_target_open(pid_t pid, int *err)
{
	struct unwind_target *t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->pid = pid;
	int r = module_map_read(pid, &t->maps);
	if (r < 0) {
		free(t);
		*err = r;
		return NULL;
	}
	copy_vdso(t);
	t->cfi = cfi_state_new(t);
	return t;
}

void
unwind_target_free(struct unwind_target *t)
{
	if (!t)
		return;
	cfi_state_free(t->cfi);
	perf_map_free(t->perf_map);
	/* libdw reads the images' mmaps: close it before they are unmapped. */
	source_cache_free(t->source);
	module_map_free(&t->maps);
	elf_cache_free(&t->elves);
	core_file_free(t->core);
	free(t);
}

int
unwind_target_reload_maps(struct unwind_target *t)
{
	struct module_map fresh;
	if (t->pid <= 0)
		return -ENOTSUP;
	int r = module_map_read(t->pid, &fresh);
	if (r < 0)
		return r;
	module_map_free(&t->maps);
	t->maps = fresh;
	t->last_map = NULL;
	t->generation++;
	t->maps_loaded_ns = monotonic_ns();
	/* A library may now live where another one was. */
	cfi_state_flush(t->cfi);
	return 0;
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
	} else {
		int err = 0;
		m->image = elf_cache_get(&t->elves, t->pid, m, &err);
	}
	if (m->image && elf_image_bias(m->image, m, &m->bias) == 0)
		m->bias_known = true;
}

struct mapping *
unwind_target_mapping(struct unwind_target *t, uint64_t addr)
{
	struct mapping *m = t->last_map;
	if (m && addr >= m->start && addr < m->end)
		return m;
	m = module_map_find(&t->maps, addr);
	if (!m && t->pid > 0 && monotonic_ns() - t->maps_loaded_ns > 100000000u) {
		/* Mapped since we last looked (dlopen, a new thread's stack):
		 * re-read, at most ten times a second. */
		if (unwind_target_reload_maps(t) == 0)
			m = module_map_find(&t->maps, addr);
	}
	if (m && !m->image_tried)
		resolve_image(t, m);
	if (m)
		t->last_map = m;
	return m;
}

unsigned
unwind_target_generation(const struct unwind_target *t)
{
	return t->generation;
}

uint64_t
unwind_target_stack_end(void *target, uint64_t sp)
{
	struct unwind_target *t = target;
	/* Runs while the thread is stopped: a lookup, never a reload. */
	struct mapping *m = module_map_find(&t->maps, sp);
	return m ? m->end : 0;
}

const struct arch *
unwind_target_arch(struct unwind_target *t)
{
	if (!t->arch && t->core)
		t->arch = arch_from_elf(t->core->machine, t->core->elf_class,
					t->core->big_endian);
	return t->arch ? t->arch : arch_host();
}

/* The fp and cfi engines read the registers of processes on this host
 * (cfi through libunwind, built for the host only); the mips engine is
 * pure code and runs on any host. */
static const struct unwinder *
engine_unwinder(enum unwind_engine e, const struct arch *a)
{
	if (!a)
		return NULL;
	bool native = a == arch_host();
	bool fp = native && a->fp_chain;
	bool cfi = native && a->libunwind_slots && unwinder_cfi.walk;
	switch (e) {
	case UNWIND_ENGINE_FP: return fp ? &unwinder_fp : NULL;
	case UNWIND_ENGINE_CFI: return cfi ? &unwinder_cfi : NULL;
	case UNWIND_ENGINE_AUTO:
		if (a->e_machine == EM_MIPS)
			return &unwinder_mips;
		if (cfi && unwinder_auto.walk)
			return a->fp_chain ? &unwinder_auto : &unwinder_cfi;
		return fp ? &unwinder_fp : NULL;
	case UNWIND_ENGINE_MIPS: return a->e_machine == EM_MIPS ? &unwinder_mips : NULL;
	}
	return NULL;
}

bool
unwind_engine_available(enum unwind_engine e)
{
	return engine_unwinder(e, arch_host()) != NULL;
}

const char *
unwind_engine_unavailable_reason(enum unwind_engine e)
{
	if (unwind_engine_available(e))
		return NULL;
	if (!arch_host())
		return ARCH_UNSUPPORTED_REASON;
	if (e == UNWIND_ENGINE_MIPS)
		return "it unwinds MIPS code (MIPS processes, or MIPS core files with dump --core)";
	if (e == UNWIND_ENGINE_CFI && !unwinder_cfi.walk)
		return "stackspy was built without libunwind";
	return "not supported on this architecture";
}

int
unwind_walk(struct unwind_target *t, enum unwind_engine e,
	    const struct stack_snapshot *s, struct unwind_frame *frames, int max,
	    enum unwind_stop *stop)
{
	struct arch_regs regs;
	struct memory_reader mr = { .target = t, .snap = s };
	const struct arch *a = unwind_target_arch(t);
	const struct unwinder *u = engine_unwinder(e, a);
	*stop = UNWIND_STOP_UNSUPPORTED;
	if (!u || max <= 0 || arch_regs_from_prstatus(a, s->regs, s->regs_len, &regs) < 0)
		return 0;
	int n = 1;
	frames[0].ip = regs.r[a->reg_ip];
	frames[0].how = u->first_how;
	frames[0].signal_frame = false;
	*stop = n < max ? u->walk(t, &mr, &regs, frames, &n, max) : UNWIND_STOP_DEPTH;
	return n;
}

int
unwind_symbolize(struct unwind_target *t, uint64_t ip, bool caller,
		 unsigned flags, struct unwind_symbol *sym)
{
	uint64_t look = caller && ip > 0 ? ip - 1 : ip;
	memset(sym, 0, sizeof(*sym));
	struct mapping *m = unwind_target_mapping(t, look);
	if (!m)
		return -ENOENT;
	sym->module = m->path && !(m->path[0] == '[' && strcmp(m->path, "[vdso]") != 0) ? m->path : NULL;
	if (m->image && m->bias_known) {
		uint64_t off = 0;
		sym->module_offset = ip - m->bias;
		sym->function = elf_image_lookup(m->image, look - m->bias, flags, &off);
		if (sym->function)
			sym->offset = off + (ip - look);
	} else {
		sym->module_offset = ip - m->start + m->offset;
		/* JIT code: anonymous executable memory named only by the
		 * JIT's perf map (tests/symbols-perfmap.test). */
		if (!m->image && (m->perms & MAPPING_X) &&
		    (!m->path || m->path[0] == '[')) {
			uint64_t off = 0;
			sym->function = perf_map_lookup(&t->perf_map, t->pid, look, &off);
			if (sym->function)
				sym->offset = off + (ip - look);
		}
	}
	return sym->module ? 0 : -ENOENT;
}
