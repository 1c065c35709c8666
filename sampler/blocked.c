/* sampler/blocked.c - record --idle: a thread in uninterruptible sleep (D)
 * cannot stop for PTRACE_INTERRUPT, yet it is what a wall-clock profile is
 * for.  It is read without stopping it (ptrace_snapshot_blocked: sp and pc
 * from /proc/TID/syscall, the user stack copied while it stays blocked),
 * and its kernel stack (/proc/TID/stack, root only) is added on top as
 * name_[k] frames, the way perf marks kernel frames.  record --kernel
 * adds the same frames to the stack of every sleeping thread it stops. */
#include "config.h"

#include <string.h>

#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/sample.h"
#include "sampler/options.h"
#include "sampler/profiler-internal.h"
#include "unwind/unwind.h"


bool
profiler_blocked_stack(struct profiler *p, struct proc_state *ps, struct thread_state *ts)
{
	struct stack_snapshot *snap = &p->tr.blocked_snap;
	struct task_syscall sc;
	if (ptrace_snapshot_blocked(ps->pid, ts->tid, STACK_WINDOW_BYTES,
				    unwind_target_stack_end, ps->ut, snap, &sc) < 0)
		return false;
	uint32_t kids[MAX_KERNEL_FRAMES];
	size_t nk = profiler_kernel_frame_ids(p, ps->pid, ts->tid, kids, MAX_KERNEL_FRAMES);
	/* Dropped (the unwinder behind) counts as taken: it was read. */
	struct sample_record rec = {
		.ps = ps, .ts = ts, .sampled_ns = ptrace_clock_monotonic_ns(),
		.kids = kids, .nk = nk, .weight = 1, .snap = snap,
	};
	unwinder_push_sample(p, &rec);
	return true;
}

size_t
profiler_kernel_frame_ids(struct profiler *p, pid_t pid, pid_t tid, uint32_t *ids, size_t room)
{
	/* Innermost first in the file: appended outermost first, as stacks
	 * are stored root first. */
	struct kernel_frame kf[MAX_KERNEL_FRAMES];
	int nk = ptrace_kernel_stack(pid, tid, kf, MAX_KERNEL_FRAMES);
	size_t n = 0;
	for (int k = nk - 1; k >= 0 && n < room; k--) {
		char kb[256];
		int r = profiler_intern(p, collapse_name_kernel(kb, sizeof(kb), kf[k].function));
		if (r >= 0)
			ids[n++] = (uint32_t)r;
	}
	return n;
}
