/* unwind/python.c - CPython's frames in the native stacks (DESIGN.md,
 * "Interpreter frames").
 *
 *   1. prepare      the interpreter of a target: the module that exports
 *                   _PyRuntime (python3.X or libpython3.X.so), its
 *                   Py_Version, the layout of that version (tables for
 *                   3.11 and 3.12; 3.13's own _Py_DebugOffsets), its type
 *                   objects and the eval loop's address range.  Outside
 *                   any stop.
 *   2. stop read    while a thread is stopped: its thread state (found by
 *                   native_thread_id, cached), the chain of its frames
 *                   from the innermost (code object, instruction pointer,
 *                   entry or shim), into the snapshot (struct
 *                   py_chain_head + frames).  Its data stack is read in
 *                   one piece and the frames looked up there.
 *   3. splice       after the thread runs again (unwind_walk): the chain
 *                   cut at each eval call's first frame, each run put
 *                   where the eval loop's native frame that runs it is,
 *                   innermost first; lines from the location table.
 *
 * Every value read from the target is hostile: pointers are checked for
 * alignment, lists and chains have bounds (PY_MAX_*), strings and tables
 * are cut (py-code.c), and what does not check out leaves the native
 * frames as they were, with a note.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace/clock.h"
#include "unwind/elf-image.h"
#include "unwind/python.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

static enum unwind_python_mode python_mode = UNWIND_PYTHON_ON;

void
unwind_set_python(enum unwind_python_mode m)
{
	python_mode = m;
}

enum py_status { PY_UNKNOWN, PY_ABSENT, PY_READY, PY_REFUSED };

/* A target's interpreter (t->python). */
struct py_state {
	enum py_status status;
	unsigned generation;      /* the map's, when status was found */
	char note[200];           /* PY_REFUSED: why */
	struct py_layout L;
	uint32_t version;         /* Py_Version: 0x030b02f0 */
	uint64_t runtime;         /* _PyRuntime */
	uint64_t code_type, unicode_type, bytes_type;
	const struct elf_image *image;  /* the module that holds the eval loop */
	uint64_t eval_lo, eval_hi;      /* _PyEval_EvalFrameDefault */
	/* The stop's: thread id -> thread state, from the last walk of the
	 * interpreters' thread lists. */
	struct base_map tids;     /* tid -> index in tstates */
	uint64_t *tstates;
	size_t ntstates, tstates_cap;
	uint64_t walked_ns;       /* when the lists were last walked, 0 never */
	bool missed;              /* a stop found a thread not in them */
	unsigned char *stack;     /* a copy of the data stack's top */
	size_t stack_cap;
	/* The splice's. */
	struct py_codes codes;
	uint64_t mismatches;      /* chains not matched to the native frames */
};

/* A thread's data stack is read at most this far below its top in one
 * piece (frames past it, a generator's, are read one by one). */
#define PY_STACK_COPY (32u * 1024)
/* A thread not in the lists is looked for again at most this often. */
#define PY_REWALK_NS (200 * NS_PER_MS)

static const struct py_layout layout_311 = {
	.minor = 11,
	.rt_interp_head = 40, .rt_gil = 360,
	.in_next = 0, .in_threads_head = 16, .in_gil_ptr = PY_NONE,
	.ts_next = 8, .ts_native_tid = 160, .ts_cframe = 56, .cf_current = 8,
	.ts_current = PY_NONE, .ts_chunk = 296, .ts_top = 304, .ts_size = 320,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_entry = 68, .fr_owner = 69,
	.fr_size = 80, .instr_is_prev = true,
	.co_filename = 112, .co_qualname = 128, .co_linetable = 136, .co_firstlineno = 72,
	.co_code = 184, .co_size = 192,
	.ob_type = 8, .str_length = 16, .str_state = 32, .str_ascii = 48, .str_compact = 72,
	.bytes_size = 16, .bytes_sval = 32,
};

