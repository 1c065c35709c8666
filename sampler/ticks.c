/* sampler/ticks.c - the tick timer and the loop.  Ticks follow absolute
 * deadlines (one-shot TFD_TIMER_ABSTIME timers, base + k * period, with a
 * random jitter of up to half a period either way, so that we cannot run
 * in lock step with a timer or a cycle of the target); a tick that overruns the next deadline counts it as
 * missed. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/clock.h"
#include "ptrace/launch.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "ptrace/watchdog.h"
#include "sampler/error.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "sampler/signals.h"

void
ticks_clock_init(struct tick_clock *c, double rate_hz, uint64_t now_ns)
{
	c->period_ns = (uint64_t)((double)NS_PER_SEC / rate_hz);
	if (c->period_ns == 0)
		c->period_ns = 1;
	c->start_ns = now_ns;
	c->next_index = 0;
	c->rng = now_ns | 1;
}

static uint64_t
rng_next(struct tick_clock *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

uint64_t
ticks_clock_deadline(struct tick_clock *c)
{
	/* Uniform over a whole period around the grid point: with +-1/8 of
	 * a period, a target whose own cycle our stops perturb locked in
	 * phase with the ticks (bench/oncpu-busy.sh: compute_heavy share
	 * 0.76-0.80 where perf and the truth say 0.75; 0.73-0.76 with the
	 * whole period). */
	uint64_t jitter_span = c->period_ns;
	int64_t jitter = jitter_span ? (int64_t)(rng_next(c) % jitter_span) - (int64_t)(jitter_span / 2) : 0;
	c->deadline_ns = c->start_ns + c->next_index * c->period_ns + (uint64_t)jitter;
	return c->deadline_ns;
}

uint64_t
ticks_clock_advance(struct tick_clock *c, uint64_t done_ns)
{
	uint64_t missed = 0;
	c->next_index++;
	while (c->start_ns + c->next_index * c->period_ns < done_ns) {
		c->next_index++;
		missed++;
	}
	return missed;
}

