/* unwind/engine-fp.c - frame-pointer walk (rbp chain on x86-64).
 *
 * Only trusted as far as it is plausible: each frame must lie in the stack
 * mapping of the current SP, above the current SP, be aligned, and return
 * into executable memory; the chain must move strictly toward the stack
 * base.  So garbage ends the walk, it never loops (tests/dump-engines.test).
 */
#include "config.h"

#include <errno.h>

#include "unwind/unwind-internal.h"

int
fp_step(struct unwind_target *t, struct memory_reader *mr,
	struct unwind_regs *regs, enum unwind_stop *stop)
{
	uint64_t sp = regs->r[arch_reg_sp];
	uint64_t fp = regs->r[arch_reg_fp];
	const uint64_t wsize = sizeof(uint64_t);

	if (fp == 0) {
		/* glibc's _start and clone() zero rbp: the outermost frame. */
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
	uint64_t saved[2];
	if (memory_read(mr, fp, saved, sizeof(saved)) < 0) {
		*stop = UNWIND_STOP_MEMORY;
		return -1;
	}
	uint64_t ret = saved[1];
	if (ret == 0) {
		*stop = UNWIND_STOP_END;
		return -1;
	}
	struct mapping *code = unwind_target_mapping(t, ret - 1);
	if (!code || !(code->perms & MAPPING_X)) {
		*stop = UNWIND_STOP_BAD_FRAME;
		return -1;
	}
	regs->r[arch_reg_fp] = saved[0];
	regs->r[arch_reg_sp] = fp + 2 * wsize;
	regs->r[arch_reg_ip] = ret;
	return 0;
}

static enum unwind_stop
fp_walk(struct unwind_target *t, struct memory_reader *mr, struct unwind_regs *regs,
	struct unwind_frame *frames, int *n, int max)
{
	while (*n < max) {
		enum unwind_stop stop;
		if (fp_step(t, mr, regs, &stop) < 0)
			return stop;
		frames[*n].ip = regs->r[arch_reg_ip];
		frames[*n].how = UNWIND_HOW_FP;
		frames[*n].signal_frame = false;
		(*n)++;
	}
	return UNWIND_STOP_DEPTH;
}

const struct unwinder unwinder_fp = {
	.name = "fp",
	.first_how = UNWIND_HOW_FP,
	.walk = fp_walk,
};
