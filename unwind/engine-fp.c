/* unwind/engine-fp.c - frame-pointer walk: the chain of {saved fp, return
 * address} records that the architecture table says its ABI keeps
 * (arch->fp_chain: the rbp chain on x86-64, x29/x30 on aarch64).
 *
 * Only trusted as far as it is plausible: each frame must lie in the stack
 * mapping of the current SP, above the current SP, be aligned, and return
 * into executable memory; the chain must move strictly toward the stack
 * base.  So garbage ends the walk, it never loops
 * (tests/dump-engine-fp.test).
 *
 * A leaf function that keeps no record (or has not built it yet) is seen
 * from its caller's record: its caller is then missing.  On aarch64 the
 * return address is still in x30: where x30 returns right after a call
 * into another function than the pc's, and the record at x29 does not
 * return there, that caller is taken from x30 (unwind_lr_leaf_step).  Still, the
 * frame found from one that stopped at an exact address (the innermost,
 * or one a signal interrupted) says it may be wrong: "fp?"
 * (UNWIND_HOW_FP_UNSURE).
 *
 * aarch64: return addresses lose their pointer-authentication bits
 * (unwind_target_ra_mask: a core's NT_ARM_PAC_MASK, else the table's), and a frame that is the signal trampoline
 * (arch->sigtramp) is stepped through the interrupted registers the
 * kernel saved, not through its frame record.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "unwind/elf-image.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/memory.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

/* Both walks stop at the entry point; here because engine-dwarf.c calls
 * this file's steps (unwind_fp_step, unwind_lr_leaf_step), never the other way. */
bool
unwind_at_entry(struct unwind_target *t, uint64_t addr)
{
	const struct mapping *m = unwind_target_mapping(t, addr);

	return m && m->image && m->bias_known && m->image->entry &&
	       addr - m->bias >= m->image->entry && addr - m->bias < m->image->entry + 64;
}

int
unwind_fp_sigtramp_step(struct unwind_target *t, struct memory_reader *mr,
		 struct arch_regs *regs)
{
	const struct arch *a = unwind_target_arch(t);
	const struct arch_sigtramp *st = a->sigtramp;
	unsigned char code[sizeof(st->code)];
	uint64_t fp = regs->r[a->reg_fp];

	if (!st || unwind_memory_read(mr, regs->r[a->reg_ip], code, st->code_len) < 0 ||
	    memcmp(code, st->code, st->code_len) != 0)
		return 0;
	/* 64-bit only (aarch64): the sigcontext's registers are 8 bytes. */
	uint64_t sc[64], rec[2];
	size_t n = st->nregs + 2;
	if (fp < st->record_to_regs || (fp & 15) != 0 || n > 64 ||
	    unwind_memory_read(mr, fp, rec, sizeof(rec)) < 0 ||
	    unwind_memory_read(mr, fp - st->record_to_regs, sc, n * 8) < 0)
		return -1;
	/* The kernel wrote the record from the registers it saved: they
	 * must agree, or the sigframe is not laid out as the table says. */
	if (sc[a->reg_fp] != rec[0] || sc[a->reg_ra] != rec[1])
		return -1;
	for (unsigned i = 0; i < st->nregs; i++)
		regs->r[i] = sc[i];
	regs->r[a->reg_sp] = sc[st->nregs];
	regs->r[a->reg_ip] = sc[st->nregs + 1];
	regs->valid |= (UINT64_C(1) << (st->nregs + 2)) - 1;
	return 1;
}

int
unwind_fp_step(struct unwind_target *t, struct memory_reader *mr,
	struct arch_regs *regs, enum unwind_stop *stop)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp];
	uint64_t fp = regs->r[a->reg_fp];
	const uint64_t wsize = a->word_size;

	int sig = unwind_fp_sigtramp_step(t, mr, regs);
	if (sig != 0) {
		if (sig < 0)
			*stop = UNWIND_STOP_BAD_FRAME;
		return sig;
	}

	if (fp == 0) {
		/* glibc's _start and clone() zero the frame pointer: the
		 * outermost frame. */
		*stop = UNWIND_STOP_END;
		return -1;
	}
	/* A frame pointer the snapshot does not know (a thread read without
	 * stopping it) is not a chain that broke. */
	enum unwind_stop broken = regs->valid & (UINT64_C(1) << a->reg_fp) ?
				  UNWIND_STOP_FP_BROKEN : UNWIND_STOP_BAD_FRAME;
	if (fp < sp || (fp & (wsize - 1)) != 0) {
		*stop = broken;
		return -1;
	}
	struct mapping *stack = unwind_module_map_find(&t->maps, sp);
	if (!stack || fp + 2 * wsize > stack->end || fp < stack->start) {
		*stop = broken;
		return -1;
	}
	unsigned char record[16];
	if (unwind_memory_read(mr, fp, record, (size_t)(2 * wsize)) < 0) {
		*stop = UNWIND_STOP_MEMORY;
		return -1;
	}
	uint64_t saved_fp = arch_get_uint(record, wsize, a->big_endian);
	uint64_t ret = arch_get_uint(record + wsize, wsize, a->big_endian) &
		       ~unwind_target_ra_mask(t);
	if (ret == 0) {
		*stop = UNWIND_STOP_END;
		return -1;
	}
	struct mapping *code = unwind_target_mapping(t, ret - 1);
	if (!code || !(code->perms & MAPPING_X)) {
		*stop = broken;
		return -1;
	}
	regs->r[a->reg_fp] = saved_fp;
	regs->r[a->reg_sp] = fp + 2 * wsize;
	regs->r[a->reg_ip] = ret;
	return 0;
}

