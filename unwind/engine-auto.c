/* unwind/engine-auto.c - the auto engine: the CFI walk (engine-dwarf.c),
 * and where no CFI covers a frame's pc (or its CFI cannot be followed),
 * the other engines' steps asked in turn, the first that steps giving
 * the caller.  The order is the composition, kept here and nowhere else:
 *
 * 1. a frame record in generated code (anonymous executable memory: a
 *    JIT's), which validates where the code's way out is a guess;
 * 2. x86-64 code without CFI: its epilogue, its prologue from the
 *    symbol, a call through NULL (engine-x86.c);
 * 3. a pc outside code on a link-register architecture (aarch64: a call
 *    through a bad pointer), then a leaf that keeps no record;
 * 4. the frame-pointer chain (in code without a symbol, only to a return
 *    address right after a call);
 * 5. last, one scan up the stack, never after a frame that was itself
 *    found so: in generated code, for a frame record that validates
 *    two links deep; then for a return address.
 * A step that does not apply to the architecture passes.
 */
#include "config.h"

#include <stddef.h>

#include "unwind/engines.h"

static const frame_step_fn auto_steps[] = {
	unwind_fp_jit_record_frame_step,
	unwind_x86_heur_frame_step,
	unwind_lr_bad_pc_frame_step,
	unwind_lr_leaf_frame_step,
	unwind_fp_chain_frame_step,
	unwind_fp_jit_record_scan_frame_step,
	unwind_x86_scan_frame_step,
	NULL,
};

static enum unwind_stop
walk_auto(struct unwind_target *t, struct memory_reader *mr, struct arch_regs *regs,
	  struct unwind_frame *frames, int *n, int max)
{
	return unwind_dwarf_walk_with(t, mr, regs, frames, n, max, auto_steps);
}

const struct unwinder unwinder_auto = {
	.first_how = UNWIND_HOW_CFI,
	.walk = walk_auto,
	.slot = UNWIND_STATE_CFI,       /* cfi's, made by unwinder_cfi */
};
