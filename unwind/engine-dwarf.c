/* unwind/engine-dwarf.c - the cfi and auto engines: DWARF CFI walked by
 * stackspy's own interpreter (cfi-exec.c), for every architecture, live
 * or core, on any host.
 *
 * The walk is pure code over (registers, memory reader, module map): the
 * FDE comes from cfi-read.c (.eh_frame through its header or a table of
 * its own, then the .debug_frame of the module or of its separate debug
 * file), its rules from cfi-exec.c, whose bounds refuse a hostile table
 * (the walk stops there: "unwind table rejected"), the memory from
 * memory.c (the snapshot, the mapped files, the core's segments).  Around
 * a step: the table's signal trampoline (aarch64's vdso), a signal return
 * without CFI (musl), and, for auto, a frame without CFI by the steps of
 * the other engines, asked in the order engine-auto.c lists them.  Return addresses lose their
 * pointer-authentication bits (unwind_target_ra_mask).  libunwind was
 * this engine on live x86-64 until its evaluation of the target's bytes
 * proved unbounded (issue 32); bench/unwind-cost measured ours faster.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "base/base.h"
#include "ptrace/sample.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/memory.h"
#include "unwind/target.h"
#include "unwind/unwind.h"
#include "unwind/yield.h"

struct step_ctx {
	struct memory_reader *mr;
	const struct arch_regs *regs;
	unsigned nregs;
};

/* No code below this: Linux maps nothing in the first page
 * (vm.mmap_min_addr is 4096 at least; 32768 on 32-bit ARM, 65536 on
 * x86-64 by default). */
#define LOWEST_CODE 0x1000u

static int
ctx_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct step_ctx *c = ctx;
	return unwind_memory_read(c->mr, addr, buf, len);
}

static int
ctx_reg(void *ctx, uint64_t reg, uint64_t *val)
{
	struct step_ctx *c = ctx;
	if (reg >= c->nregs || !(c->regs->valid & (UINT64_C(1) << reg)))
		return -EINVAL;
	*val = c->regs->r[reg];
	return 0;
}

/* ---- the engine's state of a target ---------------------------------------
 * The FDEs found by address, while the memory map stays the same: a walk
 * asks for the FDE of each frame twice (is there CFI here, then its
 * rules), and samples of a thread meet the same return addresses again
 * and again; the lookup (.eh_frame_hdr's binary search, the CIE parsed
 * anew) was half of a walk's time (bench/unwind-cost, perf).  And the
 * walks kept (below). */
#define FDE_SLOTS  512
#define MEMO_SLOTS 256            /* walks kept per target, by ip and sp */

struct fde_slot {
	uint64_t addr;
	signed char found;        /* 0: empty, 1: f is addr's, -1: none */
	signed char cgo;          /* unwind_go_cgo_return of addr + 1 */
	struct cfi_fde f;
	uint64_t bias;
	const struct elf_image *img;
};

struct memo_entry;

struct dwarf_state {
	struct fde_slot fdes[FDE_SLOTS];
	struct memo_entry *memo[MEMO_SLOTS];
	struct memory_log log;
};

/* The engine's state of target t (struct unwinder's slot). */
#define DWARF(t) ((struct dwarf_state *)(t)->state[UNWIND_STATE_CFI])

/* The FDE covering the runtime address addr, and where its module is
 * loaded: .eh_frame, else .debug_frame.  0 or -ENOENT. */
static int
fde_lookup(struct unwind_target *t, uint64_t addr, struct fde_slot *e)
{
	struct mapping *m = unwind_target_mapping(t, addr);
	e->cgo = 0;
	if (!m || !m->image || !m->bias_known)
		return -ENOENT;
	e->bias = m->bias;
	e->img = m->image;
	if (unwind_cfi_find(m->image, addr - m->bias, &e->f) == 0 ||
	    unwind_cfi_find_debug(m->image, addr - m->bias, &e->f) == 0) {
		/* (For a return address, addr is one byte into its call.) */
		e->cgo = (signed char)unwind_go_cgo_return(m, addr + 1 - m->bias);
		return 0;
	}
	return -ENOENT;
}

/* fde_lookup through the target's cache of answers: the slot that holds
 * addr's (tmp where the target keeps none), valid until the next call,
 * or NULL where there is no FDE.  (A pointer, not a copy: the copy of an
 * FDE and its CIE was a tenth of a step.) */