/* A return address into generated code. */
static bool
returns_into_generated_code(struct unwind_target *t, uint64_t ra)
{
	const struct mapping *m = ra ? unwind_target_mapping(t, ra - 1) : NULL;
	return m && (m->perms & MAPPING_X) && unwind_mapping_generated(m);
}

int
unwind_fp_record_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp], fp = regs->r[a->reg_fp];
	const uint64_t wsize = a->word_size;
	unsigned char record[16];

	if (!a->fp_chain || fp < sp || (fp & (wsize - 1)) != 0 || wsize > 8)
		return 0;
	struct mapping *stack = unwind_module_map_find(&t->maps, sp);
	if (!stack || fp < stack->start || fp + 2 * wsize > stack->end ||
	    unwind_memory_read(mr, fp, record, (size_t)(2 * wsize)) < 0)
		return 0;
	uint64_t saved_fp = arch_get_uint(record, wsize, a->big_endian);
	uint64_t ret = arch_get_uint(record + wsize, wsize, a->big_endian) &
		       ~unwind_target_ra_mask(t);
	/* The next link: the end of the chain, or a record further up the
	 * same stack. */
	if (saved_fp != 0 && (saved_fp <= fp || saved_fp + 2 * wsize > stack->end))
		return 0;
	struct mapping *code = unwind_target_mapping(t, ret - 1);
	if (!code || !(code->perms & MAPPING_X))
		return 0;
	/* A return into a file's code follows a call.  One into generated
	 * code need not: a JVM's interpreter pushes the address of its
	 * return entry and jumps to the method (HotSpot's invoke
	 * templates), and OpenJDK 17's interpreted frames were left
	 * unwalked (a guess from the code instead, then the chain lost;
	 * tests/dump-jvmlike.test). */
	if (!unwind_mapping_generated(code) && !unwind_x86_plausible_ra(t, mr, ret))
		return 0;
	regs->r[a->reg_fp] = saved_fp;
	regs->r[a->reg_sp] = fp + 2 * wsize;
	regs->r[a->reg_ip] = ret;
	return 1;
}

/* The start of the function holding addr (its symbol), or 0. */
static uint64_t
function_start(struct unwind_target *t, uint64_t addr)
{
	struct mapping *m = unwind_target_mapping(t, addr);
	uint64_t off;
	if (!m || !m->image || !m->bias_known ||
	    !unwind_elf_image_lookup(m->image, addr - m->bias, UNWIND_SYM_NO_DEMANGLE, &off))
		return 0;
	return addr - off;
}

int
unwind_lr_leaf_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs)
{
	const struct arch *a = unwind_target_arch(t);
	if (!a->fp_chain || a->reg_ra < 0 || a->ncalls == 0 ||
	    !(regs->valid & (UINT64_C(1) << a->reg_ra)))
		return 0;
	uint64_t mask = unwind_target_ra_mask(t);
	uint64_t pc = regs->r[a->reg_ip], fp = regs->r[a->reg_fp];
	uint64_t ra = regs->r[a->reg_ra] & ~mask;
	unsigned char insn[8];
	const struct mapping *m = ra >= a->insn_size ?
				  unwind_target_mapping(t, ra - a->insn_size) : NULL;
	if (!m || !(m->perms & MAPPING_X) || a->insn_size > sizeof(insn) ||
	    unwind_memory_read(mr, ra - a->insn_size, insn, a->insn_size) < 0 ||
	    !arch_is_call(a, insn))
		return 0;
	/* The link register is set by every call: once a call made from
	 * this function has returned, it points into the function itself. */
	uint64_t f = function_start(t, pc), g = function_start(t, ra - a->insn_size);
	if (!f || !g || f == g)
		return 0;
	/* The function's own record returns there too: nothing missing. */
	unsigned char record[16];
	if (fp != 0 && fp + 2 * a->word_size > fp &&
	    unwind_memory_read(mr, fp, record, (size_t)(2 * a->word_size)) == 0 &&
	    (arch_get_uint(record + a->word_size, a->word_size, a->big_endian) & ~mask) == ra)
		return 0;
	regs->r[a->reg_ip] = ra;
	regs->valid &= ~(UINT64_C(1) << a->reg_ra);
	return 1;
}

