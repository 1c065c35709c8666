/* unwind/engine-cfi.c - DWARF CFI through libunwind's remote API, with our
 * own accessors.
 *
 * libunwind-ptrace's _UPT_* accessors read the target one PTRACE_PEEKDATA
 * per word and re-open ELF files at every module switch: 68 us for a short
 * stack, 2.7 ms for a deep one.  Ours serve reads from the stack snapshot
 * and the mmap'd files (memory.c) and find_proc_info from each module's
 * .eh_frame_hdr binary-search table, so an unwind costs microseconds and
 * never touches the (running again) target.
 *
 * Where no .eh_frame covers a PC (Go binaries have none; C built with
 * -fno-asynchronous-unwind-tables has only the startup files'), the
 * module's .debug_frame is read, rewritten as .eh_frame (debug-frame.c)
 * and served by access_mem at a made-up address, DEBUG_FRAME_BASE and up,
 * that no process can map: libunwind then parses it as it parses any
 * remote .eh_frame.
 */
#include "config.h"

#include <elf.h>
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

#ifdef HAVE_LIBUNWIND

#include <libunwind.h>

/* Exported by libunwind but not declared in its headers; it is what
 * _UPT_find_proc_info itself calls. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);

/* Where the rewritten .debug_frame of table slot i is served: above any
 * user address of x86-64 and aarch64 (47 to 56 bits), one 64 GiB window
 * per slot. */
#define DEBUG_FRAME_BASE  0x4000000000000000ull
#define DEBUG_FRAME_SHIFT 36

/* A module's CFI rewritten with a table (debug-frame.c), built on first
 * use for the bias the module is loaded with. */
struct cfi_rewrite {
	bool tried;
	struct debug_frame d;     /* d.buf NULL: none */
	uint64_t bias;            /* the bias it was built for */
	uint64_t base;            /* the address it is served at */
};

/* One module's binary-search tables, located once. */
struct cfi_table {
	const struct elf_image *image;
	bool usable;
	uint64_t hdr_vaddr;       /* ELF vaddr of .eh_frame_hdr */
	uint64_t table_vaddr;     /* ELF vaddr of the sorted table */
	uint64_t fde_count;
	uint64_t lo, hi;          /* ELF vaddr range of the PT_LOADs */
	/* .debug_frame, built on the first PC .eh_frame does not cover, and
	 * .eh_frame with a table of its own when there is no .eh_frame_hdr
	 * (static links), served in the lower and upper half of the slot's
	 * window: */
	struct cfi_rewrite df, ef;
};

/* ---- unwinds of identical snapshots ---------------------------------------
 * A thread sampled again where it was (a loop, a thread blocked in the same
 * call) gives a snapshot whose walk reads the same registers and the same
 * stack words as one already walked: its frames are the same, since the
 * walk is a function of what it reads (the rest comes from the files and
 * the vdso, which do not change while the memory map stays the same).  So
 * each walk logs what it read from the registers and the snapshot, and a
 * later walk from the same ip and sp whose registers and snapshot hold the
 * same values there takes the frames of the first, without libunwind
 * (whose steps cost microseconds each, and two sigprocmask calls each under
 * UNW_CACHE_GLOBAL).  A walk that read live memory (process_vm_readv: heap,
 * JIT code), or stepped by other means than unw_step (frame pointers,
 * signal trampolines without CFI, aarch64), is not kept. */
#define MEMO_SLOTS     256        /* walks kept per target, by ip and sp */
#define MEMO_READS_MAX 256        /* a walk reading more is not kept */

struct memo_read {
	uint64_t addr;            /* stack address, or register number ... */
	uint64_t value;
	bool is_reg;              /* ... when this is set */
};

/* One kept walk: its key, what it read, and what it found. */
struct memo_entry {
	uint64_t ip, sp;
	int max;
	bool fp_fallback;
	enum unwind_stop stop;
	int nframes;
	size_t nreads;
	struct memo_read *reads;      /* nreads of them, then ... */
	struct unwind_frame *frames;  /* ... nframes: one allocation */
};