static const struct fde_slot *
fde_for(struct unwind_target *t, uint64_t addr, struct fde_slot *tmp)
{
	struct dwarf_state *c = DWARF(t);
	struct fde_slot *e = c ? &c->fdes[base_mix64(addr) % FDE_SLOTS] : tmp;
	if (!c || !e->found || e->addr != addr) {
		e->addr = addr;
		e->found = fde_lookup(t, addr, e) == 0 ? 1 : -1;
	}
	return e->found > 0 ? e : NULL;
}

/* The stop for the interpreter's error r: a bound it keeps (cfi.h), or
 * otherwise. */
static enum unwind_stop
rejected(int r, enum unwind_stop otherwise)
{
	switch (r) {
	case -ELOOP: return UNWIND_STOP_CFI_LOOP;
	case -E2BIG: case -EOVERFLOW: case -EDOM: return UNWIND_STOP_CFI_REJECTED;
	}
	return otherwise;
}

/* Did the walk stop on a table stackspy refuses (no heuristic goes on
 * from a frame whose table is hostile)? */
static bool
stop_rejected(enum unwind_stop s)
{
	return s == UNWIND_STOP_CFI_LOOP || s == UNWIND_STOP_CFI_REJECTED;
}

int
unwind_dwarf_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	   bool exact, bool *signal, bool *switched, enum unwind_stop *stop)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t pc = regs->r[a->reg_ip];
	uint64_t at = exact ? pc : pc - 1;
	struct fde_slot tmp;
	struct cfi_rules rs;

	*signal = false;
	*switched = false;
	const struct fde_slot *e = fde_for(t, at, &tmp);
	if (!e)
		return 0;
	/* Go's asmcgocall, where C returns to it: its caller is on the
	 * goroutine's stack, which its CFI does not know (go-stack.c). */
	if (e->cgo && !exact && unwind_go_cgo_step(t, mr, regs, e->cgo) > 0) {
		*switched = true;
		return 1;
	}
	const struct elf_image *img = e->img;
	int r = unwind_cfi_rules_at(&e->f, at - e->bias, img->data[EI_CLASS] == ELFCLASS64 ? 8 : 4,
			     img->data[EI_DATA] == ELFDATA2MSB, &rs);
	if (r < 0) {
		*stop = rejected(r, UNWIND_STOP_NOINFO);
		return -1;
	}
	struct step_ctx c = { .mr = mr, .regs = regs, .nregs = a->nregs };
	struct cfi_env env = {
		.ctx = &c, .word_size = a->word_size, .big_endian = a->big_endian,
		.read = ctx_read, .reg = ctx_reg,
	};
	struct arch_regs out;
	r = unwind_cfi_apply(&rs, &env, a, regs, &out);
	if (r < 0) {
		*stop = r == -EFAULT ? UNWIND_STOP_MEMORY : rejected(r, UNWIND_STOP_BAD_FRAME);
		return -1;
	}
	if (!(out.valid & (UINT64_C(1) << a->reg_ip))) {
		/* The return address is undefined: glibc's _start and
		 * clone mark the outermost frame so. */
		*stop = UNWIND_STOP_END;
		return -1;
	}
	/* Signed where RA_SIGN_STATE says so (pac-ret; x30 of a frame 0
	 * between paciasp and autiasp too); stripped whatever it says, since
	 * no user address has a bit in the mask, and hand-written code may
	 * sign without saying so in its CFI. */
	out.r[a->reg_ip] &= ~unwind_target_ra_mask(t);
	*regs = out;
	*signal = rs.signal;
	return 1;
}

/* Is there an FDE for the runtime address addr (already pc - 1 for a
 * return address)? */
static bool
cfi_covers(struct unwind_target *t, uint64_t addr)
{
	struct fde_slot tmp;
	return fde_for(t, addr, &tmp) != NULL;
}

/* A signal return without CFI (arch->sigreturn: musl's __restore_rt, Go's
 * runtime.sigreturn__sigaction): is the code at ip one? */
static bool
sigreturn_code(struct memory_reader *mr, const struct arch *a, uint64_t ip)
{
	const struct arch_sigreturn *sr = a->sigreturn;
	unsigned char code[sizeof(sr->code)];

	return sr && sr->code_len <= sizeof(code) &&
	       unwind_memory_read(mr, ip, code, sr->code_len) >= 0 &&
	       memcmp(code, sr->code, sr->code_len) == 0;
}

