/* sampler/sample.c - one tick of one process, one thread: stop, registers,
 * one stack copy, resume (ptrace_sample); the unwind, the names and the
 * aggregation happen after the thread runs again. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/collapse.h"
#include "sampler/profiler-internal.h"

static void
add_stack(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
	  const uint32_t *ids, size_t n)
{
	if (collapse_add(p->stacks, ids, n, 1) < 0)
		return;
	p->stats.samples++;
	size_t roots = (p->nprocs > 1) + p->cfg.threads;
	if (p->hook && n > roots)
		p->hook(p->hook_arg, ps->pid, ts->tid, ts->name, ids + roots, n - roots);
}

static void
sample_thread(struct profiler *p, struct proc_state *ps, struct tracee *th, uint64_t now)
{
	struct thread_state *ts = thread_state_get(p, ps, th);
	if (!ts)
		return;
	ts->seen_tick = p->tick_no;
	if (ts->skip_until_ns > now)
		return;
	char state = thread_state_now(p, ps, ts);
	if (!state)
		return;  /* exiting */
	uint64_t cpu = 0;
	if (!p->cfg.idle) {
		if (state != 'R')
			return;
	} else {
		cpu = thread_cpu_ns(ts);
		if (state != 'R' && ts->last_ids && cpu - ts->last_cpu_ns < IDLE_CPU_SLACK_NS) {
			/* Has not run since its last sample: same stack. */
			p->stats.reused++;
			add_stack(p, ps, ts, ts->last_ids, ts->last_n);
			return;
		}
	}

	int r = ptrace_sample(ps->pt, th, STACK_WINDOW_BYTES, unwind_target_stack_end, ps->ut,
			      STOP_TIMEOUT_MS, 0, &p->snap);
	if (r == -ESRCH)
		return;
	if (r == -ETIMEDOUT) {
		p->stats.errors[PROF_ERR_TIMEOUT]++;
		if (state != 'R')
			ts->skip_until_ns = now + UNSTOPPABLE_NS;
		return;
	}
	if (r < 0) {
		p->stats.errors[PROF_ERR_PTRACE]++;
		return;
	}
	p->stats.stopped++;
	pause_hist_add(&p->pauses, p->snap.pause_ns);

	/* The thread runs again: the rest is ours. */
	enum unwind_stop stop;
	int nf = unwind_walk(ps->ut, p->cfg.engine, &p->snap, p->frames, p->cfg.max_depth, &stop);
	if (nf <= 0) {
		p->stats.errors[PROF_ERR_NOSTACK]++;
		return;
	}
	if (unwind_target_generation(ps->ut) != ps->ut_generation) {
		collapse_map_reset(&ps->names);
		ps->ut_generation = unwind_target_generation(ps->ut);
	}
	size_t n = 0;
	if (p->nprocs > 1)
		p->ids[n++] = ps->root_id;
	if (p->cfg.threads)
		p->ids[n++] = ts->root_id;
	for (int i = nf - 1; i >= 0; i--)
		n += frame_ids(p, ps, p->frames[i].ip, unwind_frame_is_caller(p->frames, i),
			       &p->ids[n]);
	add_stack(p, ps, ts, p->ids, n);
	if (p->cfg.idle) {
		uint32_t *copy = realloc(ts->last_ids, n * sizeof(*copy));
		if (copy) {
			memcpy(copy, p->ids, n * sizeof(*copy));
			ts->last_ids = copy;
			ts->last_n = n;
			ts->last_cpu_ns = cpu;
		}
	}
}

static void
reopen_after_exec(struct proc_state *ps)
{
	int err;
	struct unwind_target *ut = unwind_target_open(ps->pid, &err);
	if (!ut)
		return;  /* keep the old one: names may be wrong, nothing breaks */
	unwind_target_free(ps->ut);
	ps->ut = ut;
	ps->ut_generation = unwind_target_generation(ut);
	collapse_map_reset(&ps->names);
	ptrace_read_comm(ps->pid, ps->comm, sizeof(ps->comm));
}

void
profiler_sample_process(struct profiler *p, struct proc_state *ps, uint64_t now)
{
	ptrace_target_poll(ps->pt);
	if (ps->pt->exec_seen) {
		ps->pt->exec_seen = false;
		reopen_after_exec(ps);
	}
	/* New threads every tick: one getdents of /proc/PID/task. */
	ptrace_target_rescan(ps->pt);
	size_t alive = 0;
	for (size_t i = 0; i < ps->pt->nthreads && !stop_signal; i++) {
		struct tracee *th = &ps->pt->threads[i];
		if (th->state == TRACEE_GONE)
			continue;
		sample_thread(p, ps, th, now);
		alive += th->state != TRACEE_GONE;
	}
	ptrace_target_prune(ps->pt);
	if ((p->tick_no & 63) == 0)
		thread_table_sweep(ps, p->tick_no);
	if (alive == 0 && !stop_signal) {
		ps->exited = true;
		int st;
		if (ptrace_child_status(ps->pt, &st))
			p->child_status = st;
	}
}