/* What the walk being done read so far. */
struct memo_log {
	bool ok;                  /* still fit to be kept */
	size_t n;
	struct memo_read r[MEMO_READS_MAX];
};

/* cfi_covers' answers, by ip, while the memory map stays the same: the
 * lookup is a binary search of the module's table through access_mem,
 * and a dump of a thread pool asks it for the same few return addresses
 * thousands of times (12% of a dump of 1,000 parked threads). */
#define COVERS_SLOTS 512

struct covers_entry {
	uint64_t ip;
	signed char covered;      /* 0: empty slot, 1: yes, -1: no */
};

struct cfi_state {
	unw_addr_space_t as;
	struct covers_entry covers[COVERS_SLOTS];
	struct cfi_table *tables;
	size_t ntables, cap;
	size_t last;              /* index of the last table hit */
	struct memo_entry *memo[MEMO_SLOTS];
	struct memo_log log;
};

/* The engine's state of target t (struct unwinder's slot). */
#define CFI(t) ((struct cfi_state *)(t)->state[UNWIND_STATE_CFI])

/* What the accessors get as their `arg`. */
struct cfi_ctx {
	struct unwind_target *t;
	struct memory_reader *mr;
	struct arch_regs *regs;
	struct memo_log *log;     /* NULL: the walk is not logged */
};

static void
table_locate(struct cfi_table *tb, const struct mapping *m)
{
	const struct elf_image *img = m->image;
	tb->usable = false;
	tb->lo = UINT64_MAX;
	tb->hi = 0;
	for (size_t i = 0; i < img->nsegs; i++) {
		if (img->segs[i].vaddr < tb->lo)
			tb->lo = img->segs[i].vaddr;
		if (img->segs[i].vaddr + img->segs[i].memsz > tb->hi)
			tb->hi = img->segs[i].vaddr + img->segs[i].memsz;
	}
	/* libunwind's remote table format is the linker's usual one, what
	 * cfi_hdr_read takes. */
	struct cfi_hdr h;
	if (img->nsegs == 0 || !cfi_hdr_read(img, &h) || h.be)
		return;
	tb->hdr_vaddr = h.hdr_vaddr;
	tb->table_vaddr = h.table_vaddr;
	tb->fde_count = h.count;
	tb->usable = true;
}

static struct cfi_table *
table_for(struct cfi_state *c, const struct mapping *m)
{
	if (c->last < c->ntables && c->tables[c->last].image == m->image)
		return &c->tables[c->last];
	for (size_t i = 0; i < c->ntables; i++) {
		if (c->tables[i].image == m->image) {
			c->last = i;
			return &c->tables[i];
		}
	}
	if (BASE_GROW(c->tables, c->cap, c->ntables + 1, 16) < 0)
		return NULL;
	struct cfi_table *tb = &c->tables[c->ntables];
	memset(tb, 0, sizeof(*tb));
	tb->image = m->image;
	table_locate(tb, m);
	c->last = c->ntables++;
	return tb;
}

/* rw, tb's CFI rewritten by build (.debug_frame, or .eh_frame without its
 * header) for a module loaded with bias, served at a made-up address in
 * table slot `slot`'s window (half: which half); NULL if there is none. */
static const struct debug_frame *
rewrite_for(struct cfi_table *tb, size_t slot, uint64_t bias, struct cfi_rewrite *rw,
	    unsigned half,
	    int (*build)(const struct elf_image *, uint64_t, uint64_t, struct debug_frame *))
{
	if (rw->tried && rw->bias == bias)
		return rw->d.buf ? &rw->d : NULL;
	/* Built for another bias (the module was mapped again elsewhere):
	 * the FDE starts in it are absolute. */
	debug_frame_free(&rw->d);
	rw->tried = true;
	rw->bias = bias;
	if (tb->lo >= tb->hi || tb->hi - tb->lo > INT32_MAX - 8)
		return NULL;
	/* The table holds 32-bit offsets from the base: its low 32 bits
	 * are those of the module's start, so every PC of the module is
	 * [0, 2 GiB) above it modulo 2^32, which is how libunwind compares. */
	uint64_t start = (tb->lo + bias) & ~(uint64_t)7;
	rw->base = DEBUG_FRAME_BASE + ((uint64_t)slot << DEBUG_FRAME_SHIFT) +
		   ((uint64_t)half << (DEBUG_FRAME_SHIFT - 1)) + (start & 0xffffffffu);
	if (build(tb->image, bias, rw->base, &rw->d) < 0)
		return NULL;
	return &rw->d;
}

