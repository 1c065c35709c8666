/* sampler/sample.c - one tick: choose the threads of each process to stop
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
#include <sys/stat.h>
#include <time.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/launch.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "sampler/options.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "sampler/signals.h"
#include "unwind/unwind.h"

static void reopen_after_exec(struct profiler *p, struct proc_state *ps);

/* STACKSPY_TEST_IDLE_SLACK_US=N (tests/record-pool.test only): --idle's
 * IDLE_CPU_SLACK_NS is N us.  At 50,000 every stop in a pool worker's
 * 20 ms of work is as one in its last microseconds, or just after it woke:
 * the rare orders that mutations idle-ran and idle-owed-running break, made
 * the rule. */
static uint64_t
idle_slack_ns(void)
{
	static uint64_t ns;
	if (!ns) {
		const char *e = getenv("STACKSPY_TEST_IDLE_SLACK_US");
		long us = e && *e ? strtol(e, NULL, 10) : 0;
		ns = us > 0 ? (uint64_t)us * 1000u : IDLE_CPU_SLACK_NS;
	}
	return ns;
}

/* STACKSPY_TEST_IDLE_STOPS=N (tests/record-pool.test only): --idle stops
 * at most N threads a tick besides the running ones (the end's pass
 * excepted), as a host too slow for the first stops of every thread
 * would: the rest are put off (mutations idle-deferred and
 * idle-owed-running).  -1: no such bound. */
static long
test_idle_stops(void)
{
	static long n = -2;
	if (n == -2) {
		const char *e = getenv("STACKSPY_TEST_IDLE_STOPS");
		n = e && *e ? strtol(e, NULL, 10) : -1;
	}
	return n;
}

/* STACKSPY_TEST_IDLE_EVERY=N (tests/record-pool.test only): --idle looks
 * at a thread only at every Nth tick (by its tid), as a look cut by the
 * budget of a tick of thousands of threads would leave it, while the
 * census still reads it when it ran lately (it stays on the list of
 * threads that ran lately, which only a look adds to): the order that mutation
 * idle-owed-running breaks (a worker woken between two looks, read by
 * the census, then found in its work), made the rule.  0: no such bound. */
static bool
test_idle_not_now(const struct profiler *p, const struct thread_state *ts)
{
	static long every = -1;
	if (every < 0) {
		const char *e = getenv("STACKSPY_TEST_IDLE_EVERY");
		every = e && *e ? strtol(e, NULL, 10) : 0;
		if (every < 0)
			every = 0;
	}
	return every > 1 && p->cfg.idle && !p->tr.final_pass &&
	       (unsigned long)p->tr.tick_no % (unsigned long)every !=
	       (unsigned long)ts->tid % (unsigned long)every;
}

/* --idle: ts's kept stack no longer stands for it. */
static void
forget_last(struct thread_state *ts)
{
	free(ts->last_ids);
	ts->last_ids = NULL;
	ts->last_n = 0;
}

/* On-CPU --kernel: the system call a counted stop found its thread at the
 * end of, as a kernel frame "[syscall: writev]" (its kernel stack is the
 * ptrace stop's now; perf's would go on below the call). */
static bool
syscall_frame(struct profiler *p, const struct stack_snapshot *snap, uint32_t *id)
{
	long nr;
	if (!oncpu_stop_syscall(p->tr.arch, snap, &nr))
		return false;
	const char *name = oncpu_syscall_name(nr);
	char fn[96], kb[128];
	if (name)
		snprintf(fn, sizeof(fn), "[syscall: %s]", name);
	else
		snprintf(fn, sizeof(fn), "[syscall: %ld]", nr);
	int r = profiler_intern(p, collapse_name_kernel(kb, sizeof(kb), fn));
	if (r < 0)
		return false;
	*id = (uint32_t)r;
	return true;
}

/* The ticks put off (ts->owed) while its last sample was not being
 * unwound that this stop's stack stands for too: none for those at which
 * it may have run (counted lost).  Clears ts->owed. */
static uint32_t
owed_weight(struct profiler *p, struct thread_state *ts, const struct task_schedstat *before,
	    bool ran_at_stop)
{
	uint32_t add = 0;
	/* Not scheduled in since: a thread just woken has run for
	 * less than the kernel's own tick and shows no new CPU time
	 * (a pool's worker put off for 154 ticks asleep, then stopped
	 * a moment into its work, had them all counted there).  The
	 * schedstat (before) is read before the stop, the census's at
	 * the tick's start: what the stop found decides first.  A stop
	 * that found it running, after the ticks it was put off at
	 * asleep, found it woken since, and those ticks are not this
	 * stack's (woken between the reading and the stop, pool's
	 * workers had 44 and 161 ticks asleep counted in their work). */
	uint64_t ran = before->cpu_ns - ts->owed_cpu_ns;
	if (ran_at_stop) {
		p->stats.deferred_lost += ts->owed;
	} else if (ran < idle_slack_ns() && before->slices == ts->owed_slices) {
		add = ts->owed;
	} else if (p->cfg.idle && ts->owed_slices) {
		/* Asleep at the stop, after it ran (ran ns) in
		 * the ticks put off: at as many ticks as that time spans it may
		 * have run, and those are lost; at the others it
		 * slept, and they are given to where it sleeps now (a
		 * pool's worker, woken once a second, sleeps in one
		 * place; a thread that sleeps in several has the ones
		 * before its wake counted at the latest: the
		 * estimate of a thread looked at once in so many
		 * ticks).  With 20,000 threads each woken once a
		 * second, every one of the ticks put off was lost. */
		uint64_t running = ran / p->tr.ticks.period_ns + 1;
		uint32_t lost = running < ts->owed ? (uint32_t)running : ts->owed;
		add = ts->owed - lost;
		p->stats.deferred_lost += lost;
	} else {
		p->stats.deferred_lost += ts->owed;
	}
	ts->owed = 0;
	return add;
}

/* A stop is over (result r, snapshot snap): count it, and hand it over
 * (unwinder.c, which takes snap's buffer and leaves a free one) if it
 * stands for what the thread was doing at the tick pick->tick_ns, as the
 * tracer knew it then (pick), with kernel frames kids. */