void
ticks_arm(struct profiler *p)
{
	uint64_t at = ticks_clock_deadline(&p->tr.ticks);
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	its.it_value = ns_to_timespec(at);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	timerfd_settime(p->tr.timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
	oncpu_hold_arm(p, at, p->tr.tick_no + 1);
}

int
profiler_fd(const struct profiler *p)
{
	return p->tr.epoll_fd;
}

/* Stops between ticks: a signal to a thread (it waits in its
 * signal-delivery-stop until we hand the signal on), or the late stop of a
 * sample that timed out.  Handled as they come, not at the next tick. */
static bool
handle_tracee_events(struct profiler *p)
{
	bool alive = profiler_poll_targets(p);
	if (p->cfg.subprocesses) {
		/* Children created meanwhile: sampled from the next tick. */
		size_t before = p->nprocs;
		profiler_proc_adopt_new(p);
		alive |= p->nprocs > before;
	}
	return alive;
}

void
profiler_poll_events(struct profiler *p)
{
	handle_tracee_events(p);
}

/* Without the unwinder's own thread (it could not be started): the
 * samples handed over are unwound now, at the normal priority (a long
 * unwind would hog a CPU). */
static void
unwind_between_ticks(struct profiler *p)
{
	if (!unwinder_pending(p))
		return;
	ptrace_hold_realtime(false);
	unwinder_drain(p);
}

/* Woken by a tracee event (or spuriously), not by the timer. */
static int
events_only(struct profiler *p)
{
	/* Late stops' samples wait for the unwinder's next wake-up too. */
	unwinder_hold(p, true);
	bool alive = handle_tracee_events(p);
	unwind_between_ticks(p);
	unwinder_hold(p, false);
	if (!alive) {
		/* Nobody left to collect the SIGCHLD that woke us. */
		struct pollfd pfd = { .fd = ptrace_event_fd(), .events = POLLIN };
		char buf[128];
		while (pfd.fd >= 0 && poll(&pfd, 1, 0) > 0 && read(pfd.fd, buf, sizeof(buf)) > 0)
			;
	}
	return 1;
}

/* The timer expired.  events: a tracee event may be waiting too (false
 * only when a poll just said there is none: its read would find the
 * signalfd empty, one system call per tick for nothing). */
static int
tick(struct profiler *p, bool events, bool arm)
{
	if (p->cfg.subprocesses)
		profiler_proc_adopt_new(p);
	if (p->cfg.idle)
		profiler_take_lasts(p);
	if (!p->tr.holds_tried) {
		/* On-CPU: every CPU taken at the tick (oncpu-hold.c), from the
		 * next one on. */
		p->tr.holds_tried = true;
		oncpu_hold_start(p);
	}
	uint64_t now = ptrace_clock_monotonic_ns();
	p->tr.tick_cpu = sched_getcpu();
	p->tr.tick_exec_read = false;
	p->tr.tick_exec_first = 0;
	p->stats.ticks++;
	p->tr.tick_no++;
	p->tr.stop_wait_ns = 0;
	/* Stops that came with the tick (a signal to a thread, an exec) are
	 * seen before the threads are chosen. */
	if (events)
		handle_tracee_events(p);
	oncpu_hold_arrivals(p);
	/* The samples handed over wake the unwinder once, at the end. */
	unwinder_hold(p, true);
	p->tr.nbatch = 0;
	p->tr.batch_early_ns = 0;
	p->tr.idle_stops = 0;
	p->tr.idle_room = p->cfg.idle ? unwinder_room(p) : 0;
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		if (!ps->attached || ps->exited)
			continue;
		profiler_sample_process(p, ps, now);
		ps->dbg.ticks++;
		ps->dbg.map_pending += ps->map_pending;
	}
	oncpu_hold_release(p);
	uint64_t looked_ns = ptrace_clock_monotonic_ns(), waited = p->tr.stop_wait_ns;
	bool alive = profiler_sample_finish(p);
	/* Stops that came in during the tick (a signal to a thread sampled
	 * earlier in it) are handed on now, not a period later. */
	handle_tracee_events(p);
	unwind_between_ticks(p);
	unwinder_hold(p, false);
	/* Next deadline: the first one still ahead; the ones we ran past
	 * are missed ticks, counted, not silently dropped. */
	uint64_t done = ptrace_clock_monotonic_ns();
	p->tr.tick_other_ns = done - now - p->tr.stop_wait_ns;
	/* What came after the threads were looked at, stops left out:
	 * --idle's budget for the next look (idle_over_budget). */
	p->tr.tick_tail_ns = done - looked_ns - (p->tr.stop_wait_ns - waited);
	p->stats.missed_ticks += ticks_clock_advance(&p->tr.ticks, done);
	if (arm)
		ticks_arm(p);
	else
		ticks_clock_deadline(&p->tr.ticks);
	return alive ? 1 : 0;
}

int
profiler_tick(struct profiler *p)
{
	uint64_t expirations;
	if (read(p->tr.timer_fd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN)
		return events_only(p);
	return tick(p, true, true);
}

/* How long a job-control stop waits for threads that a detach could not
 * stop (uninterruptible sleep) before it gives up on stopping. */
#define JOB_STOP_LINGER_MS 1000

void
profiler_job_stop(struct profiler *p)
{
	/* Nothing of the target may wait on a stopped tracer: let every
	 * thread go first, then stop; continued, attach again. */
	ptrace_hold_realtime(false);
	ptrace_detach_all();
	if (ptrace_release_lingering(JOB_STOP_LINGER_MS) > 0) {
		error_msg("not stopping: a thread of the target could not be let go "
			  "(uninterruptible sleep)");
		job_stop_signal = 0;
	} else {
		uint64_t t0 = ptrace_clock_monotonic_ns();
		sampler_signals_job_stop();
		/* The stopped time is no recording time: the grid moves on. */
		p->tr.ticks.start_ns += ptrace_clock_monotonic_ns() - t0;
	}
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		if (!ps->attached || ps->exited || !ps->pt)
			continue;
		int r = ptrace_target_reattach(ps->pt);
		if (r == 0)
			continue;
		if (r == -ESRCH && !ps->followed)
			error_msg("process %d ended while stackspy was stopped", (int)ps->pid);
		else
			perror_msg(r, "cannot attach again to process %d after SIGCONT", (int)ps->pid);
		ps->exited = true;
		int st;
		if (ptrace_child_status(ps->pt, &st))
			p->tr.child_status = st;
	}
	/* Children created while we were stopped were not followed. */
	if (p->cfg.subprocesses)
		profiler_proc_attach_descendants(p);
	p->stats.missed_ticks += ticks_clock_advance(&p->tr.ticks, ptrace_clock_monotonic_ns());
	ticks_arm(p);
}

