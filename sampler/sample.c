/* sampler/sample.c - one tick of one process: choose the threads to stop
 * (on-CPU: those running; --idle: those whose last stack cannot be
 * reused), stop them together against one deadline, each only for its
 * registers and one stack copy (ptrace_sample_many); then the on-CPU rule
 * (oncpu.c), the unwind, the names and the aggregation, after every
 * thread runs again. */
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

/* The stop of thread i of the batch is over (result r): count it, and
 * unwind and add its stack if it stands for what the thread was doing. */
static void
finish_thread(struct profiler *p, struct proc_state *ps, size_t i, int r)
{
	struct thread_state *ts = p->batch_ts[i];
	struct stack_snapshot *snap = &p->snaps[i];
	if (r == -ESRCH)
		return;
	if (r == -ETIMEDOUT) {
		if (!p->cfg.idle) {
			/* Not on a CPU, or it would have stopped by now. */
			p->stats.skipped++;
			return;
		}
		p->stats.errors[PROF_ERR_TIMEOUT]++;
		if (p->batch_state[i] != 'R')
			ts->skip_until_ns = p->tick_ns + UNSTOPPABLE_NS;
		return;
	}
	if (r < 0) {
		p->stats.errors[PROF_ERR_PTRACE]++;
		return;
	}
	p->stats.stopped++;
	pause_hist_add(&p->pauses, snap->pause_ns);
	if (!p->cfg.idle) {
		int drop = oncpu_verdict(p->arch, snap, &p->batch_before[i], p->tick_ns,
					 ts->stop_cpu_ns);
		ts->stop_cpu_ns = snap->stop_sched.cpu_ns;
		if (drop >= 0) {
			p->stats.dropped[drop]++;
			return;
		}
	}

	/* The thread runs again: the rest is ours. */
	enum unwind_stop stop;
	int nf = unwind_walk(ps->ut, p->cfg.engine, snap, p->frames, p->cfg.max_depth, &stop);
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
	for (int k = nf - 1; k >= 0; k--)
		n += frame_ids(p, ps, p->frames[k].ip, unwind_frame_is_caller(p->frames, k),
			       &p->ids[n]);
	add_stack(p, ps, ts, p->ids, n);
	if (p->cfg.idle) {
		uint32_t *copy = realloc(ts->last_ids, n * sizeof(*copy));
		if (copy) {
			memcpy(copy, p->ids, n * sizeof(*copy));
			ts->last_ids = copy;
			ts->last_n = n;
			ts->last_cpu_ns = p->batch_before[i].cpu_ns;
		}
	}
}

/* Stop the batch's threads together against one deadline (each stopped
 * only for its own copy), then, with every one of them running again and
 * the tracer back at its normal priority, decide, unwind and add. */
static void
flush_batch(struct profiler *p, struct proc_state *ps)
{
	size_t n = p->nbatch;
	if (n == 0)
		return;
	p->nbatch = 0;
	int64_t timeout_us = STOP_TIMEOUT_MS * 1000;
	if (!p->cfg.idle) {
		int64_t half_period_us = (int64_t)(p->ticks.period_ns / 2000u);
		timeout_us = half_period_us < ONCPU_STOP_TIMEOUT_US ? half_period_us :
			     ONCPU_STOP_TIMEOUT_US;
	}
	struct sample_opts o = {
		.window = STACK_WINDOW_BYTES,
		.stack_end = unwind_target_stack_end,
		.ctx = ps->ut,
		.timeout_us = timeout_us,
		.flags = p->cfg.idle ? 0 : PTRACE_SAMPLE_SCHEDSTAT,
	};
	for (size_t i = 0; i < n; i++)
		p->snaps[i].schedstat_fd = p->batch_ts[i]->schedstat_fd;
	ptrace_hold_realtime(true);
	int r = ptrace_sample_many(ps->pt, p->batch_th, n, &o, p->snaps, p->results);
	ptrace_hold_realtime(false);
	for (size_t i = 0; i < n; i++)
		finish_thread(p, ps, i, r < 0 ? r : p->results[i]);
}

/* Choose thread th for this tick, or account for it without a stop. */
static void
choose_thread(struct profiler *p, struct proc_state *ps, struct tracee *th)
{
	struct thread_state *ts = thread_state_get(p, ps, th);
	if (!ts)
		return;
	ts->seen_tick = p->tick_no;
	if (ts->skip_until_ns > p->tick_ns)
		return;
	char state = thread_state_now(p, ps, ts);
	if (!state)
		return;  /* exiting */
	struct task_schedstat before;
	if (!p->cfg.idle) {
		if (state != 'R')
			return;
		/* The scheduled-in count before the interrupt, for the rule. */
		ptrace_read_schedstat(ts->schedstat_fd, &before);
	} else {
		ptrace_read_schedstat(ts->schedstat_fd, &before);
		if (state != 'R' && ts->last_ids &&
		    before.cpu_ns - ts->last_cpu_ns < IDLE_CPU_SLACK_NS) {
			/* Has not run since its last sample: same stack. */
			p->stats.reused++;
			add_stack(p, ps, ts, ts->last_ids, ts->last_n);
			return;
		}
	}
	size_t i = p->nbatch++;
	p->batch_th[i] = th;
	p->batch_ts[i] = ts;
	p->batch_before[i] = before;
	p->batch_state[i] = state;
	if (p->nbatch == SAMPLE_BATCH)
		flush_batch(p, ps);
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
	p->tick_ns = now;
	p->nbatch = 0;
	/* The batch keeps pointers to thread states: the table must not
	 * grow under it. */
	if (thread_table_reserve(ps, ps->pt->nthreads) < 0)
		return;
	for (size_t i = 0; i < ps->pt->nthreads && !stop_signal; i++) {
		struct tracee *th = &ps->pt->threads[i];
		if (th->state != TRACEE_GONE)
			choose_thread(p, ps, th);
	}
	flush_batch(p, ps);
	size_t alive = 0;
	for (size_t i = 0; i < ps->pt->nthreads; i++)
		alive += ps->pt->threads[i].state != TRACEE_GONE;
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