static void
finish_sample(struct profiler *p, struct proc_state *ps, struct thread_state *ts, int r,
	      struct stack_snapshot *snap, const struct sample_pick *pick,
	      const uint32_t *kids, size_t nk)
{
	const struct task_schedstat *before = &pick->before;
	char state = pick->state;
	if (r == -ESRCH)
		return;
	if (r < 0) {
		p->stats.errors[PROF_ERR_PTRACE]++;
		return;
	}
	p->stats.stopped++;
	profiler_pause_hist_add(&p->pauses, snap->pause_ns);
	if (!p->cfg.idle) {
		int drop = oncpu_verdict(p->tr.arch, snap, before, pick->tick_cpu, pick->tick_ns,
					 ts->stop_cpu_ns);
		ts->stop_cpu_ns = snap->stop_sched.cpu_ns;
		if (drop < 0 && !oncpu_cpu_claim(p, pick))
			drop = ONCPU_DROP_WAITING;
		if (drop >= 0) {
			p->stats.dropped[drop]++;
			return;
		}
	}

	/* The thread runs again: the rest is the unwinder's. */
	if (ps->pt->exec_seen) {
		/* This very stop was the exec (or came after it): the maps
		 * are the new program's. */
		ps->pt->exec_seen = false;
		reopen_after_exec(p, ps);
		if (ps->map_pending)
			return;  /* nothing to name it with yet */
	}
	bool keep = p->cfg.idle;
	/* Whether the stop found it running (read before the push, which
	 * hands snap's buffers to the unwinder and gives back others). */
	bool ran = keep && !snap->group_stopped &&
		   (state == 'R' || !oncpu_cut_syscall(p->tr.arch, snap));
	/* Ticks deferred while it did not run (choose_thread) have this
	 * stack too. */
	uint32_t weight = p->tr.final_pass ? 0 : 1;
	if (weight && !p->cfg.idle) {
		uint32_t w = oncpu_weight(ts, before->cpu_ns, p->tr.ticks.period_ns,
					  &p->stats.oncpu_lost_ns);
		p->stats.oncpu_between += w - 1;
		weight = w;
	}
	/* Put off while no stack of its was being unwound, or while the one
	 * being unwound was taken running (not its stack asleep). */
	if (ts->owed && (!ts->awaiting_last || ts->last_ran))
		weight += owed_weight(p, ts, before, ran);
	if (!weight)
		return;
	uint32_t sys_id;
	if (!p->cfg.idle && p->cfg.kernel && !nk && syscall_frame(p, snap, &sys_id)) {
		kids = &sys_id;
		nk = 1;
	}
	struct sample_record rec = {
		.ps = ps, .ts = ts, .sampled_ns = pick->tick_ns, .kids = kids, .nk = nk,
		.weight = weight, .keep_last = keep, .snap = snap,
	};
	int pushed = unwinder_push_sample(p, &rec);
	if (pushed == 0)
		ps->dbg.taken++;
	if (pushed == 0 && keep) {
		/* --idle: its stack comes back once unwound; until then it is
		 * stopped again rather than given an older one. */
		forget_last(ts);
		/* The ticks owed to a sample still being unwound are that
		 * one's, not this one's (a worker parked while its sample was
		 * unwound, then stopped in its work, had them counted there). */
		if (ts->awaiting_last && ts->owed) {
			p->stats.deferred_lost += ts->prev_owed;
			ts->prev_owed = ts->owed;
			ts->prev_seq = ts->last_seq;
			ts->owed = 0;
		}
		ts->awaiting_last = true;
		ts->last_seq = p->tr.keep_seq;  /* this sample's (unwinder_push_sample) */
		/* Taken running, its stack is not the one it sleeps in
		 * next: not reused (a worker stopped 50 us before the end
		 * of its work, well within IDLE_CPU_SLACK_NS, was counted
		 * there for the 110 ticks it slept after).  Running is what
		 * the stop found, not only the look's state letter: the
		 * interrupt goes after the tick's looks, milliseconds later
		 * with thousands of threads, and a worker read asleep and
		 * woken meanwhile was stopped in its work, then counted there
		 * for the 96 ticks it slept after (a loaded CI run).  The stop
		 * of a thread asleep cuts its blocking call short.  One the
		 * stop found in a group-stop ran no code of its own, whatever
		 * the letter said (a listening tracee is R on its way back
		 * into the stop after each of ours, for long on a loaded
		 * host). */
		ts->last_ran = ran;
		ts->last_cpu_ns = before->cpu_ns;
	}
}

/* Thread i of the batch: its stop is over (result r), or it did not stop
 * by the deadline. */
static void
finish_thread(struct profiler *p, size_t i, int r)
{
	struct proc_state *ps = &p->procs[p->tr.batch_proc[i]];
	struct thread_state *ts = p->tr.batch_ts[i];
	if (r == -ETIMEDOUT) {
		if (!p->cfg.idle || p->tr.batch_pick[i].state == 'R') {
			/* Not on a CPU, or waiting for the one the tick took:
			 * its stop is sampled when it comes (late_sample).
			 * --idle: a runnable thread that waits for a CPU has
			 * not moved since the tick, so its late stop is the
			 * tick's stack (a build on a busy host: a compiler
			 * process that waited through every tick of its life
			 * had no sample). */
			p->stats.skipped++;
			ts->late = p->tr.batch_pick[i];
			return;
		}
		/* --idle, a thread that went to sleep after it was chosen
		 * (into D: a vfork parent, a process in its exec): its stop,
		 * when it comes, is not this tick's stack and is let go;
		 * until then it is not interrupted again (tracee.late), and
		 * once it runs it is sampled as any other (left alone for a
		 * second here, an `as` that lived 130 ms of a build on a
		 * busy host was never sampled: tests/record-make.test). */
		p->stats.errors[PROF_ERR_TIMEOUT]++;
		return;
	}
	ts->late.tick_ns = 0;  /* a pending late stop came in this batch */
	finish_sample(p, ps, ts, r, &p->tr.snaps[i], &p->tr.batch_pick[i], p->tr.batch_kids[i],
		      p->tr.batch_nk[i]);
}

/* The late stop of a thread the tick's deadline gave up on
 * (SAMPLE_LATE): the rule decides as for any other; a thread whose
 * CPU the tick took counts, with the registers it had at the tick. */
static void
late_sample(void *arg, struct ptrace_target *t, struct tracee *th, int r,
	    struct stack_snapshot *snap)
{
	struct profiler *p = arg;
	for (size_t k = 0; k < p->nprocs; k++) {
		struct proc_state *ps = &p->procs[k];
		if (ps->pt != t)
			continue;
		struct thread_state *ts = thread_state_find(ps, th->tid);
		if (!ts || !ts->late.tick_ns)
			return;
		p->stats.late++;
		/* Kept only for a thread seen running (finish_thread): its
		 * pick says 'R'. */
		struct sample_pick pick = ts->late;
		ts->late.tick_ns = 0;
		finish_sample(p, ps, ts, r, snap, &pick, NULL, 0);
		return;
	}
}

static int
late_schedstat_fd(void *arg, pid_t tid)
{
	struct profiler *p = arg;
	for (size_t k = 0; k < p->nprocs; k++) {
		struct thread_state *ts = p->procs[k].pt ? thread_state_find(&p->procs[k], tid) : NULL;
		if (ts)
			return ts->schedstat_fd;
	}
	return -1;
}