static enum unwind_stop
fp_walk(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	struct unwind_frame *frames, int *n, int max)
{
	const struct arch *a = unwind_target_arch(t);
	while (*n < max) {
		enum unwind_stop stop;
		/* frames[*n - 1] stopped anywhere: the innermost, or a frame a
		 * signal interrupted. */
		bool exact = *n == 1 || frames[*n - 2].signal_frame;
		if (unwind_lr_bad_pc_step(t, mr, regs, exact) > 0) {
			/* A call through a bad pointer (aarch64): its
			 * caller, at the link register. */
			frames[*n - 1].signal_frame = false;
			frames[*n].ip = regs->r[a->reg_ip];
			frames[*n].how = UNWIND_HOW_PROLOGUE;
			frames[*n].signal_frame = false;
			(*n)++;
			continue;
		}
		/* The program's entry point (_start), which nothing calls:
		 * the outermost frame, whatever x29 holds there (old aarch64
		 * startup code left it, and the stack was executable). */
		uint64_t ip = frames[*n - 1].ip;
		if (unwind_at_entry(t, exact ? ip : ip - 1))
			return UNWIND_STOP_END;
		if (exact && unwind_lr_leaf_step(t, mr, regs) > 0) {
			/* A function that keeps no record (a leaf, or one
			 * stopped in its prologue or epilogue): its caller,
			 * at the link register (aarch64). */
			frames[*n - 1].signal_frame = false;
			frames[*n].ip = regs->r[a->reg_ip];
			frames[*n].how = UNWIND_HOW_FP_UNSURE;
			frames[*n].signal_frame = false;
			(*n)++;
			continue;
		}
		int r = unwind_fp_step(t, mr, regs, &stop);
		if (r < 0)
			return stop;
		/* r == 1: frames[*n - 1] was the signal trampoline, and the
		 * new frame was interrupted (its ip is exact). */
		frames[*n - 1].signal_frame = r == 1;
		frames[*n].ip = regs->r[a->reg_ip];
		/* Only frames[0] and interrupted frames stopped anywhere; the
		 * others are at a call, past the prologue that built their
		 * record. */
		bool exact_before = *n == 1 || (*n >= 2 && frames[*n - 2].signal_frame);
		frames[*n].how = exact_before ? UNWIND_HOW_FP_UNSURE : UNWIND_HOW_FP;
		frames[*n].signal_frame = false;
		(*n)++;
	}
	return UNWIND_STOP_DEPTH;
}

const struct unwinder unwinder_fp = {
	.first_how = UNWIND_HOW_FP,
	.walk = fp_walk,
};

int
unwind_lr_bad_pc_step(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	       bool exact)
{
	const struct arch *a = unwind_target_arch(t);
	if (!exact || a->reg_ra < 0 || a->ncalls == 0 ||
	    !(regs->valid & (UINT64_C(1) << a->reg_ra)))
		return 0;
	uint64_t pc = regs->r[a->reg_ip];
	const struct mapping *m = pc ? unwind_target_mapping(t, pc) : NULL;
	if (m && (m->perms & MAPPING_X))
		return 0;         /* code: what CFI or the fp chain are for */
	/* Called through a bad pointer: nothing of the callee ran, and the
	 * link register still holds where its caller goes on (not signed
	 * yet: pac-ret signs it in the callee's prologue). */
	uint64_t ra = regs->r[a->reg_ra] & ~unwind_target_ra_mask(t);
	unsigned char insn[8];
	m = ra >= a->insn_size ? unwind_target_mapping(t, ra - a->insn_size) : NULL;
	if (!m || !(m->perms & MAPPING_X) || a->insn_size > sizeof(insn) ||
	    unwind_memory_read(mr, ra - a->insn_size, insn, a->insn_size) < 0 ||
	    !arch_is_call(a, insn))
		return 0;
	regs->r[a->reg_ip] = ra;
	/* The caller's own return address is not in the register any more
	 * (the call overwrote it): its CFI says where it is. */
	regs->valid &= ~(UINT64_C(1) << a->reg_ra);
	return 1;
}