static const struct py_layout layout_312 = {
	.minor = 12,
	.rt_interp_head = 40, .rt_gil = PY_NONE,
	.in_next = 0, .in_threads_head = 72, .in_gil_ptr = 384,
	.ts_next = 8, .ts_native_tid = 144, .ts_cframe = 56, .cf_current = 0,
	.ts_current = PY_NONE, .ts_chunk = 232, .ts_top = 240, .ts_size = 256,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_entry = PY_NONE, .fr_owner = 70,
	.fr_size = 80, .instr_is_prev = true,
	.co_filename = 112, .co_qualname = 128, .co_linetable = 136, .co_firstlineno = 68,
	.co_code = 192, .co_size = 192,
	.ob_type = 8, .str_length = 16, .str_state = 32, .str_ascii = 40, .str_compact = 56,
	.bytes_size = 16, .bytes_sval = 32,
};

/* The frame owner of a C stack's entry frame (3.12+). */
#define OWNED_BY_CSTACK 3

static bool
read_u64(struct unwind_target *t, uint64_t addr, uint64_t *v)
{
	return !(addr & 7) && unwind_py_read(t, addr, v, 8) == 0;
}

/* Bytes of a module's file at its ELF address vaddr (read-only data a
 * core does not hold). */
static bool
image_read(const struct elf_image *img, uint64_t vaddr, void *buf, size_t len)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr)) {
			uint64_t off = s->offset + (vaddr - s->vaddr);
			if (off > img->size || len > img->size - off)
				return false;
			memcpy(buf, img->data + off, len);
			return true;
		}
	}
	return false;
}

static void
refuse(struct py_state *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
refuse(struct py_state *st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->note, sizeof(st->note), fmt, ap);
	va_end(ap);
	st->status = PY_REFUSED;
}

/* Is this mapping's file one that may hold an interpreter (python3.X,
 * libpython3.X.so: an embedder links the library)? */
static bool
maybe_python(const struct mapping *m)
{
	if (!m->path || m->path[0] != '/')
		return false;
	const char *base = strrchr(m->path, '/') + 1;
	return strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
}

/* The module that exports _PyRuntime: *img and *bias; false if none. */
static bool
find_runtime(struct unwind_target *t, const struct elf_image **img, uint64_t *bias,
	     uint64_t *runtime)
{
	const struct elf_image *tried = NULL;
	for (size_t i = 0; i < t->maps.n; i++) {
		if (!maybe_python(&t->maps.v[i]))
			continue;
		struct mapping *m = unwind_target_mapping(t, t->maps.v[i].start);
		if (!m || !m->image || !m->bias_known || m->image == tried)
			continue;
		tried = m->image;
		uint64_t v, size;
		if (unwind_elf_image_symbol(m->image, "_PyRuntime", STT_OBJECT, &v, &size)) {
			*img = m->image;
			*bias = m->bias;
			*runtime = v + m->bias;
			return true;
		}
	}
	return false;
}

static bool
choose_layout(struct unwind_target *t, struct py_state *st)
{
	unsigned major = st->version >> 24, minor = (st->version >> 16) & 0xff;
	if (major == 3 && minor == 11) {
		st->L = layout_311;
		return true;
	}
	if (major == 3 && minor == 12) {
		st->L = layout_312;
		return true;
	}
	if (major == 3 && minor >= 13) {
		char why[120];
		if (unwind_py_debug_offsets(t, st->runtime, st->version, &st->L, why, sizeof(why)))
			return true;
		refuse(st, "%s", why);
		return false;
	}
	refuse(st, "version %u.%u is not supported (3.11 and later are)", major, minor);
	return false;
}

/* The symbols the splice and the names need, from img (bias added). */
static bool
find_symbols(struct py_state *st, const struct elf_image *img, uint64_t bias)
{
	static const char *const types[3] = { "PyCode_Type", "PyUnicode_Type", "PyBytes_Type" };
	uint64_t *dst[3] = { &st->code_type, &st->unicode_type, &st->bytes_type };
	uint64_t v, size;
	for (int i = 0; i < 3; i++) {
		if (!unwind_elf_image_symbol(img, types[i], STT_OBJECT, &v, &size)) {
			refuse(st, "no symbol %s in %s", types[i], img->path);
			return false;
		}
		*dst[i] = v + bias;
	}
	if (!unwind_elf_image_symbol(img, "_PyEval_EvalFrameDefault", STT_FUNC, &v, &size) ||
	    !size) {
		refuse(st, "no symbol _PyEval_EvalFrameDefault in %s", img->path);
		return false;
	}
	st->eval_lo = v + bias;
	st->eval_hi = v + bias + size;
	st->image = img;
	return true;
}