/* ps: NULL for a batch of several processes (ptrace_sample_threads). */
static void
sample_opts_for(const struct profiler *p, struct proc_state *ps, struct sample_opts *o)
{
	int64_t timeout_us = RECORD_STOP_TIMEOUT_MS * (int64_t)US_PER_MS;
	if (!p->cfg.idle) {
		int64_t half_period_us = (int64_t)(p->tr.ticks.period_ns / 2000u);
		timeout_us = half_period_us < ONCPU_STOP_TIMEOUT_US ? half_period_us :
			     ONCPU_STOP_TIMEOUT_US;
	}
	*o = (struct sample_opts){
		.window = STACK_WINDOW_BYTES,
		.stack_end = unwind_target_stack_end,
		.ctx = ps ? ps->ut : NULL,
		.timeout_us = timeout_us,
		/* On-CPU: the few running threads are interrupted at once, so
		 * one that waits for a CPU does not hold the others up (their
		 * copies take microseconds); --idle: one at a time, since many
		 * sleeping threads would otherwise wait for each other's
		 * copies. */
		.stagger_us = p->cfg.idle ? 1000 : 0,
		/* --idle: a thread that went into D after it was chosen
		 * (a vfork parent waiting for its child, which may itself
		 * wait in its first stop for this tick to end) is given up
		 * after a millisecond, not the timeout: its late stop is
		 * its sample. */
		.flags = p->cfg.idle ? SAMPLE_LATE | SAMPLE_DSTATE :
			 SAMPLE_SCHEDSTAT | SAMPLE_LATE,
		/* CPython's frames, in the stop (ctx is the thread's target:
		 * each process's own, in a batch of several). */
		.interp_read = p->tr.python ? unwind_python_stop_read : NULL,
		.interp_window = p->tr.python ? unwind_python_chain_bytes(p->cfg.max_depth) : 0,
	};
}

int
profiler_sample_setup(struct profiler *p, struct proc_state *ps)
{
	/* Its CPython, looked for (its files read) before any of its
	 * threads is stopped: the stops read its frames. */
	if (unwind_python_prepare(ps->ut))
		p->tr.python = true;
	struct sample_opts o;
	sample_opts_for(p, ps, &o);
	return ptrace_target_set_late(ps->pt, &o, late_sample, late_schedstat_fd, p);
}

/* On-CPU: the stops of early interrupts that are there, taken without
 * waiting (the tracer keeps its CPU: a thread seen on it later ran after
 * the tick), once the oldest has waited EARLY_WAIT_NS.  The batch
 * decides on them with the others, once all run again. */
static void
take_ready(struct profiler *p)
{
	uint64_t now = ptrace_clock_monotonic_ns();
	if (now - p->tr.batch_early_ns <= EARLY_WAIT_NS)
		return;
	struct sample_opts o;
	sample_opts_for(p, NULL, &o);
	for (size_t i = 0; i < p->tr.nbatch; i++)
		p->tr.snaps[i].schedstat_fd = p->tr.batch_ts[i]->schedstat_fd;
	(void)ptrace_sample_ready(p->tr.batch_pt, p->tr.batch_ctx, p->tr.batch_th, p->tr.nbatch, &o,
				  p->tr.snaps, p->tr.results);
	p->tr.batch_early_ns = 0;
	for (size_t i = 0; i < p->tr.nbatch; i++)
		if (p->tr.batch_th[i]->interrupted_ns) {
			p->tr.batch_early_ns = now;  /* look again in EARLY_WAIT_NS */
			break;
		}
}

/* Stop the batch's threads, of every process of the tick, together
 * against one deadline (each stopped only for its own copy), then, with
 * every one of them running again, decide and hand over. */
static void
flush_batch(struct profiler *p)
{
	size_t n = p->tr.nbatch;
	if (n == 0)
		return;
	p->tr.nbatch = 0;
	p->tr.batch_early_ns = 0;
	p->tr.tick_exec_read = false;  /* it sleeps in the stops */
	struct sample_opts o;
	sample_opts_for(p, NULL, &o);
	for (size_t i = 0; i < n; i++)
		p->tr.snaps[i].schedstat_fd = p->tr.batch_ts[i]->schedstat_fd;
	ptrace_hold_realtime(true);
	/* The interrupts are sent: the threads on the CPUs held for the
	 * tick may run into their stops. */
	oncpu_hold_release(p);
	uint64_t t0 = ptrace_clock_monotonic_ns();
	int r = ptrace_sample_threads(p->tr.batch_pt, p->tr.batch_ctx, p->tr.batch_th, n, &o,
				      p->tr.snaps, p->tr.results);
	/* The tick stays real-time within a budget of the period: starved
	 * at normal priority on a busy host, ticks overran (1,000 of 1,500
	 * missed at 500 Hz, load 14); a long tick (many threads, --idle)
	 * goes on at the normal priority so as not to hog a CPU.  The time
	 * spent stopping threads is not the tick's CPU: mostly a sleep for
	 * their stops, up to ONCPU_STOP_TIMEOUT_US on a busy host, which
	 * counted in made nearly every tick there drop the priority and take
	 * it again (two system calls a tick). */
	uint64_t spent = ptrace_clock_monotonic_ns() - t0;
	p->tr.stop_wait_ns += spent;
	/* Averaged over the last batches (--idle's budget, idle_may_stop). */
	uint64_t per = spent / n;
	p->tr.stop_cost_ns = p->tr.stop_cost_ns ? (7 * p->tr.stop_cost_ns + per) / 8 : per;
	uint64_t budget = p->tr.ticks.period_ns / 4 < TICK_RT_BUDGET_NS ?
			  p->tr.ticks.period_ns / 4 : TICK_RT_BUDGET_NS;
	for (size_t i = 0; i < n; i++) {
		if (ptrace_clock_monotonic_ns() - p->tr.tick_ns > budget + p->tr.stop_wait_ns)
			ptrace_hold_realtime(false);
		finish_thread(p, i, r < 0 ? r : p->tr.results[i]);
	}
}

/* --idle: whether this tick may stop one more thread that has no stack
 * to reuse: the unwinder's queue has room for its sample, and the tick,
 * with the stops it has chosen (at what a stop has cost lately), stays
 * within half its period.  The rest of the tick is what the last one
 * spent besides its stops, or what this one has so far if more: the
 * time so far alone left out the rest of the walk and the handing over,
 * and ticks of 7-10 ms at 99 Hz (5,000 threads' first stops) ran past
 * the next tick's grid point a quarter of the time (the deadlines are
 * jittered by up to half a period: a tick longer than half of one can
 * miss the next). */
