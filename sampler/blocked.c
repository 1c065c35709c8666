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
#include "sampler/profiler-internal.h"


size_t
blocked_stack(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
	      uint32_t *ids, size_t room)
{
	/* The next batch slot is free while a thread is being chosen. */
	struct stack_snapshot *snap = &p->snaps[p->nbatch];
	struct task_syscall sc;
	if (ptrace_snapshot_blocked(ps->pid, ts->tid, STACK_WINDOW_BYTES,
				    unwind_target_stack_end, ps->ut, snap, &sc) < 0)
		return 0;
	int nf = profiler_walk(p, ps, snap, monotonic_ns());
	if (nf <= 0)
		return 0;
	if (unwind_target_generation(ps->ut) != ps->ut_generation) {
		collapse_map_reset(&ps->names);
		ps->ut_generation = unwind_target_generation(ps->ut);
	}
	size_t n = 0;
	if (profiler_multi(p))
		ids[n++] = ps->root_id;
	if (p->cfg.threads)
		ids[n++] = ts->root_id;
	for (int k = nf - 1; k >= 0; k--)
		n += frame_ids(p, ps, p->frames[k].ip, unwind_frame_is_caller(p->frames, k),
			       &ids[n]);

	return n + kernel_frame_ids(p, ps->pid, ts->tid, ids + n, room - n);
}

size_t
kernel_frame_ids(struct profiler *p, pid_t pid, pid_t tid, uint32_t *ids, size_t room)
{
	/* Innermost first in the file: appended outermost first, as stacks
	 * are stored root first. */
	struct kernel_frame kf[MAX_KERNEL_FRAMES];
	int nk = ptrace_kernel_stack(pid, tid, kf, MAX_KERNEL_FRAMES);
	size_t n = 0;
	for (int k = nk - 1; k >= 0 && n < room; k--) {
		char kb[256];
		int r = collapse_intern(p->stacks, collapse_name_kernel(kb, sizeof(kb), kf[k].function));
		if (r >= 0)
			ids[n++] = (uint32_t)r;
	}
	return n;
}