static void
discover(struct unwind_target *t, struct py_state *st)
{
	const struct elf_image *img;
	uint64_t bias, v, size;
	st->generation = t->generation;
	st->status = PY_ABSENT;
	if (!find_runtime(t, &img, &bias, &st->runtime))
		return;
	/* The layouts are those of 64-bit builds. */
	if (img->size <= EI_CLASS || img->data[EI_CLASS] != ELFCLASS64) {
		refuse(st, "a 32-bit interpreter (%s) is not supported", img->path);
		return;
	}
	/* An unsigned long in 3.11, an uint32_t later: the host's order. */
	uint32_t v32 = 0;
	uint64_t v64 = 0;
	if (!unwind_elf_image_symbol(img, "Py_Version", STT_OBJECT, &v, &size) ||
	    (size == 4 ? !image_read(img, v, &v32, 4) :
	     size == 8 ? !image_read(img, v, &v64, 8) : true)) {
		refuse(st, "no Py_Version in %s (3.10 or older: not supported)", img->path);
		return;
	}
	st->version = size == 4 ? v32 : (uint32_t)v64;
	if (!choose_layout(t, st) || !find_symbols(st, img, bias))
		return;
	st->status = PY_READY;
}

/* t's interpreter state, looked for once (again after the map changed
 * while none was found: an embedder loads libpython later). */
static struct py_state *
state_of(struct unwind_target *t)
{
	if (python_mode == UNWIND_PYTHON_OFF)
		return NULL;
	struct py_state *st = t->python;
	if (!st) {
		st = t->python = calloc(1, sizeof(*st));
		if (!st)
			return NULL;
	}
	if (st->status == PY_UNKNOWN ||
	    (st->status == PY_ABSENT && st->generation != t->generation))
		discover(t, st);
	return st->status == PY_READY ? st : NULL;
}

static void walk_threads(struct unwind_target *t, struct py_state *st);

/* The thread lists walked again when a stop found a thread missing from
 * them (at most every PY_REWALK_NS), or never walked: outside any stop. */
static void
refresh_threads(struct unwind_target *t, struct py_state *st)
{
	if (!st->walked_ns ||
	    (st->missed && ptrace_clock_monotonic_ns() - st->walked_ns >= PY_REWALK_NS))
		walk_threads(t, st);
}

int
unwind_python_prepare(struct unwind_target *t)
{
	unwind_target_enter(t);
	struct py_state *st = state_of(t);
	if (st)
		refresh_threads(t, st);
	unwind_target_leave(t);
	return st ? 1 : 0;
}

const char *
unwind_python_note(const struct unwind_target *t)
{
	const struct py_state *st = t->python;
	if (!st || python_mode == UNWIND_PYTHON_OFF)
		return NULL;
	return st->status == PY_REFUSED ? st->note : NULL;
}

uint32_t
unwind_python_version(const struct unwind_target *t)
{
	const struct py_state *st = t->python;
	if (!st || python_mode == UNWIND_PYTHON_OFF)
		return 0;
	return st->status == PY_READY || st->status == PY_REFUSED ? st->version : 0;
}

uint64_t
unwind_python_mismatches(const struct unwind_target *t)
{
	return t->python ? t->python->mismatches : 0;
}

unsigned
unwind_py_generation(const struct py_state *st)
{
	return st ? st->codes.replaced : 0;
}

void
unwind_py_state_free(struct py_state *st)
{
	if (!st)
		return;
	base_map_free(&st->tids);
	free(st->tstates);
	free(st->stack);
	unwind_py_codes_free(&st->codes);
	free(st);
}

/* ---- 2. the stop's read ------------------------------------------------ */