static bool
idle_may_stop(const struct profiler *p)
{
	if (p->tr.idle_stops >= p->tr.idle_room)
		return false;
	/* One stop a tick at least: a cost averaged over a few slow stops
	 * (a loaded host) allowed no stop again, and so was never measured
	 * again (20,000 threads waited for their first stop until the end
	 * of the recording). */
	if (p->tr.final_pass || p->tr.idle_stops == 0)
		return true;
	long most = test_idle_stops();
	if (most >= 0 && p->tr.idle_stops >= (size_t)most)
		return false;
	uint64_t cost = p->tr.stop_cost_ns ? p->tr.stop_cost_ns : IDLE_STOP_COST_NS;
	uint64_t other = ptrace_clock_monotonic_ns() - p->tr.tick_ns - p->tr.stop_wait_ns;
	uint64_t last = p->tr.tick_other_ns;
	/* A look that goes round the threads ends at a sixth of the
	 * period, what follows it included (idle_over_budget): the stops
	 * have the next sixth (the last tick's look, taken whole, left
	 * them one a tick: a busy thread among 20,000 was counted at half
	 * the ticks). */
	if (p->tr.tick_spread && last > p->tr.ticks.period_ns / 6)
		last = p->tr.ticks.period_ns / 6;
	if (other < last)
		other = last;
	return other + (p->tr.idle_stops + 1) * cost <= p->tr.ticks.period_ns / 3;
}

/* Put off ts's stop: its stack when it stops is this tick's, if it has
 * not run meanwhile (its CPU time then, cpu_ns). */
static void
idle_defer(struct profiler *p, struct proc_state *ps, struct thread_state *ts, uint64_t cpu_ns,
	   uint64_t slices)
{
	ps->dbg.deferred++;
	/* Its last stack is not its stack now (it ran since): once cold,
	 * it would be reused for every tick (a pool's worker sampled in its
	 * 20 ms of work was counted there for a second after, in 111 of 186
	 * ticks: tests/record-pool.test). */
	forget_last(ts);
	if (!ts->owed) {
		ts->owed_cpu_ns = cpu_ns;
		ts->owed_slices = slices;
	}
	ts->owed++;
	p->stats.deferred++;
}

/* --idle: the tick has spent its budget (a third of the period, the
 * batch not yet stopped counted at what a stop costs): the threads not
 * looked at yet are put off (idle_catch_up), and the next tick goes on
 * from there.  Reading 20,000 threads that each wake once a second
 * (every tick, some had run: the census could skip none) took every
 * tick past ten of its successors: 1 to 7 Hz of 99
 * (bench/record-threads.sh -m wakers).  At least IDLE_LOOK_MIN threads a
 * tick are looked at, so that every thread has its turn. */
#define IDLE_LOOK_MIN 64u
#define IDLE_CENSUS_EVERY_MAX 16u

static bool
idle_over_budget(const struct profiler *p, size_t looked)
{
	if (p->tr.final_pass || looked < IDLE_LOOK_MIN)
		return false;
	uint64_t cost = p->tr.stop_cost_ns ? p->tr.stop_cost_ns : IDLE_STOP_COST_NS;
	uint64_t spent = ptrace_clock_monotonic_ns() - p->tr.tick_ns;
	/* The reading and what follows it (as the last tick took: the
	 * stops handed over, a waitpid that walks every tracee, 2 ms at
	 * 20,000) take at most half of it: the rest is the stops'
	 * (idle_may_stop), or no thread's first stop would ever come. */
	return spent - p->tr.stop_wait_ns + p->tr.tick_tail_ns > p->tr.ticks.period_ns / 6 ||
	       spent + p->tr.nbatch * cost > p->tr.ticks.period_ns / 3;
}

/* The ticks before this one that did not look at ts (the budget ran out
 * before its turn: idle_over_budget) are put off without anything of it
 * read: they are its next sample's if it has not run meanwhile (as of
 * its last read), else lost (finish_sample); its last stack is kept, and
 * stands for them too if its next look finds it has not run.  Counted
 * when it is next looked at, so that a tick costs the threads it looks
 * at, not all of them (20,000 skipped took 2 ms). */
static void
idle_catch_up(struct profiler *p, struct thread_state *ts, unsigned upto)
{
	unsigned gap = ts->looked_tick && upto > ts->looked_tick ? upto - ts->looked_tick : 0;
	ts->looked_tick = upto;
	if (!gap)
		return;
	/* As of that look, not as last read: the census reads a thread that
	 * woke since (hot), and a worker looked at asleep, woken after ten
	 * ticks and stopped in its work, had every tick counted there
	 * (tests/record-pool.test with sleepers put off: 192 of 192). */
	if (!ts->owed) {
		ts->owed_cpu_ns = ts->looked_cpu_ns;
		ts->owed_slices = ts->looked_slices;
	}
	ts->owed += gap;
	p->stats.deferred += gap;
}

/* --idle: count ticks a thread slept through with stack ids (n of them,
 * from its process's slot proc): counted on it, or lost when it unwound
 * to nothing. */
static void
owed_to(struct profiler *p, uint32_t proc, const struct thread_state *ts, const uint32_t *ids,
	size_t n, uint32_t count)
{
	if (!count)
		return;
	if (ids)
		unwinder_push_reuse(p, &p->procs[proc], ts, ids, n, count);
	else
		p->stats.deferred_lost += count;
}

void
profiler_take_lasts(struct profiler *p)
{
	size_t n;
	struct last_stack *v = unwinder_take_lasts(p, &n);
	for (size_t i = 0; i < n; i++) {
		struct thread_state *ts = v[i].proc < p->nprocs && p->procs[v[i].proc].tcap ?
					  thread_state_find(&p->procs[v[i].proc], v[i].tid) : NULL;
		/* Only its latest sample: a thread stopped again while one was
		 * being unwound (it ran) has that one's stack now, and the
		 * earlier one, back first, was kept in its place (a pool's
		 * worker counted in its work for a second after it slept:
		 * tests/record-pool.test). */
		if (ts && ts->awaiting_last && v[i].seq == ts->last_seq) {
			ts->awaiting_last = false;
			free(ts->last_ids);
			ts->last_ids = v[i].ids;  /* NULL when it found no frame */
			ts->last_n = v[i].n;
			/* The ticks it slept through meanwhile; not those put
			 * off after a stop that found it running: they are
			 * judged at its next stop (a worker whose sample in
			 * its work waited long in the unwinder's queue had
			 * every tick put off meanwhile counted there, 183 of
			 * 183: tests/record-pool.test). */
			if (!ts->last_ran) {
				owed_to(p, v[i].proc, ts, v[i].ids, v[i].n, ts->owed);
				ts->owed = 0;
			}
		} else {
			/* An earlier sample, after which it was stopped again:
			 * the ticks it slept through before that are its. */
			if (ts && v[i].seq == ts->prev_seq) {
				owed_to(p, v[i].proc, ts, v[i].ids, v[i].n, ts->prev_owed);
				ts->prev_owed = 0;
			}
			free(v[i].ids);
		}
	}
	free(v);
}