/* If regs is at one (a handler has returned to it), make regs the
 * interrupted frame's and return true. */
static bool
sigreturn_frame(struct memory_reader *mr, const struct arch *a, struct arch_regs *regs)
{
	const struct arch_sigreturn *sr = a->sigreturn;
	uint64_t g[32];

	if (!sr || sr->nregs > 32 || !sigreturn_code(mr, a, regs->r[a->reg_ip]) ||
	    unwind_memory_read(mr, regs->r[a->reg_sp] + sr->regs_off, g,
			       sr->nregs * sizeof(g[0])) < 0)
		return false;
	for (unsigned i = 0; i < sr->nregs; i++) {
		if (sr->slots[i] < 0 || sr->slots[i] >= ARCH_NREGS)
			return false;
		regs->r[sr->slots[i]] = g[i];
		regs->valid |= UINT64_C(1) << sr->slots[i];
	}
	return true;
}

/* Where a walk took a frame from a scan up the stack, to go on from
 * there with the scan's next word when what followed went nowhere. */
struct scan_point {
	int n;                    /* frames[n] came from the scan (0: none) */
	struct arch_regs regs;    /* frames[n - 1]'s */
	uint64_t prev_sp;
	uint64_t next_from;       /* where the next scan starts */
};

/* A frame no CFI covers: the steps of the fallback list asked in turn,
 * each from the frame's registers (engine-auto.c gives auto's order and
 * why), a scan starting at scan_from.  1 when one stepped (*how, *sig
 * set, *scan_found where a scan took it, or 0), else 0 with *stop. */
static int
fallback_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	      bool exact, enum unwind_how prev_how, const frame_step_fn *steps,
	      uint64_t scan_from, enum unwind_how *how, bool *sig, enum unwind_stop *stop,
	      uint64_t *scan_found)
{
	struct frame_step f = {
		.t = t, .mr = mr, .regs = regs, .before = *regs, .exact = exact,
		.prev_how = prev_how, .how = *how, .stop = *stop, .fp = -1,
		.scan_from = scan_from,
	};
	*sig = false;
	for (size_t k = 0; steps[k]; k++) {
		*regs = f.before;
		f.scan_found = 0;
		if (steps[k](&f) > 0) {
			*how = f.how;
			*sig = f.sig;
			*scan_found = f.scan_found;
			return 1;
		}
	}
	*regs = f.before;
	*stop = f.fp >= 0 ? UNWIND_STOP_BAD_FRAME : f.stop;
	return 0;
}

/* The walk from frames[*n - 1] (regs), prev_sp the stack pointer of the
 * frame before; the first frame's scan, if it comes to one, starts at
 * scan_from.  *last: the first frame taken from a scan. */
static enum unwind_stop
walk_frames(struct unwind_target *t, const struct arch *a, struct memory_reader *mr,
	    struct arch_regs *regs, struct unwind_frame *frames, int *n, int max,
	    const frame_step_fn *fallback, uint64_t prev_sp, uint64_t scan_from,
	    struct scan_point *last)
{
	bool fp_fallback = fallback != NULL;