/* Every thread state of every interpreter into st->tids (bounded). */
static void
walk_threads(struct unwind_target *t, struct py_state *st)
{
	const struct py_layout *L = &st->L;
	base_map_reset(&st->tids);
	st->ntstates = 0;
	st->missed = false;
	st->walked_ns = ptrace_clock_monotonic_ns();
	uint64_t interp;
	if (!read_u64(t, st->runtime + L->rt_interp_head, &interp))
		return;
	for (int k = 0; interp && k < PY_MAX_INTERPS; k++) {
		uint64_t ts;
		if (!read_u64(t, interp + L->in_threads_head, &ts))
			return;
		for (int n = 0; ts && n < PY_MAX_THREADS; n++) {
			uint64_t tid, owner;
			if (!read_u64(t, ts + L->ts_native_tid, &tid) ||
			    !read_u64(t, ts + 16, &owner) || owner != interp)
				break;
			if (tid && tid < 0x80000000u &&
			    BASE_GROW(st->tstates, st->tstates_cap, st->ntstates + 1, 64) == 0 &&
			    base_map_put(&st->tids, tid, (uint32_t)st->ntstates) == 0)
				st->tstates[st->ntstates++] = ts;
			if (!read_u64(t, ts + L->ts_next, &ts))
				break;
		}
		if (!read_u64(t, interp + L->in_next, &interp))
			return;
	}
}

/* The thread state of tid from the last walk, read into ts_buf and
 * checked (one read).  A thread not there (new, or gone) is marked for
 * the next walk, which unwind_python_prepare makes outside the stops: a
 * walk reads every thread state, far more than a stop may take. */
static uint64_t
tstate_of(struct unwind_target *t, struct py_state *st, pid_t tid, unsigned char *ts_buf)
{
	uint32_t at;
	if (base_map_get(&st->tids, (uint64_t)tid, &at)) {
		uint64_t ts = st->tstates[at], got;
		if (unwind_py_read(t, ts, ts_buf, st->L.ts_size) == 0) {
			memcpy(&got, ts_buf + st->L.ts_native_tid, 8);
			if (got == (uint64_t)tid)
				return ts;
		}
	}
	st->missed = true;
	return 0;
}

/* The data stack's top below top, copied in one read. */
struct stack_copy {
	uint64_t start;
	size_t len;
	const unsigned char *buf;
};

static void
copy_data_stack(struct unwind_target *t, struct py_state *st, const unsigned char *ts_buf,
		struct stack_copy *c)
{
	const struct py_layout *L = &st->L;
	uint64_t chunk, top;
	c->len = 0;
	if (L->ts_chunk == PY_NONE || L->ts_top == PY_NONE)
		return;
	memcpy(&chunk, ts_buf + L->ts_chunk, 8);
	memcpy(&top, ts_buf + L->ts_top, 8);
	if (!chunk || top <= chunk || top - chunk > (64u << 20) || (top & 7))
		return;
	uint64_t start = top - chunk > PY_STACK_COPY ? top - PY_STACK_COPY : chunk;
	if (!st->stack && !(st->stack = malloc(PY_STACK_COPY)))
		return;
	if (unwind_py_read(t, start, st->stack, (size_t)(top - start)) == 0) {
		c->start = start;
		c->len = (size_t)(top - start);
		c->buf = st->stack;
	}
}

/* A frame's bytes: from the copy when it holds them, else read. */
static bool
read_frame(struct unwind_target *t, const struct stack_copy *c, uint64_t f, void *buf,
	   size_t len)
{
	if (f & 7)
		return false;
	if (c->len && f >= c->start && f - c->start <= c->len && len <= c->len - (f - c->start)) {
		memcpy(buf, c->buf + (f - c->start), len);
		return true;
	}
	return unwind_py_read(t, f, buf, len) == 0;
}

/* The innermost frame of the thread state in ts_buf, 0 if none.  3.11's
 * and 3.12's cframe is a local of the eval loop's native frame: in the
 * stack copy s, most of the time. */
static uint64_t
current_frame(struct unwind_target *t, const struct py_layout *L, const unsigned char *ts_buf,
	      const struct stack_snapshot *s)
{
	uint64_t f = 0, cframe;
	if (L->ts_current != PY_NONE) {
		memcpy(&f, ts_buf + L->ts_current, 8);
		return f;
	}
	memcpy(&cframe, ts_buf + L->ts_cframe, 8);
	if (!cframe || (cframe & 7))
		return 0;
	uint64_t a = cframe + L->cf_current;
	if (s->stack && a >= s->stack_start && a - s->stack_start < s->stack_len &&
	    s->stack_len - (a - s->stack_start) >= 8) {
		memcpy(&f, s->stack + (a - s->stack_start), 8);
		return f;
	}
	return read_u64(t, a, &f) ? f : 0;
}