/* --idle: has ts a stack kept (or coming back from the unwinder)? */
static bool
has_last(const struct thread_state *ts)
{
	return ts->last_ids || ts->awaiting_last;
}

/* --idle: may that stack stand for it while it has not run since?  Not
 * one taken while it ran (finish_sample). */
static bool
last_reusable(const struct thread_state *ts)
{
	return !ts->last_ran && has_last(ts);
}

/* --idle: ts has not run since its last sample: this tick has its stack
 * (added when it comes back from the unwinder if it is still there). */
static void
idle_reuse(struct profiler *p, struct proc_state *ps, struct thread_state *ts)
{
	p->stats.reused++;
	ps->dbg.reused++;
	if (ts->awaiting_last) {
		ts->owed++;
	} else {
		/* Ticks put off since its last look (idle_catch_up) have
		 * this stack too: it has not run. */
		unwinder_push_reuse(p, ps, ts, ts->last_ids, ts->last_n,
				    (p->tr.final_pass ? 0 : 1) + ts->owed);
		ts->owed = 0;
	}
}

/* Two readings of se.exec_start: the same instant of a run queue's clock? */
static bool
exec_near(uint64_t a, uint64_t b)
{
	return a && b && a <= b + ONCPU_TOOK_EXEC_NS && a + ONCPU_TOOK_EXEC_NS >= b;
}

/* On-CPU: did the tick take the CPU of a thread that waits on cpu (its
 * stat line says which)?  The taker is the tracer, waking for the tick,
 * or the CPU's holder (oncpu-hold.c); a thread it took the CPU from left
 * that CPU as the taker came: the scheduler accounted the thread's CPU
 * time last (se.exec_start) when it accounted the taker's first, the same
 * instant of the same run queue's clock (ONCPU_TOOK_EXEC_NS).  A thread
 * woken from its sleep as the tick began waits there too, but left its
 * CPU when it went to sleep, before or after.  The thread's sched is read
 * before its interrupt, only for the few threads waiting on such a CPU;
 * the tracer's own once per tick, and again after it slept in a batch's
 * stops (it came back by taking a CPU again).  1: taken; 0: not (no taker
 * of ours on that CPU, or another instant); -1: cannot be told (a sched
 * file that cannot be read). */
static int
tick_took_cpu(struct profiler *p, pid_t pid, pid_t tid, int cpu)
{
	uint64_t taker = 0, first = 0;
	if (cpu < 0)
		return 0;
	if (cpu != p->tr.tick_cpu) {
		if (!oncpu_hold_held(p, cpu, &taker))
			return 0;
	} else {
		if (!p->tr.tick_exec_read) {
			struct task_sched own;
			p->tr.tick_exec_read = true;
			p->tr.tick_exec_ns = ptrace_read_task_sched(0, 0, &own) == 0 ?
					     own.exec_start_ns : 0;
			if (!p->tr.tick_exec_first)
				p->tr.tick_exec_first = p->tr.tick_exec_ns;
		}
		taker = p->tr.tick_exec_ns;
		/* It took the CPU again after it slept in a batch's stops:
		 * a thread taken at its wake-up has that instant. */
		first = p->tr.tick_exec_first;
		if (!taker)
			return -1;
	}
	struct task_sched sched;
	if (ptrace_read_task_sched(pid, tid, &sched) < 0 || !sched.exec_start_ns)
		return -1;
	return exec_near(sched.exec_start_ns, taker) || exec_near(sched.exec_start_ns, first);
}

/* Thread th (ts), seen in state with schedstat before, joins the tick's
 * batch: what the rule needs read before its interrupt, and on-CPU the
 * interrupt itself. */
static void
batch_add(struct profiler *p, struct proc_state *ps, struct tracee *th, struct thread_state *ts,
	  const struct task_schedstat *before, char state)
{
	/* Its stop costs it CPU time: read with the hot ones next tick, or
	 * the process's clock would not match (thread_census). */
	thread_mark_hot(p, ts);
	ps->dbg.chosen++;
	size_t i = p->tr.nbatch++;
	p->tr.batch_th[i] = th;
	p->tr.batch_pt[i] = ps->pt;
	p->tr.batch_ctx[i] = ps->ut;
	p->tr.batch_proc[i] = (size_t)(ps - p->procs);
	p->tr.batch_ts[i] = ts;
	struct sample_pick *pick = &p->tr.batch_pick[i];
	memset(pick, 0, sizeof(*pick));
	pick->tick_ns = p->tr.tick_ns;
	pick->before = *before;
	pick->state = state;
	/* On-CPU: read before the interrupt, never in the stop. */
	pick->tick_cpu = !p->cfg.idle && state == 'R' ?
			 tick_took_cpu(p, ps->pid, th->tid, ts->state_cpu) : 0;
	pick->cpu = ts->state_cpu;
	pick->tick_no = p->tr.tick_no;
	/* On-CPU: stopped now, as it was seen running, not after the looks
	 * at the other threads (ptrace_interrupt_early); an error is the
	 * batch's to report. */
	if (!p->cfg.idle && ptrace_interrupt_early(th, &p->tr.snaps[i], STACK_WINDOW_BYTES) == 0 &&
	    !p->tr.batch_early_ns)
		p->tr.batch_early_ns = th->interrupted_ns;
	/* The thread a holder took its CPU from has its interrupt: the CPU
	 * may go (it runs into its stop there). */
	if (pick->tick_cpu > 0 && pick->cpu != p->tr.tick_cpu)
		oncpu_hold_release_cpu(p, pick->cpu);
	/* --kernel: where a sleeping thread sleeps in the kernel, read
	 * before the interrupt wakes it into the stop. */
	p->tr.batch_nk[i] = p->cfg.kernel && state != 'R' ?
		(uint8_t)profiler_kernel_frame_ids(p, ps->pid, th->tid, p->tr.batch_kids[i],
						   MAX_KERNEL_FRAMES) : 0;
}