/* ---- steps offered to a composition (engine-auto.c) ---------------------- */

int
unwind_fp_jit_record_frame_step(struct frame_step *f)
{
	/* Generated code (anonymous executable memory: a JIT's, a JVM's
	 * interpreter, which keep frame pointers when asked to): no symbol
	 * gives a start, and the way out the code shows is a guess; a frame
	 * record that validates is not, and is taken first
	 * (tests/dump-jvmlike.test). */
	if (f->exact)
		return 0;
	const struct arch *a = unwind_target_arch(f->t);
	const struct mapping *m = unwind_target_mapping(f->t, f->regs->r[a->reg_ip] - 1);
	if (!m || !(m->perms & MAPPING_X) || !unwind_mapping_generated(m) ||
	    unwind_fp_record_step(f->t, f->mr, f->regs) <= 0)
		return 0;
	f->how = UNWIND_HOW_FP;
	return 1;
}

/* How far up the stack a frame record is looked for (words). */
#define RECORD_SCAN_WORDS 256

int
unwind_fp_jit_record_scan_frame_step(struct frame_step *f)
{
	/* Generated code that keeps no frame record (a JVM's compiled code
	 * without -XX:+PreserveFramePointer uses %rbp as it likes), and no
	 * way out the code shows: the first word up the stack that is a
	 * frame record, its saved frame pointer leading to another that
	 * validates too (generated code is called from the runtime's C
	 * code, never the chain's end: a local of 0 beside a code address
	 * is no record).  The frames between are lost: a guess, never
	 * taken from a guess. */
	const struct arch *a = unwind_target_arch(f->t);
	uint64_t pc = f->regs->r[a->reg_ip], sp = f->regs->r[a->reg_sp];
	const uint64_t wsize = a->word_size;
	if (f->prev_how == UNWIND_HOW_SCAN || !a->fp_chain || pc == 0)
		return 0;
	const struct mapping *m = unwind_target_mapping(f->t, f->exact ? pc : pc - 1);
	const struct mapping *stack = unwind_module_map_find(&f->t->maps, sp);
	if (!m || !(m->perms & MAPPING_X) || !unwind_mapping_generated(m) || !stack)
		return 0;
	for (uint64_t v = f->scan_from > sp ? f->scan_from : sp;
	     v < sp + RECORD_SCAN_WORDS * wsize && v + 2 * wsize <= stack->end; v += wsize) {
		struct arch_regs r = *f->regs, next;
		r.r[a->reg_fp] = v;
		if (unwind_fp_record_step(f->t, f->mr, &r) <= 0)
			continue;
		next = r;
		if (r.r[a->reg_fp] == 0 || unwind_fp_record_step(f->t, f->mr, &next) <= 0)
			continue;
		*f->regs = r;
		f->how = UNWIND_HOW_SCAN;
		f->scan_found = v;
		return 1;
	}
	return 0;
}

int
unwind_lr_bad_pc_frame_step(struct frame_step *f)
{
	if (unwind_lr_bad_pc_step(f->t, f->mr, f->regs, f->exact) <= 0)
		return 0;
	f->how = UNWIND_HOW_PROLOGUE;
	return 1;
}

int
unwind_lr_leaf_frame_step(struct frame_step *f)
{
	if (!f->exact || unwind_lr_leaf_step(f->t, f->mr, f->regs) <= 0)
		return 0;
	f->how = UNWIND_HOW_FP_UNSURE;
	return 1;
}

int
unwind_fp_chain_frame_step(struct frame_step *f)
{
	const struct arch *a = unwind_target_arch(f->t);
	/* (In code without a symbol, which may keep no frame pointer at
	 * all, only a return address right after a call, or one into
	 * generated code: a JVM's compiled loop stopped where the code
	 * shows no way out returns to its interpreter's return entry,
	 * which follows no call.) */
	f->fp = unwind_fp_step(f->t, f->mr, f->regs, &f->stop);
	uint64_t ra = f->regs->r[a->reg_ip];
	if (f->fp < 0 ||
	    (f->fp != 1 && f->no_symbol && !returns_into_generated_code(f->t, ra) &&
	     !unwind_x86_plausible_ra(f->t, f->mr, ra)))
		return 0;
	f->sig = f->fp == 1;  /* the table's signal trampoline */
	/* From a frame stopped anywhere, the record may be its caller's. */
	f->how = f->exact ? UNWIND_HOW_FP_UNSURE : UNWIND_HOW_FP;
	return 1;
}