	for (; *n < max; scan_from = 0) {
		if (unwind_deadline_passed())
			return UNWIND_STOP_DEADLINE;
		/* frames[*n - 1] stopped anywhere (exact ip): the innermost,
		 * or one a signal interrupted.  Others are at a return
		 * address, looked up at ip - 1. */
		bool exact = *n == 1 || frames[*n - 2].signal_frame;
		uint64_t ip = frames[*n - 1].ip;
		uint64_t at = exact ? ip : ip - 1;
		enum unwind_how how = UNWIND_HOW_CFI;
		enum unwind_stop stop = UNWIND_STOP_NOINFO;
		bool sig = false, switched = false;
		int r = 0;

		if (!exact && !cfi_covers(t, at)) {
			/* A return address in memory known not to be code is
			 * no caller, and the frame just taken is none: the CFI
			 * of code that switched stacks, which does not hold
			 * there (Go's runtime.asmcgocall and newproc gave the
			 * g's address on the heap and a word of .data as
			 * frames).  After a signal frame the pc may be
			 * anywhere (a jump through a bad pointer).  Memory the
			 * map does not know is left to the steps below (a
			 * library loaded since the map was read), but not the
			 * first page, where Linux maps nothing (qemu-user's
			 * translated code gave 0x2).  Here, where no CFI
			 * covers it, not for every frame: the map's lookup
			 * cost 1 % of a walk. */
			const struct mapping *rm = unwind_target_mapping(t, at);
			if (rm ? !(rm->perms & MAPPING_X) : ip < LOWEST_CODE) {
				(*n)--;
				return UNWIND_STOP_BAD_FRAME;
			}
			/* A return address at a function's first
			 * instruction, with CFI there but not before it: no
			 * call put it there.  A context's start was made to
			 * look like a caller (makecontext's
			 * __start_context, which switches to the uc_link
			 * context and never returns): the outermost frame.
			 * (A signal's restorer is put there too, by the
			 * kernel: Go's runtime.sigreturn has CFI, and goes
			 * on.)  A return address right after a call is one,
			 * though: a noreturn call ends its function, and its
			 * return address is the next one's first byte.  (Only
			 * x86-64 tells calls apart here: elsewhere
			 * unwind_x86_plausible_ra says yes, and the walk goes on.) */
			if (cfi_covers(t, ip) && !sigreturn_code(mr, a, ip) &&
			    !unwind_x86_plausible_ra(t, mr, ip))
				return UNWIND_STOP_END;
		}

		/* The table's signal trampoline (aarch64's vdso, whose CFI
		 * gives only x29 and x30): through the saved registers. */
		int tramp = unwind_fp_sigtramp_step(t, mr, regs);
		if (tramp < 0)
			return UNWIND_STOP_BAD_FRAME;
		if (tramp > 0) {
			sig = true;
		} else if ((r = unwind_dwarf_step(t, mr, regs, exact, &sig, &switched, &stop)) < 0 &&
			   (stop == UNWIND_STOP_END || stop_rejected(stop) || !fp_fallback)) {
			return stop;
		} else if (r <= 0) {
			/* No CFI covers the pc (or, for auto, CFI that cannot
			 * be followed: the heuristics below try).  The
			 * program's entry point (_start), which nothing calls:
			 * the outermost frame of the main thread (musl's crt1
			 * has no CFI to say so). */
			if (r == 0 && unwind_at_entry(t, at))
				return UNWIND_STOP_END;
			if (!exact && sigreturn_frame(mr, a, regs)) {
				/* A handler returns here: the next frame is
				 * the one the signal interrupted. */
				sig = true;
			} else if (!fp_fallback) {
				return UNWIND_STOP_NOINFO;
			} else {
				struct arch_regs before = *regs;
				uint64_t found = 0;
				if (!fallback_step(t, mr, regs, exact, frames[*n - 1].how, fallback,
						   scan_from, &how, &sig, &stop, &found))
					return stop;
				if (found && last->n == 0) {
					*last = (struct scan_point){ .n = *n, .regs = before,
						.prev_sp = prev_sp, .next_from = found + a->word_size };
				}
			}
		}
		uint64_t new_ip = regs->r[a->reg_ip], new_sp = regs->r[a->reg_sp];
		/* A pc of 0 ends the stack, unless a signal interrupted it
		 * there: a call through a NULL pointer, whose caller is
		 * found from [sp] next (engine-x86.c). */
		if (new_ip == 0 && !sig)
			/* (After a frame taken from a scan, a 0 read where a
			 * return address would be is no end: a guess that
			 * went wrong.) */
			return last->n > 0 ? UNWIND_STOP_BAD_FRAME : UNWIND_STOP_END;
		/* The stack only grows one way (a signal frame on an
		 * alternate stack excepted), and a frame that does not move
		 * would repeat for ever. */
		if (new_sp < prev_sp && !sig && !switched)
			return UNWIND_STOP_BAD_FRAME;
		if (new_sp == prev_sp && new_ip == ip)
			return UNWIND_STOP_BAD_FRAME;
		prev_sp = new_sp;
		frames[*n - 1].signal_frame = sig;
		frames[*n].ip = new_ip;
		frames[*n].how = how;
		frames[*n].signal_frame = false;
		(*n)++;
	}
	return UNWIND_STOP_DEPTH;
}