/* Choose thread th for this tick, or account for it without a stop. */
static void
choose_thread(struct profiler *p, struct proc_state *ps, struct tracee *th,
	      struct thread_state *ts)
{
	/* A stop is registers and a stack copy, not the looks at the
	 * threads after it too (EARLY_WAIT_NS). */
	if (p->tr.batch_early_ns)
		take_ready(p);
	if (th->late) {
		/* Its interrupt of an earlier tick is still pending: it waits
		 * for a CPU (most often the one that tick took).  Its stop
		 * is that tick's sample; interrupting it again would judge
		 * it against this tick, as waiting. */
		p->stats.skipped++;
		ps->dbg.late++;
		return;
	}
	/* Its schedstat, read before the state: the scheduled-in count
	 * before the interrupt for the rule, the CPU time for --idle's
	 * reuse (and, for both, whether it ran: thread_census).  On-CPU it
	 * is read again, just before the state and the interrupt, not taken
	 * from the census at the start of the tick: a thread asleep then and
	 * woken since was passed over as unmoved, and the first microseconds
	 * of every turn of work were never sampled (with the interrupt sent
	 * after the looks at every thread, compute_heavy 0.69-0.72 where it
	 * is 0.75: tests/record-oncpu.test; 0.74-0.75 with both). */
	struct task_schedstat before;
	if (ts->census_tick == p->tr.tick_no && p->cfg.idle)
		before = ts->census;
	else
		thread_schedstat(p, ps, ts, &before);
	/* On-CPU: a thread seen asleep with this count and found with it
	 * again has not run since: it is not on a CPU (asleep, or woken and
	 * waiting for one, which the rule would drop), and its stat line
	 * (five times the cost of schedstat) is not read.  Most threads of
	 * a server sleep most ticks. */
	bool unmoved = before.slices && before.slices == ts->asleep.slices &&
		       before.cpu_ns == ts->asleep.cpu_ns;
	if (!p->cfg.idle && unmoved)
		return;
	if (p->cfg.idle) {
		/* --idle: likewise, a thread seen asleep with its stack to
		 * reuse, and not scheduled in since, has that stack still
		 * (or waits for a CPU with it).  The threads our stops woke
		 * are read for HOT_TICKS ticks after (threads.c): at 5,000
		 * threads a stat line for each was a third of a tick. */
		if (unmoved && last_reusable(ts)) {
			idle_reuse(p, ps, ts);
			return;
		}
		/* In a group-stop (we listen): it runs no code of its own
		 * until SIGCONT, which the tracer sees.  Its CPU time is no
		 * guide: each stop of ours costs it some, past
		 * IDLE_CPU_SLACK_NS on a loaded host, and then it was
		 * stopped at every tick (tests/promise-stopped-record.test). */
		if (th->state == TRACEE_LISTENING && last_reusable(ts)) {
			ts->asleep = before;
			idle_reuse(p, ps, ts);
			return;
		}
		/* A thread with no stack yet that this tick cannot stop,
		 * and that has not run lately, is put off before its state
		 * is read: the first tick of a pool of 5,000 read every
		 * stat line for nothing (0.16 s, 15 ticks missed).  One
		 * that runs is stopped first (at the first tick, with no
		 * reading before, it is put off once). */
		if (!has_last(ts) && thread_is_cold(p, ts) &&
		    !idle_may_stop(p)) {
			idle_defer(p, ps, ts, before.cpu_ns, before.slices);
			return;
		}
	}
	char state = thread_state_now(p, ps, ts);
	if (!state)
		return;  /* exiting */
	if (state == 'R')
		thread_mark_hot(p, ts);
	if (!p->cfg.idle) {
		/* It ran since it was last seen asleep (or it would be
		 * unmoved): the CPU it last ran on is held at the next ticks,
		 * whether it runs or sleeps now (a server that runs dry just
		 * after the tick is asleep at every look without a hold). */
		oncpu_hold_want(p, ts->state_cpu);
		if (state != 'R') {
			ts->asleep = before;
			return;
		}
		ts->asleep.slices = 0;
	} else {
		/* A thread in D cannot stop: read it as it is (blocked.c). */
		if (state == 'D' && profiler_blocked_stack(p, ps, ts)) {
			p->stats.unstopped++;
			return;
		}
		if (state != 'R' && last_reusable(ts) &&
		    before.cpu_ns - ts->last_cpu_ns < idle_slack_ns()) {
			/* Has not run since its last sample: same stack (still
			 * being unwound: added when it comes back). */
			ts->asleep = before;
			idle_reuse(p, ps, ts);
			return;
		}
		ts->asleep.slices = 0;
		/* Past what the unwinder can take this tick, or the tick's
		 * budget (the first tick of 20,000 sleeping threads stopped
		 * every one, for seconds, and the queue dropped most), a
		 * sleeping thread's stop is deferred: its stack when it comes
		 * is this tick's, if it has not run meanwhile. */
		if (state != 'R' && !ts->awaiting_last && !idle_may_stop(p)) {
			idle_defer(p, ps, ts, before.cpu_ns, before.slices);
			return;
		}
		p->tr.idle_stops++;
	}
	batch_add(p, ps, th, ts, &before, state);
	if (p->tr.nbatch == SAMPLE_BATCH)
		flush_batch(p);
}

void
profiler_proc_map_refresh(struct profiler *p, struct proc_state *ps)
{
	int err;
	struct unwind_target *ut = unwind_target_open(ps->pid, &err);
	if (!ut) {
		/* In an exec (a vfork child becoming `as`): the tracer does
		 * not wait for it (it waited up to 200 ms here, every target
		 * held meanwhile: an `as` that lived 160 ms was never
		 * sampled, tests/record-make.test under load). */
		ps->map_pending = err == -ESRCH && profiler_proc_may_map(ps);
		return;
	}
	ps->map_pending = false;
	unwind_target_free(ps->ut);
	ps->ut = ut;
	/* Late stops' stack ends come from this map (out of memory: none
	 * are taken, and the samples of the ticks still are). */
	profiler_sample_setup(p, ps);
	unwinder_push_map(p, ps);
}

static void
reopen_after_exec(struct profiler *p, struct proc_state *ps)
{
	/* After the exec it is another program: cc1-PID, not gcc-PID, even
	 * where its files cannot be read.  Written under the lock: the
	 * output jobs on the unwinder's thread name the profile after it. */
	char comm[sizeof(ps->comm)];
	memcpy(comm, ps->comm, sizeof(comm));
	ptrace_read_comm(ps->pid, comm, sizeof(comm));
	profiler_stacks_lock(p);
	memcpy(ps->comm, comm, sizeof(comm));
	profiler_stacks_unlock(p);
	profiler_proc_set_root(p, ps);
	/* Unreadable: the old map is kept (nothing breaks); while it is
	 * pending, the process is not sampled. */
	profiler_proc_map_refresh(p, ps);
}

/* A full rescan of /proc/PID/task costs five system calls a tick; the
 * directory's link count (two plus the number of threads) costs one and
 * changes when a thread comes or goes.  A thread that replaced one that
 * exited since the last tick leaves the count as it was: a full rescan
 * at least every RESCAN_NS catches it. */
static bool
threads_may_have_changed(struct proc_state *ps, uint64_t now)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)ps->pid);
	nlink_t n = stat(path, &st) == 0 ? st.st_nlink : 0;
	/* A rescan reads every thread's entry (about a microsecond each):
	 * with 20,000 threads, one every RESCAN_NS was a fifth of the
	 * tracer's time.  It is the net under the clone events, which
	 * report new threads: its period grows with the threads so that it
	 * stays about a hundredth of the time. */
	uint64_t every = (uint64_t)ps->pt->nthreads * RESCAN_NS_PER_THREAD;
	if (every < RESCAN_NS)
		every = RESCAN_NS;
	if (n && n == ps->task_nlink && now - ps->rescan_ns < every)
		return false;
	ps->task_nlink = n;
	ps->rescan_ns = now;
	return true;
}