/* The frames from f outwards into out[0, max): how many; *cut when a
 * read failed or the bound was reached before the end. */
static size_t
read_chain(struct unwind_target *t, const struct py_layout *L, const struct stack_copy *c,
	   uint64_t f, struct py_raw_frame *out, size_t max, bool *cut)
{
	unsigned char fr[256];
	size_t n = 0;
	*cut = false;
	while (f) {
		if (n == max || L->fr_size > sizeof(fr) || !read_frame(t, c, f, fr, L->fr_size)) {
			*cut = true;
			break;
		}
		struct py_raw_frame *r = &out[n++];
		uint64_t prev;
		memcpy(&r->code, fr + L->fr_code, 8);
		memcpy(&r->instr, fr + L->fr_instr, 8);
		memcpy(&prev, fr + L->fr_previous, 8);
		r->flags = 0;
		r->pad = 0;
		if (L->fr_entry != PY_NONE && fr[L->fr_entry])
			r->flags |= PY_RAW_ENTRY;
		if (L->minor >= 12 && fr[L->fr_owner] == OWNED_BY_CSTACK)
			r->flags |= PY_RAW_SHIM;
		if (prev == f)
			break;        /* a loop on itself; longer ones end at max */
		f = prev;
	}
	return n;
}

size_t
unwind_python_chain_bytes(int max_depth)
{
	size_t n = max_depth > 0 && max_depth < PY_MAX_FRAMES ? (size_t)max_depth : PY_MAX_FRAMES;
	return sizeof(struct py_chain_head) + n * sizeof(struct py_raw_frame);
}

size_t
unwind_python_stop_read(void *target, const struct stack_snapshot *s, unsigned char *buf,
			size_t cap)
{
	pid_t tid = s->tid;
	struct unwind_target *t = target;
	struct py_state *st = t->python;
	struct py_chain_head h = { .magic = PY_CHAIN_MAGIC, .status = PY_CHAIN_NO_THREAD };
	unsigned char ts_buf[4096];
	/* Only what prepare found: nothing is looked for during a stop. */
	if (python_mode == UNWIND_PYTHON_OFF || !st || st->status != PY_READY ||
	    cap < sizeof(h) || st->L.ts_size > sizeof(ts_buf))
		return 0;
	size_t max = (cap - sizeof(h)) / sizeof(struct py_raw_frame);
	struct py_raw_frame *out = (struct py_raw_frame *)(buf + sizeof(h));
	uint64_t ts = tstate_of(t, st, tid, ts_buf);
	if (ts) {
		struct stack_copy c = { 0, 0, NULL };
		bool cut;
		copy_data_stack(t, st, ts_buf, &c);
		h.tstate = ts;
		h.n = (uint16_t)read_chain(t, &st->L, &c, current_frame(t, &st->L, ts_buf, s),
					   out, max < UINT16_MAX ? max : UINT16_MAX, &cut);
		h.status = cut ? PY_CHAIN_CUT : PY_CHAIN_OK;
	}
	memcpy(buf, &h, sizeof(h));
	return sizeof(h) + h.n * sizeof(struct py_raw_frame);
}

/* ---- 3. the splice ---------------------------------------------------- */

/* The chain of s: from its stop, or read now (a core; a thread read
 * without a stop).  Returns the frames in *out (malloc'd), or 0. */
static size_t
chain_of(struct unwind_target *t, const struct stack_snapshot *s,
	 struct py_raw_frame **out, unsigned char **own)
{
	struct py_chain_head h;
	*own = NULL;
	if (s->interp_len < sizeof(h)) {
		size_t cap = unwind_python_chain_bytes(PY_MAX_FRAMES);
		if (!(*own = malloc(cap)))
			return 0;
		/* No stop here (a core, a thread read blocked): the lists
		 * may be walked now. */
		struct py_state *st = t->python;
		refresh_threads(t, st);
		size_t len = unwind_python_stop_read(t, s, *own, cap);
		if (st->missed) {      /* a thread new since the last walk */
			refresh_threads(t, st);
			len = unwind_python_stop_read(t, s, *own, cap);
		}
		if (len < sizeof(h))
			return 0;
		memcpy(&h, *own, sizeof(h));
		*out = (struct py_raw_frame *)(*own + sizeof(h));
		return h.n;
	}
	memcpy(&h, s->interp, sizeof(h));
	if (h.magic != PY_CHAIN_MAGIC ||
	    s->interp_len < sizeof(h) + (size_t)h.n * sizeof(struct py_raw_frame))
		return 0;
	/* The buffer is the snapshot's, aligned as malloc aligns. */
	*out = (struct py_raw_frame *)(void *)(s->interp + sizeof(h));
	return h.n;
}

