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
 * from its caller's record: its caller is then missing, on aarch64 too,
 * where the return address is still in x30.  Nothing here can tell, so the
 * frame found from the innermost one says so: "fp?" (UNWIND_HOW_FP_UNSURE).
 */
#include "config.h"

#include <errno.h>

#include "unwind/unwind-internal.h"

int
fp_step(struct unwind_target *t, struct memory_reader *mr,
	struct arch_regs *regs, enum unwind_stop *stop)
{
	const struct arch *a = unwind_target_arch(t);
	uint64_t sp = regs->r[a->reg_sp];
	uint64_t fp = regs->r[a->reg_fp];
	const uint64_t wsize = a->word_size;

	if (fp == 0) {
		/* glibc's _start and clone() zero the frame pointer: the
		 * outermost frame. */
		*stop = UNWIND_STOP_END;
		return -1;
	}
	if (fp < sp || (fp & (wsize - 1)) != 0) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	struct mapping *stack = module_map_find(&t->maps, sp);
	if (!stack || fp + 2 * wsize > stack->end || fp < stack->start) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	unsigned char record[16];
	if (memory_read(mr, fp, record, (size_t)(2 * wsize)) < 0) {
		*stop = UNWIND_STOP_MEMORY;
		return -1;
	}
	uint64_t saved_fp = arch_get_uint(record, wsize, a->big_endian);
	uint64_t ret = arch_get_uint(record + wsize, wsize, a->big_endian);
	if (ret == 0) {
		*stop = UNWIND_STOP_END;
		return -1;
	}
	struct mapping *code = unwind_target_mapping(t, ret - 1);
	if (!code || !(code->perms & MAPPING_X)) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	regs->r[a->reg_fp] = saved_fp;
	regs->r[a->reg_sp] = fp + 2 * wsize;
	regs->r[a->reg_ip] = ret;
	return 0;
}

static enum unwind_stop
fp_walk(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	struct unwind_frame *frames, int *n, int max)
{
	const struct arch *a = unwind_target_arch(t);
	while (*n < max) {
		enum unwind_stop stop;
		if (fp_step(t, mr, regs, &stop) < 0)
			return stop;
		frames[*n].ip = regs->r[a->reg_ip];
		/* Only frames[0] stopped anywhere; the others are at a call,
		 * past the prologue that built their record. */
		frames[*n].how = *n == 1 ? UNWIND_HOW_FP_UNSURE : UNWIND_HOW_FP;
		frames[*n].signal_frame = false;
		(*n)++;
	}
	return UNWIND_STOP_DEPTH;
}

const struct unwinder unwinder_fp = {
	.first_how = UNWIND_HOW_FP,
	.walk = fp_walk,
};
