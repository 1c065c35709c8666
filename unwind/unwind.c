/* unwind/unwind.c - engine names and dispatch: which unwinder walks a
 * snapshot of which target. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "arch/arch.h"
#include "ptrace/sample.h"
#include "unwind/engines.h"
#include "unwind/memory.h"
#include "unwind/target.h"
#include "unwind/unwind.h"
#include "unwind/yield.h"

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
	case UNWIND_HOW_FP_UNSURE: return "fp?";
	case UNWIND_HOW_PROLOGUE: return "prologue";
	case UNWIND_HOW_SCAN: return "scan?";
	case UNWIND_HOW_PYTHON: return "python";
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
	case UNWIND_STOP_DEADLINE: return "time limit reached";
	case UNWIND_STOP_CFI_LOOP: return "unwind table rejected: expression loop";
	case UNWIND_STOP_CFI_REJECTED: return "unwind table rejected: a rule breaks a bound";
	case UNWIND_STOP_FP_BROKEN: return "frame pointer chain broken";
	}
	return "?";
}

/* Which unwinder walks a target of architecture a.  Every engine is pure
 * code over (registers, memory reader, module map), so it walks any
 * architecture it knows on any host: fp where the ABI keeps frame
 * records, cfi everywhere (stackspy's own interpreter), mips for MIPS;
 * auto is cfi with the heuristics per frame, or mips on MIPS. */
static const struct unwinder *
engine_unwinder(enum unwind_engine e, const struct arch *a)
{
	if (!a)
		return NULL;
	switch (e) {
	case UNWIND_ENGINE_FP: return a->fp_chain ? &unwinder_fp : NULL;
	case UNWIND_ENGINE_CFI: return &unwinder_cfi;
	case UNWIND_ENGINE_AUTO:
		if (a->e_machine == EM_MIPS)
			return &unwinder_mips;
		return a->fp_chain ? &unwinder_auto : &unwinder_cfi;
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
	if (s->pac_mask && !t->pac_mask_fixed)
		t->pac_mask = s->pac_mask;
	unwind_target_enter(t);
	/* A library swapped at the pc's address since the stop: walked on
	 * the mapping of the one that was there, or as if nothing were
	 * mapped there (as when it is gone) (tests/record-dlswap.test). */
	bool swapped = unwind_target_code_at_stop(t, s, frames[0].ip);
	if (unwind_deadline_passed())
		*stop = UNWIND_STOP_DEADLINE;
	else
		*stop = n < max ? u->walk(t, &mr, &regs, frames, &n, max) : UNWIND_STOP_DEPTH;
	/* The engines set ip, how and signal_frame: the rest is a Python
	 * frame's, and whether its code is gone. */
	int kept = 0;
	for (int i = 0; i < n; i++) {
		frames[i].line = 0;
		frames[i].code_offset = 0;
		frames[i].swapped = swapped && frames[i].ip >= t->swapped_start &&
				    frames[i].ip < t->swapped_end;
		/* The frames of code that is gone are one unknown. */
		if (!frames[i].swapped || t->at_stop_found || !kept || !frames[kept - 1].swapped)
			frames[kept++] = frames[i];
	}
	n = kept;
	/* The rest of the target's users see the map as it is; the frames
	 * marked swapped are named from at_stop (unwind_symbolize_swapped). */
	t->swapped_start = t->swapped_end = 0;
	n = unwind_python_splice(t, s, frames, n, max, *stop);
	unwind_target_leave(t);
	return n;
}