/* A tick's look at the threads of a process. */
struct look {
	bool skip_cold;           /* the census says no cold thread ran */
	bool all;                 /* every thread was read */
	size_t looked;
};

/* --idle: what this look knew of ts's schedstat, the baseline of the
 * ticks put off until its next look (idle_catch_up). */
static void
look_done(struct thread_state *ts)
{
	ts->looked_cpu_ns = ts->cpu_seen;
	ts->looked_slices = ts->slices_seen;
}

/* Look at thread th (ts) this tick: account for it without a stop, or
 * choose it for the batch. */
static void
look_at(struct profiler *p, struct proc_state *ps, struct tracee *th, struct thread_state *ts,
	struct look *l)
{
	l->looked++;
	ps->dbg.looks++;
	if (p->cfg.idle)
		idle_catch_up(p, ts, p->tr.tick_no - 1);
	ts->looked_tick = p->tr.tick_no;
	if (l->skip_cold && ts->census_tick != p->tr.tick_no && thread_is_cold(p, ts)) {
		l->all = false;
		if (!p->cfg.idle)
			return;  /* asleep since it was last read */
		if (!th->late && last_reusable(ts)) {
			/* --idle: its stack has not moved either. */
			idle_reuse(p, ps, ts);
			look_done(ts);
			return;
		}
		if (!th->late && !idle_may_stop(p)) {
			idle_defer(p, ps, ts, ts->cpu_seen, ts->slices_seen);
			look_done(ts);
			return;
		}
	}
	choose_thread(p, ps, th, ts);
	thread_census_keep(p, ps, ts);
	look_done(ts);
}

/* Its threads as /proc lists them, and its Python threads as the
 * interpreter does (walked again when a stop met one not listed): before
 * any stop of the tick. */
static void
refresh_threads(struct profiler *p, struct proc_state *ps, uint64_t now)
{
	if (threads_may_have_changed(ps, now))
		ptrace_target_rescan(ps->pt);
	if (p->tr.python)
		unwind_python_prepare(ps->ut);
}

void
profiler_sample_process(struct profiler *p, struct proc_state *ps, uint64_t now)
{
	/* Its pending stops were collected by the tick (ticks.c). */
	if (ps->pt->exec_seen) {
		ps->pt->exec_seen = false;
		reopen_after_exec(p, ps);
	} else if (ps->map_pending) {
		profiler_proc_map_refresh(p, ps);
	}
	if (!ps->ut && !ps->map_pending) {
		/* Adopted, and gone (or its map cannot be read) before its
		 * first tick: let it go. */
		profiler_proc_release(p, ps);
		return;
	}
	/* In an exec: nothing of the new program to name yet (its stacks
	 * would be named from the old map, or have no stack end). */
	if (ps->map_pending)
		return;
	refresh_threads(p, ps, now);
	p->tr.tick_ns = now;
	/* The batch keeps pointers to thread states: the table must not
	 * grow under it. */
	if (thread_table_reserve(ps, ps->pt->nthreads) < 0)
		return;
	/* The threads that ran lately first, then the others if the
	 * process's CPU time says that one of them ran (threads.c, "Cold
	 * threads"). */
	/* --idle, when a look at every thread would take more than half a
	 * period (at what a look has cost lately): the look goes round the
	 * threads over ticks, within each tick's budget (idle_over_budget),
	 * after the threads that ran lately, which are looked at every tick
	 * (a busy thread among 20,000 sleeping ones was sampled once a
	 * round, its other ticks lost).  Below that every thread is looked
	 * at every tick, as before: a pool's worker woken after a minute
	 * asleep is found at once, and sampled in its 20 ms of work
	 * (tests/record-pool.test). */
	size_t n = ps->pt->nthreads;
	bool spread = p->cfg.idle && ps->look_cost_ns &&
		      n * ps->look_cost_ns > p->tr.ticks.period_ns / 2;
	p->tr.tick_spread = spread;
	size_t nprio = 0;
	if (spread && ps->nhot && BASE_GROW(ps->prio, ps->prio_cap, ps->nhot, 64) == 0) {
		memcpy(ps->prio, ps->hot, ps->nhot * sizeof(*ps->prio));
		nprio = ps->nhot;
	}
	bool skip_cold = false;
	if (spread && p->tr.tick_no < ps->census_next) {
		ps->nhot = 0;
	} else {
		skip_cold = thread_census(p, ps);
		/* The census reads the process's clock, which sums its
		 * threads in the kernel: 1 to 3.5 ms at 20,000 threads, all
		 * of a tick's budget.  While it keeps saying that some cold
		 * thread ran (a pool whose threads each wake once a second),
		 * it is asked less and less often, up to every
		 * IDLE_CENSUS_EVERY_MAX ticks. */
		ps->census_every = skip_cold || !ps->census_every ? 1 :
				   ps->census_every * 2 > IDLE_CENSUS_EVERY_MAX ?
				   IDLE_CENSUS_EVERY_MAX : ps->census_every * 2;
		ps->census_next = p->tr.tick_no + ps->census_every;
	}
	struct look l = { .skip_cold = skip_cold, .all = true };
	uint64_t look_start = ptrace_clock_monotonic_ns(), waited = p->tr.stop_wait_ns;
	for (size_t k = 0; k < nprio && !stop_signal; k++) {
		struct tracee *th = ptrace_target_thread(ps->pt, ps->prio[k]);
		struct thread_state *ts = th && th->state != TRACEE_GONE ?
					  thread_state_get(p, ps, th) : NULL;
		if (!ts || thread_is_cold(p, ts) || ts->looked_tick == p->tr.tick_no)
			continue;
		if (test_idle_not_now(p, ts)) {
			thread_census_keep(p, ps, ts);
			continue;
		}
		ts->seen_tick = p->tr.tick_no;
		if (!th->late && idle_over_budget(p, l.looked))
			break;
		look_at(p, ps, th, ts, &l);
	}
	bool cut = false;
	size_t first = spread && n ? ps->idle_cursor % n : 0;
	/* The ticks that sweep the table (profiler_sample_finish) see every
	 * thread, looked at or not. */
	bool sweep = (p->tr.tick_no & 63) == 0;
	for (size_t k = 0; k < n && !stop_signal; k++) {
		size_t i = (first + k) % n;
		struct tracee *th = &ps->pt->threads[i];
		if (th->state == TRACEE_GONE)
			continue;
		if (cut && !sweep)
			break;
		struct thread_state *ts = thread_state_get(p, ps, th);
		if (!ts)
			continue;
		ts->seen_tick = p->tr.tick_no;
		if (cut || ts->looked_tick == p->tr.tick_no)
			continue;
		if (test_idle_not_now(p, ts)) {
			/* Still read by the census while it ran lately. */
			thread_census_keep(p, ps, ts);
			continue;
		}
		if (spread && !th->late && idle_over_budget(p, l.looked)) {
			ps->idle_cursor = i;
			l.all = false;
			cut = true;
			continue;
		}
		look_at(p, ps, th, ts, &l);
	}
	if (p->cfg.idle && l.looked) {
		uint64_t per = (ptrace_clock_monotonic_ns() - look_start -
				(p->tr.stop_wait_ns - waited)) / l.looked;
		ps->look_cost_ns = ps->look_cost_ns ? (7 * ps->look_cost_ns + per) / 8 : per;
	}
	bool all = l.all;
	thread_census_end(p, ps, all && !stop_signal);
}