/* Is native frame i the eval loop's? */
static bool
is_eval(struct unwind_target *t, const struct py_state *st, const struct unwind_frame *frames,
	int i)
{
	uint64_t pc = frames[i].ip - (unwind_frame_is_caller(frames, i) ? 1 : 0);
	if (pc >= st->eval_lo && pc < st->eval_hi)
		return true;
	/* Its cold part (error paths), split off by the compiler, is named
	 * only where a symbol table has it (python3.11-dbg). */
	struct mapping *m = unwind_target_mapping(t, pc);
	if (!m || m->image != st->image || !m->bias_known)
		return false;
	uint64_t off;
	const char *name = unwind_elf_image_lookup(m->image, pc - m->bias, 0, &off);
	return name && strcmp(name, "_PyEval_EvalFrameDefault.cold") == 0;
}

/* The runs of chain[0, n): run k is [start[k], start[k + 1]) of chain,
 * innermost first, shims left out by the caller (PY_RAW_SHIM).  3.11: a
 * run ends with its entry frame; 3.12+: before a shim.  Returns the
 * number of runs (at most max). */
static int
cut_runs(const struct py_state *st, const struct py_raw_frame *chain, size_t n, size_t *start,
	 int max)
{
	int k = 0;
	size_t i = 0;
	while (i < n && k < max) {
		if (chain[i].flags & PY_RAW_SHIM) {
			i++;
			continue;
		}
		start[k] = i;
		while (i < n && !(chain[i].flags & PY_RAW_SHIM)) {
			bool entry = chain[i].flags & PY_RAW_ENTRY;
			i++;
			if (st->L.minor == 11 && entry)
				break;
		}
		start[++k] = i;
	}
	return k;
}

/* One Python frame of chain entry r, named (its line) through the code
 * cache; false when r is no code object. */
static bool
python_frame(struct unwind_target *t, struct py_state *st, const struct py_raw_frame *r,
	     uint64_t now, struct unwind_frame *f)
{
	const struct py_code *c = unwind_py_code(t, &st->codes, &st->L, st->code_type,
						 st->unicode_type, st->bytes_type, r->code, now);
	if (!c)
		return false;
	long lasti = -1;
	if (r->instr >= c->code_start)
		lasti = (long)((r->instr - c->code_start) / 2);
	else if (!st->L.instr_is_prev || r->instr + 2 != c->code_start)
		lasti = -2;
	f->ip = r->code;
	f->how = UNWIND_HOW_PYTHON;
	f->signal_frame = false;
	f->swapped = false;
	int line = lasti == -2 ? -1 :
		   c->linetable ? unwind_py_line(c->linetable, c->linetable_len,
						 c->firstlineno, lasti) : -1;
	f->line = line > 0 ? (uint32_t)line : 0;
	f->code_offset = lasti > 0 && lasti < INT32_MAX ? (uint32_t)lasti * 2 : 0;
	return true;
}

/* Match: native eval frames to runs, innermost first.  Returns false
 * (and counts a mismatch) when they do not pair. */
#define PY_MAX_RUNS 128
struct splice_plan {
	int eval_at[PY_MAX_RUNS + 1];  /* native index of the k-th eval frame */
	int nevals;
	size_t start[PY_MAX_RUNS + 1];
	int nruns;
	int skip;                 /* eval frames left native (innermost) */
};