/* A word of the rewrite rw, if addr is in it. */
static bool
rewrite_read(const struct cfi_rewrite *rw, uint64_t addr, unw_word_t *valp)
{
	if (!rw->d.buf || addr < rw->base || !span_inside(rw->d.len, addr - rw->base, sizeof(*valp)))
		return false;
	memcpy(valp, rw->d.buf + (addr - rw->base), sizeof(*valp));
	return true;
}

/* Serve a read at the made-up addresses of the rewritten .debug_frames
 * and .eh_frames.  Returns 0, or -1 when addr is not in one. */
static int
debug_frame_read(struct cfi_state *c, uint64_t addr, unw_word_t *valp)
{
	uint64_t slot = (addr - DEBUG_FRAME_BASE) >> DEBUG_FRAME_SHIFT;
	if (slot >= c->ntables)
		return -1;
	const struct cfi_table *tb = &c->tables[slot];
	return rewrite_read(&tb->df, addr, valp) || rewrite_read(&tb->ef, addr, valp) ? 0 : -1;
}

/* Search tb's rewrite rw (made by rewrite_for) for ip; -UNW_ENOINFO when
 * there is none. */
static int
search_rewrite(unw_addr_space_t as, unw_word_t ip, struct cfi_table *tb, size_t slot,
	       const struct mapping *m, struct cfi_rewrite *rw, unsigned half,
	       int (*build)(const struct elf_image *, uint64_t, uint64_t, struct debug_frame *),
	       unw_proc_info_t *pi, int need_unwind_info, void *arg)
{
	const struct debug_frame *d = rewrite_for(tb, slot, m->bias, rw, half, build);
	unw_dyn_info_t di;

	if (!d)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = tb->lo + m->bias;
	di.end_ip = tb->hi + m->bias;
	di.u.rti.segbase = rw->base;
	di.u.rti.table_data = rw->base + d->table_off;
	di.u.rti.table_len = d->count * 8 / sizeof(unw_word_t);
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need_unwind_info, arg);
}

static int
find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
	       int need_unwind_info, void *arg)
{
	struct cfi_ctx *ctx = arg;
	struct cfi_state *c = CFI(ctx->t);
	/* Reading the table may re-read the memory map (a read that misses
	 * it); m stays valid all the same until unwind_walk returns
	 * (unwind/target.h, "Who owns what"). */
	const struct mapping *m = unwind_target_mapping(ctx->t, ip);
	if (!m || !m->image || !m->bias_known)
		return -UNW_ENOINFO;
	struct cfi_table *tb = table_for(c, m);
	if (!tb)
		return -UNW_ENOINFO;
	size_t slot = (size_t)(tb - c->tables);
	unw_dyn_info_t di;
	int r = -UNW_ENOINFO;
	if (tb->usable) {
		memset(&di, 0, sizeof(di));
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.start_ip = tb->lo + m->bias;
		di.end_ip = tb->hi + m->bias;
		di.u.rti.segbase = tb->hdr_vaddr + m->bias;
		di.u.rti.table_data = tb->table_vaddr + m->bias;
		/* In words: each entry is two 32-bit values. */
		di.u.rti.table_len = tb->fde_count * 8 / sizeof(unw_word_t);
		r = UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi,
						       need_unwind_info, arg);
		if (r != -UNW_ENOINFO)
			return r;
	} else {
		/* No .eh_frame_hdr (a static link): .eh_frame's own table. */
		r = search_rewrite(as, ip, tb, slot, m, &tb->ef, 1, eh_frame_build, pi,
				   need_unwind_info, arg);
		if (r != -UNW_ENOINFO)
			return r;
	}
	return search_rewrite(as, ip, tb, slot, m, &tb->df, 0, debug_frame_build, pi,
			      need_unwind_info, arg);
}