bool
profiler_sample_finish(struct profiler *p)
{
	/* The threads of every process together: a tick of many processes
	 * (--subprocesses: a build) is one deadline, not one per process
	 * (DESIGN.md, "Many threads per tick"). */
	flush_batch(p);
	unwinder_flush_reuse(p);
	bool any = false;
	for (size_t k = 0; k < p->nprocs; k++) {
		struct proc_state *ps = &p->procs[k];
		if (!ps->attached || ps->exited || !ps->pt)
			continue;
		size_t alive = 0;
		for (size_t i = 0; i < ps->pt->nthreads; i++)
			alive += ps->pt->threads[i].state != TRACEE_GONE;
		ptrace_target_prune(ps->pt);
		if ((p->tr.tick_no & 63) == 0)
			thread_table_sweep(ps, p->tr.tick_no);
		if (alive == 0 && !stop_signal) {
			ps->exited = true;
			int st;
			if (ptrace_child_status(ps->pt, &st))
				p->tr.child_status = st;
			if (ps->followed)
				profiler_proc_release(p, ps);
		}
		any |= !ps->exited;
	}
	return any;
}

bool
profiler_poll_targets(struct profiler *p)
{
	bool alive = false;
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		if (!ps->attached || ps->exited)
			continue;
		ptrace_target_poll(ps->pt);
		alive = true;
	}
	return alive;
}

/* Let the unwinder get on: unwind now without its own thread, else a
 * millisecond's sleep. */
static void
wait_for_unwinder(struct profiler *p)
{
	if (unwinder_pending(p)) {
		unwinder_drain(p);
		return;
	}
	struct timespec ms = { 0, (long)NS_PER_MS };
	nanosleep(&ms, NULL);
}

/* Whether a thread owes ticks to a stack still being unwound. */
static bool
owed_awaiting(const struct profiler *p)
{
	for (size_t k = 0; k < p->nprocs; k++)
		for (size_t i = 0; i < p->procs[k].tn; i++)
			if (p->procs[k].threads[i].owed && p->procs[k].threads[i].awaiting_last)
				return true;
	return false;
}

/* How long profiler_take_deferred waits for room in the unwinder's queue
 * before it gives up on the samples still to take. */
#define DEFERRED_WAIT_MS 5000u

void
profiler_take_deferred(struct profiler *p)
{
	if (!p->cfg.idle)
		return;
	/* The recording's time and rate are those of its ticks. */
	p->tr.ticks_end_ns = ptrace_clock_monotonic_ns();
	p->tr.final_pass = true;
	/* The ticks that did not look at a live thread are its next
	 * stop's (one gone since has none). */
	for (size_t k = 0; k < p->nprocs; k++) {
		struct proc_state *ps = &p->procs[k];
		for (size_t i = 0; ps->pt && !ps->exited && i < ps->pt->nthreads; i++) {
			struct tracee *th = &ps->pt->threads[i];
			struct thread_state *ts = th->state == TRACEE_GONE ? NULL :
						  thread_state_find(ps, th->tid);
			if (ts && !ts->dead)
				idle_catch_up(p, ts, p->tr.tick_no);
		}
	}
	uint64_t waited_since = 0;
	size_t left;
	do {
		left = 0;
		p->tr.nbatch = 0;
		p->tr.idle_stops = 0;
		p->tr.idle_room = unwinder_room(p);
		p->tr.tick_ns = ptrace_clock_monotonic_ns();
		p->tr.stop_wait_ns = 0;
		for (size_t k = 0; k < p->nprocs && !stop_signal; k++) {
			struct proc_state *ps = &p->procs[k];
			if (!ps->attached || ps->exited || !ps->pt || !ps->ut || ps->map_pending)
				continue;
			for (size_t i = 0; i < ps->pt->nthreads && !stop_signal; i++) {
				struct tracee *th = &ps->pt->threads[i];
				struct thread_state *ts = th->state == TRACEE_GONE || th->late ? NULL :
							  thread_state_find(ps, th->tid);
				/* With a stack to reuse, it is reused if it has
				 * not run (idle_reuse), else stopped. */
				if (!ts || !ts->owed || ts->awaiting_last)
					continue;
				if (p->tr.idle_stops >= p->tr.idle_room) {
					left++;
					continue;
				}
				choose_thread(p, ps, th, ts);
			}
		}
		flush_batch(p);
		/* Signals to the targets meanwhile are handed on. */
		profiler_poll_targets(p);
		if (!left)
			break;
		/* The queue is full: the unwinder makes room. */
		if (p->tr.idle_room)
			waited_since = 0;
		else if (!waited_since)
			waited_since = ptrace_clock_monotonic_ns();
		else if (ptrace_clock_monotonic_ns() - waited_since > DEFERRED_WAIT_MS * NS_PER_MS)
			break;
		if (!p->tr.idle_room)
			wait_for_unwinder(p);
	} while (!stop_signal);
	/* The ticks owed by threads whose stack is still being unwound
	 * come with it. */
	uint64_t since = ptrace_clock_monotonic_ns();
	while (!stop_signal && owed_awaiting(p) &&
	       ptrace_clock_monotonic_ns() - since < DEFERRED_WAIT_MS * NS_PER_MS) {
		wait_for_unwinder(p);
		profiler_take_lasts(p);
	}
	unwinder_flush_reuse(p);
	/* What was not taken is lost (said in the summary). */
	for (size_t k = 0; k < p->nprocs; k++)
		for (size_t i = 0; i < p->procs[k].tn; i++) {
			struct thread_state *ts = &p->procs[k].threads[i];
			if (ts->owed || ts->prev_owed) {
				p->stats.deferred_lost += ts->owed + ts->prev_owed;
				ts->owed = ts->prev_owed = 0;
			}
		}
	p->tr.final_pass = false;
}