/* STACKSPY_TEST_HANG=N (tests/record-watchdog.test only): after N
 * ticks the tracer hangs as a deadlock of ours would (asleep, handling
 * its signals, never coming back), so that the test sees the watchdog
 * (ptrace/watchdog.c) release the targets. */
static void
test_hang(unsigned long ticks)
{
	static long after = -2;
	if (after == -2) {
		const char *e = getenv("STACKSPY_TEST_HANG");
		after = e && *e ? strtol(e, NULL, 10) : -1;
	}
	if (after < 0 || ticks < (unsigned long)after)
		return;
	for (;;)
		pause();
}

/* The calling thread's context switches (voluntary, involuntary) so far. */
static void
thread_switches(uint64_t *v, uint64_t *iv)
{
	struct rusage ru;
	*v = *iv = 0;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		*v = (uint64_t)ru.ru_nvcsw;
		*iv = (uint64_t)ru.ru_nivcsw;
	}
}

void
profiler_run(struct profiler *p, double seconds)
{
	unsigned long passes = 0;
	uint64_t v0, iv0;
	thread_switches(&v0, &iv0);

	while (!stop_signal) {
		test_hang(passes++);
		if (job_stop_signal) {
			profiler_job_stop(p);
			bool any = false;
			for (size_t i = 0; i < p->nprocs; i++)
				any |= p->procs[i].attached && !p->procs[i].exited;
			if (!any)
				break;
			continue;
		}
		uint64_t end = seconds > 0 ?
			       p->tr.ticks.start_ns + (uint64_t)(seconds * (double)NS_PER_SEC) : 0;
		uint64_t now = ptrace_clock_monotonic_ns();
		if (end && now >= end)
			break;
		/* The tick's deadline is the timeout of the wait for tracee
		 * events (ppoll: nanoseconds, and no timer slack for a
		 * real-time task), not the timer of profiler_fd: arming it and
		 * reading it were two system calls a tick.  Which one ended
		 * the wait says whether the signalfd needs a read. */
		struct pollfd pfd = { .fd = ptrace_event_fd(), .events = POLLIN };
		uint64_t until = p->tr.ticks.deadline_ns;
		if (end && end < until)
			until = end;
		if (until - now > NS_PER_SEC && until > now)
			until = now + NS_PER_SEC;
		struct timespec ts = ns_to_timespec(until > now ? until - now : 0);
		/* Wait for the tick real-time, and keep it until the tick's
		 * threads are sampled (flush_batch lets go before unwinding):
		 * a tracer at normal priority gets its CPU late in a busy
		 * target's turn, and its samples lean toward what runs there
		 * (DESIGN.md, "On-CPU and wall-clock"). */
		ptrace_hold_realtime(true);
		oncpu_hold_arm(p, p->tr.ticks.deadline_ns, p->tr.tick_no + 1);
		ptrace_watchdog_alive(until);
		int r = ppoll(&pfd, 1, &ts, NULL);
		if (r < 0 && errno != EINTR)
			break;
		if (r < 0)
			continue;
		bool events = r > 0;
		if (ptrace_clock_monotonic_ns() >= p->tr.ticks.deadline_ns)
			r = tick(p, events, false);
		else if (events)
			r = events_only(p);
		else
			continue;
		if (r == 0)
			break;
	}
	ptrace_hold_realtime(false);
	uint64_t v1, iv1;
	thread_switches(&v1, &iv1);
	p->stats.tracer_vcsw += v1 - v0;
	p->stats.tracer_ivcsw += iv1 - iv0;
}