static void
put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* libunwind frees table-format unwind info itself. */
}

static int
get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

static void
memo_note(struct memo_log *log, uint64_t addr, uint64_t value, bool is_reg)
{
	if (!log->ok)
		return;
	if (log->n == MEMO_READS_MAX) {
		log->ok = false;
		return;
	}
	log->r[log->n++] = (struct memo_read){ .addr = addr, .value = value, .is_reg = is_reg };
}

static bool
snapshot_holds(const struct stack_snapshot *s, uint64_t addr, size_t len)
{
	return s && s->stack && addr >= s->stack_start &&
	       span_inside(s->stack_len, addr - s->stack_start, len);
}

/* Was the read of len bytes at addr served by something that stays as it
 * is while the memory map does (memory.c's order: the vdso copy, then a
 * read-only mapping of an mmap'd file), not by the live process? */
static bool
read_is_fixed(struct unwind_target *t, uint64_t addr, size_t len)
{
	if (t->vdso && addr >= t->vdso_start &&
	    span_inside(t->vdso_end - t->vdso_start, addr - t->vdso_start, len))
		return true;
	const struct mapping *m = unwind_target_mapping(t, addr);
	return m && m->image && m->image->mmapped && !(m->perms & MAPPING_W) &&
	       span_inside(m->end - m->start, addr - m->start, len) &&
	       span_inside(m->image->size, addr - m->start + m->offset, len);
}

static int
access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write, void *arg)
{
	struct cfi_ctx *ctx = arg;
	if (write)
		return -UNW_EINVAL;
	if (addr >= DEBUG_FRAME_BASE)
		return debug_frame_read(CFI(ctx->t), addr, valp) < 0 ? -UNW_EINVAL : 0;
	int r = memory_read(ctx->mr, addr, valp, sizeof(*valp));
	if (ctx->log) {
		if (r < 0)
			ctx->log->ok = false;
		else if (snapshot_holds(ctx->mr->snap, addr, sizeof(*valp)))
			memo_note(ctx->log, addr, *valp, false);
		else if (!read_is_fixed(ctx->t, addr, sizeof(*valp)))
			ctx->log->ok = false;
	}
	return r < 0 ? -UNW_EINVAL : 0;
}

static int
access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write, void *arg)
{
	struct cfi_ctx *ctx = arg;
	if (reg < 0 || reg >= ARCH_NREGS)
		return -UNW_EBADREG;
	if (write) {
		ctx->regs->r[reg] = *valp;
		if (ctx->log)
			ctx->log->ok = false;
	} else {
		*valp = ctx->regs->r[reg];
		if (ctx->log)
			memo_note(ctx->log, (uint64_t)reg, *valp, true);
	}
	return 0;
}