static bool
plan_splice(struct unwind_target *t, struct py_state *st, const struct unwind_frame *frames,
	    int n, enum unwind_stop stop, const struct py_raw_frame *chain, size_t nchain,
	    struct splice_plan *p)
{
	p->nevals = 0;
	for (int i = 0; i < n && p->nevals <= PY_MAX_RUNS; i++)
		if (frames[i].how != UNWIND_HOW_PYTHON && is_eval(t, st, frames, i))
			p->eval_at[p->nevals++] = i;
	p->nruns = cut_runs(st, chain, nchain, p->start, PY_MAX_RUNS);
	p->skip = 0;
	if (p->nevals == p->nruns)
		return true;
	/* Entering or leaving the eval loop: its innermost call has no
	 * frame linked yet, or has none left. */
	if (p->nevals == p->nruns + 1) {
		p->skip = 1;
		return true;
	}
	/* The native walk ended early: the runs it reached. */
	if (p->nevals < p->nruns && stop != UNWIND_STOP_END) {
		p->nruns = p->nevals;
		return true;
	}
	return false;
}

int
unwind_python_splice(struct unwind_target *t, const struct stack_snapshot *s,
		     struct unwind_frame *frames, int n, int max, enum unwind_stop stop)
{
	struct py_state *st = state_of(t);
	if (!st || n <= 0)
		return n;
	struct py_raw_frame *chain;
	unsigned char *own;
	size_t nchain = chain_of(t, s, &chain, &own);
	struct splice_plan p;
	if (!nchain || !plan_splice(t, st, frames, n, stop, chain, nchain, &p)) {
		if (nchain)
			st->mismatches++;
		free(own);
		return n;
	}
	struct unwind_frame *out = malloc((size_t)max * sizeof(*out));
	if (!out) {
		free(own);
		return n;
	}
	uint64_t now = ptrace_clock_monotonic_ns();
	int o = 0, k = 0;
	for (int i = 0; i < n && o < max; i++) {
		bool eval = k < p.nruns + p.skip && p.eval_at[k] == i;
		if (!eval) {
			out[o++] = frames[i];
			continue;
		}
		int run = k++ - p.skip, o0 = o;
		if (run >= 0) {
			for (size_t j = p.start[run]; j < p.start[run + 1] && o < max; j++)
				if (python_frame(t, st, &chain[j], now, &out[o]))
					o++;
		}
		/* A run of no code object (damaged) leaves the native frame. */
		if ((o == o0 || python_mode == UNWIND_PYTHON_BESIDE) && o < max)
			out[o++] = frames[i];
	}
	memcpy(frames, out, (size_t)o * sizeof(*out));
	free(out);
	free(own);
	return o;
}

/* ---- names, the GIL --------------------------------------------------- */

bool
unwind_python_name(struct unwind_target *t, const struct unwind_frame *f,
		   struct unwind_python_name *out)
{
	struct py_state *st = t->python;
	if (f->how != UNWIND_HOW_PYTHON || !st || st->status != PY_READY)
		return false;
	const struct py_code *c = unwind_py_code(t, &st->codes, &st->L, st->code_type,
						 st->unicode_type, st->bytes_type, f->ip,
						 ptrace_clock_monotonic_ns());
	out->function = c ? c->qualname : "?";
	out->file = c ? c->file : "?";
	out->line = f->line;
	out->code = f->ip;
	out->offset = f->code_offset;
	return true;
}

pid_t
unwind_python_gil_holder(struct unwind_target *t)
{
	struct py_state *st = state_of(t);
	if (!st)
		return 0;
	const struct py_layout *L = &st->L;
	uint64_t gil = 0;
	if (L->rt_gil != PY_NONE) {
		gil = st->runtime + L->rt_gil;
	} else if (L->in_gil_ptr != PY_NONE) {
		uint64_t interp;
		if (!read_u64(t, st->runtime + L->rt_interp_head, &interp) || !interp ||
		    !read_u64(t, interp + L->in_gil_ptr, &gil))
			return 0;
	}
	/* struct _gil_runtime_state: interval, last_holder, locked. */
	uint64_t holder, locked;
	if (!gil || !read_u64(t, gil + 8, &holder) || !read_u64(t, gil + 16, &locked) ||
	    !(locked & 0xffffffffu) || !holder)
		return 0;
	uint64_t tid;
	if (!read_u64(t, holder + L->ts_native_tid, &tid) || !tid || tid >= 0x80000000u)
		return 0;
	return (pid_t)tid;
}