/* Walks that go on from a later word of a scan, at most (each a whole
 * walk of the rest, bounded as every walk is). */
#define SCAN_RETRIES 8
/* A walk that went on this many frames from a scan's guess before it
 * ended is taken as it is: that many frames held. */
#define SCAN_UNDO_FRAMES 8

static enum unwind_stop
dwarf_walk(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	   struct unwind_frame *frames, int *n, int max, const frame_step_fn *fallback)
{
	const struct arch *a = unwind_target_arch(t);
	struct scan_point last;          /* (not all zeroed: a walk's cost) */
	last.n = 0;
	enum unwind_stop stop = walk_frames(t, a, mr, regs, frames, n, max, fallback,
					    regs->r[a->reg_sp], 0, &last);
	/* A frame taken from a scan up the stack is a guess, and the first
	 * word that looks like a return address may be one a call left
	 * there long ago (qemu's translated code, whose frame's words are
	 * never cleared, gave stale glib frames, then "implausible frame").
	 * Where the walk from it went nowhere, the next word that looks
	 * like one is tried, and a walk that reaches the outermost frame is
	 * taken instead; else the first one stays, up to the guess where it
	 * ended at an implausible frame. */
	int first_n = *n, from = last.n, nkept = first_n - from;
	if (from == 0 || nkept > SCAN_UNDO_FRAMES || stop == UNWIND_STOP_END ||
	    stop == UNWIND_STOP_DEPTH || stop == UNWIND_STOP_DEADLINE)
		return stop;
	/* The first walk's frames, to put back where no later one holds
	 * (none where they are not shown: the walk ended at an implausible
	 * frame soon after the guess, and went astray there). */
	bool astray = stop == UNWIND_STOP_BAD_FRAME;
	struct unwind_frame kept[SCAN_UNDO_FRAMES];
	if (!astray)
		memcpy(kept, frames + from, (size_t)nkept * sizeof(*frames));
	for (int retry = 0; retry < SCAN_RETRIES; retry++) {
		struct arch_regs r = last.regs;
		*n = from;
		struct scan_point again;
		again.n = 0;
		enum unwind_stop s = walk_frames(t, a, mr, &r, frames, n, max, fallback,
						 last.prev_sp, last.next_from, &again);
		if (s == UNWIND_STOP_END || s == UNWIND_STOP_DEPTH) {
			*regs = r;
			return s;
		}
		if (again.n != from || s == UNWIND_STOP_DEADLINE)
			break;          /* the scan found nothing further up */
		last.next_from = again.next_from;
	}
	*n = from;
	if (!astray) {
		memcpy(frames + from, kept, (size_t)nkept * sizeof(*frames));
		*n = first_n;
	}
	return stop;
}

/* ---- walks of identical snapshots -----------------------------------------
 * A thread sampled again where it was (a loop, a thread blocked in the same
 * call) gives a snapshot whose walk reads the same registers and the same
 * stack words as one already walked: its frames are the same, since the
 * walk is a function of what it reads (the rest comes from the files and
 * the vdso, which do not change while the memory map stays the same).  So
 * a walk of a live process logs the stack words it read (memory.c), and a
 * later walk from the same registers whose snapshot holds the same values
 * there takes the frames of the first.  A walk that read live memory
 * (process_vm_readv: heap, JIT code) is not kept. */
struct memo_entry {
	struct arch_regs regs;    /* the innermost frame's, all of them */
	int max;
	bool fp_fallback;
	enum unwind_stop stop;
	int nframes;
	size_t nreads;
	struct memory_log_read *reads;  /* nreads of them, then ... */
	struct unwind_frame *frames;    /* ... nframes: one allocation */
};

static void *
dwarf_state_new(struct unwind_target *t)
{
	(void)t;
	return calloc(1, sizeof(struct dwarf_state));
}

static void
dwarf_state_flush(void *state)
{
	struct dwarf_state *c = state;
	/* A kept walk read the files of the old map, and an address may
	 * now be another module's. */
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(c->memo[i]);
		c->memo[i] = NULL;
	}
	memset(c->fdes, 0, sizeof(c->fdes));
}

static void
dwarf_state_free(void *state)
{
	dwarf_state_flush(state);
	free(state);
}