static int
access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int
resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int
get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
	      unw_word_t *off, void *arg)
{
	/* Names come from unwind_symbolize(), with our caches. */
	return -UNW_ENOINFO;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

static void *
cfi_state_new(struct unwind_target *t)
{
	struct cfi_state *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->as = unw_create_addr_space(&accessors, 0);
	if (!c->as) {
		free(c);
		return NULL;
	}
	unw_set_caching_policy(c->as, UNW_CACHE_GLOBAL);
	return c;
}

static void
memo_clear(struct cfi_state *c)
{
	for (size_t i = 0; i < MEMO_SLOTS; i++) {
		free(c->memo[i]);
		c->memo[i] = NULL;
	}
}

static void
cfi_state_flush(void *state)
{
	struct cfi_state *c = state;

	if (!c)
		return;
	/* A kept walk read the files of the old map. */
	memo_clear(c);
	memset(c->covers, 0, sizeof(c->covers));
	unw_flush_cache(c->as, 0, 0);
	/* Tables point at images, which stay cached; the biases may have
	 * changed, but tables only store ELF vaddrs. */
}

static void
cfi_state_free(void *state)
{
	struct cfi_state *c = state;

	if (!c)
		return;
	unw_destroy_addr_space(c->as);
	memo_clear(c);
	for (size_t i = 0; i < c->ntables; i++) {
		debug_frame_free(&c->tables[i].df.d);
		debug_frame_free(&c->tables[i].ef.d);
	}
	free(c->tables);
	free(c);
}

/* Is there an FDE for ip?  ip is the address to look up (already ip - 1
 * for return addresses). */
static bool
cfi_covers(struct cfi_ctx *ctx, uint64_t ip)
{
	struct cfi_state *c = CFI(ctx->t);
	struct covers_entry *e = &c->covers[(ip ^ (ip >> 9)) % COVERS_SLOTS];
	if (e->covered && e->ip == ip)
		return e->covered > 0;
	unw_proc_info_t pi;
	memset(&pi, 0, sizeof(pi));
	bool yes = find_proc_info(c->as, ip, &pi, 0, ctx) == 0;
	*e = (struct covers_entry){ .ip = ip, .covered = yes ? 1 : -1 };
	return yes;
}

/* A signal trampoline without CFI (arch->sigreturn; glibc's __restore_rt
 * has CFI, which libunwind follows): is the code at ip one? */
static bool
sigreturn_code(struct memory_reader *mr, const struct arch *a, uint64_t ip)
{
	const struct arch_sigreturn *sr = a->sigreturn;
	unsigned char code[sizeof(sr->code)];

	return sr && memory_read(mr, ip, code, sr->code_len) >= 0 &&
	       memcmp(code, sr->code, sr->code_len) == 0;
}

/* If regs is at one (the handler has returned to it), make regs the
 * interrupted frame's and return true. */
static bool
sigreturn_frame(struct memory_reader *mr, const struct arch *a, struct arch_regs *regs)
{
	const struct arch_sigreturn *sr = a->sigreturn;
	uint64_t g[32];

	if (!sr || sr->nregs > 32 || !a->libunwind_slots ||
	    !sigreturn_code(mr, a, regs->r[a->reg_ip]) ||
	    memory_read(mr, regs->r[a->reg_sp] + sr->regs_off, g, sr->nregs * sizeof(g[0])) < 0)
		return false;
	for (unsigned i = 0; i < sr->nregs; i++)
		regs->r[sr->slots[i]] = g[i];
	return true;
}

static void
cursor_regs(const struct arch *a, unw_cursor_t *cur, struct arch_regs *regs)
{
	for (int i = 0; i < ARCH_NREGS; i++) {
		unw_word_t v;
		if (unw_get_reg(cur, i, &v) == 0)
			regs->r[i] = v;
	}
	/* libunwind for aarch64 keeps the pc of a frame it stepped to only
	 * as UNW_REG_IP: its slot (UNW_AARCH64_PC) still reads the first
	 * frame's. */
	unw_word_t v;
	if (unw_get_reg(cur, UNW_REG_IP, &v) == 0)
		regs->r[a->reg_ip] = v;
	if (unw_get_reg(cur, UNW_REG_SP, &v) == 0)
		regs->r[a->reg_sp] = v;
}

static enum unwind_stop
walk_steps(struct cfi_ctx *cx, struct unwind_frame *frames, int *n, int max, bool fp_fallback)
{
	struct unwind_target *t = cx->t;
	struct memory_reader *mr = cx->mr;
	struct arch_regs *regs = cx->regs;
	struct cfi_ctx ctx = *cx;
	unw_cursor_t cur;
	if (unw_init_remote(&cur, CFI(t)->as, &ctx) < 0)
		return UNWIND_STOP_NOINFO;
	const struct arch *a = unwind_target_arch(t);
	uint64_t prev_sp = regs->r[a->reg_sp];
	bool exact_ip = true;   /* frames[0] and frames after a signal frame */
	/* regs hold the current frame's registers (the cursor was made from
	 * them, no unw_step since): read back through libunwind, aarch64's
	 * x30 came back 0 after a signal frame, and the link register rule
	 * of a call through NULL had nothing to go on. */
	bool regs_current = true;

	while (*n < max) {
		uint64_t ip = frames[*n - 1].ip;
		bool covered = cfi_covers(&ctx, exact_ip ? ip : ip - 1);
		/* A return address at a function's first instruction, with
		 * CFI there but not before it: no call put it there.  A
		 * context's start was made to look like a caller
		 * (makecontext's __start_context, which switches to the
		 * uc_link context and never returns): the outermost frame.
		 * (A signal's restorer is put there too, by the kernel: Go's
		 * runtime.sigreturn has CFI, and goes on.) */
		if (!covered && !exact_ip && cfi_covers(&ctx, ip) && !sigreturn_code(mr, a, ip))
			return UNWIND_STOP_END;
		/* The program's entry point (_start, which nothing calls),
		 * where no CFI says so (musl's crt1 has none): the outermost
		 * frame of the main thread. */
		if (!covered && unwind_at_entry(t, exact_ip ? ip : ip - 1))
			return UNWIND_STOP_END;
		uint64_t new_ip, new_sp;
		enum unwind_how how;
		bool sig = false;

		int tramp = 0, r = 0;
		if (a->sigtramp) {
			/* aarch64: the vdso trampoline's CFI restores only x29
			 * and x30, and libunwind's unw_is_signal_frame answers
			 * for the frame the cursor is at, not (as on x86-64)
			 * for the one it has left: the table's trampoline is
			 * stepped here, through the saved registers. */
			if (!regs_current)
				cursor_regs(a, &cur, regs);
			regs_current = true;
			tramp = fp_sigtramp_step(t, mr, regs);
			if (tramp < 0)
				return UNWIND_STOP_BAD_FRAME;
		}
		if (tramp > 0) {
			if (ctx.log)
				ctx.log->ok = false;
			if (unw_init_remote(&cur, CFI(t)->as, &ctx) < 0)
				return UNWIND_STOP_NOINFO;
			sig = true;
			frames[*n - 1].signal_frame = true;
			new_ip = regs->r[a->reg_ip];
			new_sp = regs->r[a->reg_sp];
			how = UNWIND_HOW_CFI;
		} else if (covered && (regs_current = false, r = unw_step(&cur)) >= 0) {
			if (r == 0)
				return UNWIND_STOP_END;
			/* libunwind (1.6, x86-64) answers for the frame it
			 * has just stepped through: asked after the step, true
			 * means frames[*n - 1] was the sigreturn trampoline and
			 * the new frame was interrupted (exact ip).  Asked
			 * before the step it flagged the interrupted frame
			 * instead, so __restore_rt was named at ip - 1 and
			 * the alternate-stack exception below applied one
			 * step late (bench/accuracy.sh). */
			sig = !a->sigtramp && unw_is_signal_frame(&cur) > 0;
			frames[*n - 1].signal_frame = sig;
			unw_word_t v;
			unw_get_reg(&cur, UNW_REG_IP, &v);
			new_ip = v;
			unw_get_reg(&cur, UNW_REG_SP, &v);
			new_sp = v;
			if (new_ip & unwind_target_ra_mask(t)) {
				/* A signed return address (aarch64 pac-ret),
				 * which libunwind 1.6 does not strip: go on
				 * from the registers with the address alone. */
				cursor_regs(a, &cur, regs);
				if (ctx.log)
					ctx.log->ok = false;
				new_ip &= ~unwind_target_ra_mask(t);
				regs->r[a->reg_ip] = new_ip;
				if (unw_init_remote(&cur, CFI(t)->as, &ctx) < 0)
					return UNWIND_STOP_NOINFO;
				regs_current = true;
			}
			how = UNWIND_HOW_CFI;
		} else {
			/* Registers as libunwind knows them at this frame.
			 * (With a trampoline in the table they were read
			 * before unw_step, which may have failed halfway
			 * through the cursor.) */
			if (!a->sigtramp && !regs_current)
				cursor_regs(a, &cur, regs);
			/* What follows reads regs and mr itself, unlogged;
			 * only the plain end (no CFI, cfi engine) is kept. */
			if (ctx.log && (fp_fallback || !exact_ip))
				ctx.log->ok = false;
			if (!exact_ip && sigreturn_frame(mr, a, regs)) {
				/* A handler returns here: the next frame is
				 * the one the signal interrupted. */
				sig = true;
				frames[*n - 1].signal_frame = true;
				how = UNWIND_HOW_CFI;
			} else {
				/* No CFI for the pc, or CFI libunwind cannot
				 * follow (aarch64 pac-ret's
				 * DW_CFA_AARCH64_negate_ra_state in libunwind
				 * 1.6): only auto goes on, by fp. */
				if (!fp_fallback)
					return !covered || r == -UNW_ENOINFO ?
					       UNWIND_STOP_NOINFO : UNWIND_STOP_BAD_FRAME;
				/* x86-64 code without CFI: its prologue or
				 * epilogue, or a call through NULL
				 * (engine-x86.c); else one frame-pointer
				 * step; else a return address found up the
				 * stack.  Then libunwind takes over again. */
				enum unwind_stop stop;
				int fr;
				bool no_sym = false;
				struct arch_regs before = *regs;
				if (x86_heur_step(t, mr, regs, exact_ip, &how, &no_sym) > 0) {
					sig = false;
				} else if (lr_bad_pc_step(t, mr, regs, exact_ip) > 0) {
					sig = false;
					how = UNWIND_HOW_PROLOGUE;
				} else if ((fr = fp_step(t, mr, regs, &stop)) >= 0 &&
					   (fr == 1 || !no_sym ||
					    x86_plausible_ra(t, mr, regs->r[a->reg_ip]))) {
					/* (In code without a symbol, which may not
					 * keep a frame pointer at all, only a
					 * return address right after a call.) */
					sig = fr == 1;   /* the table's signal trampoline */
					/* From a frame stopped anywhere, the
					 * record may be its caller's
					 * (engine-fp.c). */
					how = exact_ip ? UNWIND_HOW_FP_UNSURE : UNWIND_HOW_FP;
				} else if ((fr >= 0 || stop != UNWIND_STOP_END) &&
					   frames[*n - 1].how != UNWIND_HOW_SCAN &&
					   (*regs = before, x86_scan_step(t, mr, regs) > 0)) {
					/* One guess, never a guess from a guess. */
					sig = false;
					how = UNWIND_HOW_SCAN;
				} else {
					return fr >= 0 ? UNWIND_STOP_BAD_FRAME : stop;
				}
				frames[*n - 1].signal_frame = sig;
			}
			if (unw_init_remote(&cur, CFI(t)->as, &ctx) < 0)
				return UNWIND_STOP_NOINFO;
			regs_current = true;
			new_ip = regs->r[a->reg_ip];
			new_sp = regs->r[a->reg_sp];
		}
		/* A pc of 0 ends the stack, unless a signal interrupted it
		 * there: a call through a NULL pointer, whose caller is
		 * found from [sp] next (engine-x86.c). */
		if (new_ip == 0 && !sig)
			return UNWIND_STOP_END;
		/* The stack only grows one way: a caller's SP below its
		 * callee's is garbage (signal frames on an alternate stack
		 * excepted). */
		if (new_sp < prev_sp && !sig)
			return UNWIND_STOP_BAD_FRAME;
		if (new_sp == prev_sp && new_ip == frames[*n - 1].ip)
			return UNWIND_STOP_BAD_FRAME;
		prev_sp = new_sp;
		exact_ip = sig;
		frames[*n].ip = new_ip;
		frames[*n].how = how;
		frames[*n].signal_frame = false;
		(*n)++;
	}
	return UNWIND_STOP_DEPTH;
}

static uint32_t
memo_slot(uint64_t ip, uint64_t sp)
{
	return (uint32_t)(base_mix64(ip ^ (sp << 17) ^ (sp >> 4)) % MEMO_SLOTS);
}

/* The kept walk that this snapshot's would repeat, or NULL. */
static const struct memo_entry *
memo_find(struct cfi_state *c, const struct arch_regs *regs, const struct stack_snapshot *s,
	  uint64_t ip, uint64_t sp, int max, bool fp_fallback)
{
	const struct memo_entry *e = c->memo[memo_slot(ip, sp)];
	if (!e || e->ip != ip || e->sp != sp || e->max != max || e->fp_fallback != fp_fallback)
		return NULL;
	for (size_t i = 0; i < e->nreads; i++) {
		const struct memo_read *r = &e->reads[i];
		uint64_t v;
		if (r->is_reg) {
			v = regs->r[r->addr];
		} else {
			if (!snapshot_holds(s, r->addr, sizeof(v)))
				return NULL;
			memcpy(&v, s->stack + (r->addr - s->stack_start), sizeof(v));
		}
		if (v != r->value)
			return NULL;
	}
	return e;
}

static void
memo_keep(struct cfi_state *c, uint64_t ip, uint64_t sp, int max, bool fp_fallback,
	  enum unwind_stop stop, const struct unwind_frame *frames, int n)
{
	const struct memo_log *log = &c->log;
	size_t size = log->n * sizeof(struct memo_read) + (size_t)n * sizeof(*frames);
	struct memo_entry *e = malloc(sizeof(*e) + size);
	if (!e)
		return;  /* only slower */
	*e = (struct memo_entry){
		.ip = ip, .sp = sp, .max = max, .fp_fallback = fp_fallback, .stop = stop,
		.nframes = n, .nreads = log->n,
	};
	e->reads = (struct memo_read *)(e + 1);
	e->frames = (struct unwind_frame *)(e->reads + log->n);
	memcpy(e->reads, log->r, log->n * sizeof(*e->reads));
	memcpy(e->frames, frames, (size_t)n * sizeof(*frames));
	uint32_t slot = memo_slot(ip, sp);
	free(c->memo[slot]);
	c->memo[slot] = e;
}

static enum unwind_stop
walk(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
     struct unwind_frame *frames, int *n, int max, bool fp_fallback)
{
	struct cfi_state *c = CFI(t);
	if (!c)
		return UNWIND_STOP_UNSUPPORTED;
	const struct arch *a = unwind_target_arch(t);
	struct cfi_ctx ctx = { .t = t, .mr = mr, .regs = regs };
	/* Live processes only (a core is walked once), and not where the
	 * walk steps trampolines by hand at every frame (aarch64). */
	bool memo = t->pid > 0 && !t->core && mr->snap && !a->sigtramp && *n == 1;
	uint64_t ip = regs->r[a->reg_ip], sp = regs->r[a->reg_sp];
	if (memo) {
		const struct memo_entry *e = memo_find(c, regs, mr->snap, ip, sp, max, fp_fallback);
		if (e) {
			memcpy(frames, e->frames, (size_t)e->nframes * sizeof(*frames));
			*n = e->nframes;
			return e->stop;
		}
		c->log.ok = true;
		c->log.n = 0;
		ctx.log = &c->log;
	}
	unsigned generation = t->generation;
	enum unwind_stop stop = walk_steps(&ctx, frames, n, max, fp_fallback);
	/* A map reloaded during the walk may have changed what it read. */
	if (memo && c->log.ok && t->generation == generation)
		memo_keep(c, ip, sp, max, fp_fallback, stop, frames, *n);
	return stop;
}

static enum unwind_stop
walk_cfi(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	 struct unwind_frame *frames, int *n, int max)
{
	return walk(t, mr, regs, frames, n, max, false);
}

static enum unwind_stop
walk_auto(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	  struct unwind_frame *frames, int *n, int max)
{
	return walk(t, mr, regs, frames, n, max, true);
}

const struct unwinder unwinder_cfi = {
	.first_how = UNWIND_HOW_CFI,
	.walk = walk_cfi,
	.slot = UNWIND_STATE_CFI,
	.init = cfi_state_new,
	.flush = cfi_state_flush,
	.fini = cfi_state_free,
};

const struct unwinder unwinder_auto = {
	.first_how = UNWIND_HOW_CFI,
	.walk = walk_auto,
	.slot = UNWIND_STATE_CFI,       /* cfi's, made by unwinder_cfi */
};

#else /* !HAVE_LIBUNWIND */

/* Without libunwind, `cfi` is unavailable and `auto` is the fp walk. */
const struct unwinder unwinder_cfi = { .walk = NULL };
const struct unwinder unwinder_auto = { .walk = NULL };

#endif