static uint32_t
memo_slot(const struct arch *a, const struct arch_regs *regs)
{
	uint64_t ip = regs->r[a->reg_ip], sp = regs->r[a->reg_sp];
	return (uint32_t)(base_mix64(ip ^ (sp << 17) ^ (sp >> 4)) % MEMO_SLOTS);
}

static bool
same_regs(const struct arch *a, const struct arch_regs *x, const struct arch_regs *y)
{
	return x->valid == y->valid &&
	       memcmp(x->r, y->r, a->nregs * sizeof(x->r[0])) == 0;
}

/* The kept walk that this snapshot's would repeat, or NULL. */
static const struct memo_entry *
memo_find(struct dwarf_state *c, const struct arch *a, const struct arch_regs *regs,
	  const struct stack_snapshot *s, int max, bool fp_fallback)
{
	const struct memo_entry *e = c->memo[memo_slot(a, regs)];
	if (!e || e->max != max || e->fp_fallback != fp_fallback || !same_regs(a, &e->regs, regs))
		return NULL;
	for (size_t i = 0; i < e->nreads; i++) {
		const struct memory_log_read *r = &e->reads[i];
		uint64_t v = 0;
		if (r->addr < s->stack_start || !span_inside(s->stack_len, r->addr - s->stack_start, r->len))
			return NULL;
		memcpy(&v, s->stack + (r->addr - s->stack_start), r->len);
		if (v != r->value)
			return NULL;
	}
	return e;
}

static void
memo_keep(struct dwarf_state *c, const struct arch *a, const struct arch_regs *regs, int max,
	  bool fp_fallback, enum unwind_stop stop, const struct unwind_frame *frames, int n)
{
	const struct memory_log *log = &c->log;
	size_t size = log->n * sizeof(log->r[0]) + (size_t)n * sizeof(*frames);
	struct memo_entry *e = malloc(sizeof(*e) + size);
	if (!e)
		return;  /* only slower */
	*e = (struct memo_entry){
		.regs = *regs, .max = max, .fp_fallback = fp_fallback, .stop = stop,
		.nframes = n, .nreads = log->n,
	};
	e->reads = (struct memory_log_read *)(e + 1);
	e->frames = (struct unwind_frame *)(e->reads + log->n);
	memcpy(e->reads, log->r, log->n * sizeof(*e->reads));
	memcpy(e->frames, frames, (size_t)n * sizeof(*frames));
	uint32_t slot = memo_slot(a, regs);
	free(c->memo[slot]);
	c->memo[slot] = e;
}

enum unwind_stop
unwind_dwarf_walk_with(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
		struct unwind_frame *frames, int *n, int max, const frame_step_fn *fallback)
{
	struct dwarf_state *c = DWARF(t);
	const struct arch *a = unwind_target_arch(t);
	bool fp_fallback = fallback != NULL;
	/* Where the target's maps can change (a live process, sampled again
	 * and again); a core is walked once. */
	bool memo = c && t->ops->read_maps && mr->snap && mr->snap->stack && *n == 1 &&
		    !t->swapped_end;
	struct arch_regs first = *regs;
	if (memo) {
		const struct memo_entry *e = memo_find(c, a, regs, mr->snap, max, fp_fallback);
		if (e) {
			memcpy(frames, e->frames, (size_t)e->nframes * sizeof(*frames));
			*n = e->nframes;
			return e->stop;
		}
		c->log.ok = true;
		c->log.n = 0;
		mr->log = &c->log;
	}
	unsigned generation = t->generation;
	enum unwind_stop stop = dwarf_walk(t, mr, regs, frames, n, max, fallback);
	mr->log = NULL;
	/* A map reloaded during the walk may have changed what it read. */
	if (memo && c->log.ok && t->generation == generation)
		memo_keep(c, a, &first, max, fp_fallback, stop, frames, *n);
	return stop;
}

static enum unwind_stop
walk_cfi(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	 struct unwind_frame *frames, int *n, int max)
{
	return unwind_dwarf_walk_with(t, mr, regs, frames, n, max, NULL);
}

const struct unwinder unwinder_cfi = {
	.first_how = UNWIND_HOW_CFI,
	.walk = walk_cfi,
	.slot = UNWIND_STATE_CFI,
	.init = dwarf_state_new,
	.flush = dwarf_state_flush,
	.fini = dwarf_state_free,
};
