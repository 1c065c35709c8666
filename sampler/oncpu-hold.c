/* sampler/oncpu-hold.c - on-CPU: the tick taken on every CPU at once.
 *
 * The tracer wakes for a tick on one CPU and takes it from the thread that
 * runs there: that thread waits in the run queue, where the tick left it,
 * and its stop shows where it was (oncpu_verdict's "took").  On the other
 * CPUs the threads go on while the tracer looks at them, microseconds
 * each, and what they do then is not what they did at the tick.  Where
 * threads hand work to each other it is worse: a server whose client ran
 * on the tracer's CPU runs dry and is asleep when looked at (issue 33:
 * nginx under ab on one host kept 0.48-0.65 of its CPU time; a server on
 * a pipe whose client shares the tracer's CPU, tests/targets/syscalls -S,
 * 2 samples of 186 owed).
 *
 * So a holder thread waits for the same deadline on each CPU the targets
 * may run on, real-time just below the tracer, and keeps its CPU until
 * the tracer has looked at the tick's threads and sent their interrupts
 * (oncpu_hold_release), or ONCPU_HOLD_MAX_NS.  The thread it took the CPU
 * from waits as the one on the tracer's CPU does, and is told the same
 * way: the scheduler accounted its CPU time last when it accounted the
 * holder's first (se.exec_start, the same instant of that run queue's
 * clock).  A thread in the kernel is taken at its next point of
 * preemption (the end of its system call, or of the kernel's slice), as
 * perf's user stack would show it; one that blocks instead is asleep.
 *
 * A holder holds only a CPU where a thread of the targets ran in the last
 * ONCPU_HOLD_WANT_TICKS ticks (its CPU time moved; all CPUs at first): on
 * a host of many CPUs a hold costs the CPUs where the targets run.
 *
 * Holders need real-time priority (CAP_SYS_NICE); without it, or on a
 * host of one CPU, there are none, and the tick is what it was.  They only ever spin on their own
 * CPU, for a bounded time, and die with stackspy. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include "ptrace/procfs.h"
#include "ptrace/sample.h"
#include "sampler/profiler-internal.h"

struct holder {
	struct oncpu_holds *set;
	int cpu;
	pthread_t th;
	bool started;
	bool dead;                /* it could not take its CPU or priority */
	unsigned tick;            /* the tick it holds (or held) the CPU for */
	unsigned released;        /* the tick its CPU was let go for */
	unsigned want_until;      /* a target thread ran on its CPU lately:
				     it holds it until this tick */
	uint64_t exec_ns;         /* its se.exec_start when it took the CPU */
	unsigned held;            /* ticks it held its CPU at */
};

struct oncpu_holds {
	unsigned next_tick;       /* the tick armed, and its deadline */
	uint64_t deadline_ns;
	unsigned released;        /* the last tick whose looks are done */
	bool quit;
	uint64_t hold_ns;
	int prio;                 /* the holders' real-time priority */
	bool tracer_prio_set;     /* the tracer's moved above it */
	int ncpus;                /* holder index by CPU, -1: none */
	int *by_cpu;
	size_t n;
	struct holder *h;
};

static uint64_t
now_ns(void)
{
	return ptrace_clock_monotonic_ns();
}

static void
futex_wait(unsigned *addr, unsigned val, long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void *
holder_main(void *arg)
{
	struct holder *h = arg;
	struct oncpu_holds *s = h->set;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(h->cpu, &one);
	struct sched_param rt = { .sched_priority = s->prio };
	if (sched_setaffinity(0, sizeof(one), &one) < 0 ||
	    sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt) < 0) {
		__atomic_store_n(&h->dead, true, __ATOMIC_RELEASE);
		return NULL;
	}
	/* Its se.exec_start, read at each hold: the file stays open. */
	int fd = open("/proc/thread-self/sched", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		__atomic_store_n(&h->dead, true, __ATOMIC_RELEASE);
		return NULL;
	}
	unsigned done = 0;
	while (!__atomic_load_n(&s->quit, __ATOMIC_ACQUIRE)) {
		unsigned t = __atomic_load_n(&s->next_tick, __ATOMIC_ACQUIRE);
		uint64_t dl = __atomic_load_n(&s->deadline_ns, __ATOMIC_ACQUIRE);
		if (t == done || !dl) {
			futex_wait(&s->next_tick, t, 100);
			continue;
		}
		struct timespec at = { .tv_sec = (time_t)(dl / NS_PER_SEC),
				       .tv_nsec = (long)(dl % NS_PER_SEC) };
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0)
			continue;
		if (__atomic_load_n(&s->next_tick, __ATOMIC_ACQUIRE) != t)
			continue;  /* moved meanwhile */
		done = t;
		/* No target thread ran on its CPU lately: a host of many CPUs
		 * has holders only where the targets run. */
		if ((int)(__atomic_load_n(&h->want_until, __ATOMIC_RELAXED) - t) < 0)
			continue;
		/* On the tracer's CPU it runs once the tracer sleeps, the
		 * tick's looks done: nothing to hold then. */
		if (__atomic_load_n(&s->released, __ATOMIC_ACQUIRE) == t)
			continue;
		struct task_sched own;
		if (ptrace_read_task_sched_fd(fd, &own) < 0)
			continue;
		h->exec_ns = own.exec_start_ns;
		__atomic_store_n(&h->tick, t, __ATOMIC_RELEASE);
		h->held++;
		uint64_t until = now_ns() + s->hold_ns;
		while (__atomic_load_n(&s->released, __ATOMIC_ACQUIRE) != t &&
		       __atomic_load_n(&h->released, __ATOMIC_ACQUIRE) != t &&
		       !__atomic_load_n(&s->quit, __ATOMIC_RELAXED) && now_ns() < until)
			;
	}
	close(fd);
	return NULL;
}

/* The CPUs any target process may run on. */
static void
targets_cpus(const struct profiler *p, cpu_set_t *out)
{
	CPU_ZERO(out);
	for (size_t i = 0; i < p->nprocs; i++) {
		cpu_set_t one;
		if (sched_getaffinity(p->procs[i].pid, sizeof(one), &one) == 0)
			CPU_OR(out, out, &one);
	}
}

int
oncpu_hold_start(struct profiler *p)
{
	if (p->tr.holds || p->cfg.idle)
		return 0;
	cpu_set_t cpus;
	targets_cpus(p, &cpus);
	/* On one CPU the tracer takes it itself.  A target pinned to one CPU
	 * of several has it held (its threads wait there for each other). */
	int count = CPU_COUNT(&cpus);
	bool none = p->tr.ticks.period_ns < NS_PER_SEC / ONCPU_HOLD_MAX_HZ || count < 1 ||
		    count > ONCPU_HOLD_MAX_CPUS || sysconf(_SC_NPROCESSORS_ONLN) < 2;
	if (none)
		return 0;
	struct oncpu_holds *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ncpus = CPU_SETSIZE;
	s->by_cpu = malloc((size_t)s->ncpus * sizeof(*s->by_cpu));
	s->h = calloc((size_t)count, sizeof(*s->h));
	if (!s->by_cpu || !s->h) {
		free(s->by_cpu);
		free(s->h);
		free(s);
		return -ENOMEM;
	}
	/* Below the tracer: its priority when it waits for a tick, or the
	 * one it was given (chrt), if there is one below. */
	int prio = ONCPU_HOLD_PRIO;
	int policy = sched_getscheduler(0);
	struct sched_param cur;
	if ((policy == SCHED_FIFO || policy == SCHED_RR) && sched_getparam(0, &cur) == 0)
		prio = cur.sched_priority - 1;
	if (prio < 1 || sched_get_priority_max(SCHED_FIFO) <= prio) {
		free(s->by_cpu);
		free(s->h);
		free(s);
		return 0;
	}
	s->prio = prio;
	s->tracer_prio_set = policy != SCHED_FIFO && policy != SCHED_RR;
	uint64_t period = p->tr.ticks.period_ns;
	/* A hold costs the thread it took the CPU from that time (40 us
	 * from the deadline to the interrupt at 2 CPUs), and a holder's
	 * wake-up some more: at most a hundredth of each CPU, and no
	 * holders at all above ONCPU_HOLD_MAX_HZ.  bench/record-overhead.sh
	 * at 1 kHz: bench/fixed-work slowed down by 9.3 % with holds up to a
	 * twentieth of the period, 5.6 % with a hundredth, 1.8 % without
	 * holders.  A hold that ends before the look leaves the thread where
	 * the look finds it, as without one. */
	s->hold_ns = period / 100 < ONCPU_HOLD_MAX_NS ? period / 100 : ONCPU_HOLD_MAX_NS;
	for (int c = 0; c < s->ncpus; c++) {
		s->by_cpu[c] = -1;
		if (!CPU_ISSET(c, &cpus))
			continue;
		struct holder *h = &s->h[s->n];
		h->set = s;
		h->cpu = c;
		h->want_until = p->tr.tick_no + ONCPU_HOLD_WANT_TICKS;
		if (pthread_create(&h->th, NULL, holder_main, h) != 0)
			continue;
		h->started = true;
		s->by_cpu[c] = (int)s->n++;
	}
	p->tr.holds = s;
	/* The tracer wakes above its holders: on its own CPU it takes the
	 * tick first, and a holder never keeps it from its CPU. */
	if (s->tracer_prio_set)
		ptrace_realtime_priority(prio + 1);
	return 0;
}

void
oncpu_hold_arm(struct profiler *p, uint64_t deadline_ns, unsigned tick)
{
	struct oncpu_holds *s = p->tr.holds;
	if (!s)
		return;
	__atomic_store_n(&s->deadline_ns, deadline_ns, __ATOMIC_RELEASE);
	if (__atomic_exchange_n(&s->next_tick, tick, __ATOMIC_ACQ_REL) != tick)
		syscall(SYS_futex, &s->next_tick, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void
oncpu_hold_release(struct profiler *p)
{
	struct oncpu_holds *s = p->tr.holds;
	if (s)
		__atomic_store_n(&s->released, p->tr.tick_no, __ATOMIC_RELEASE);
}

void
oncpu_hold_want(struct profiler *p, int cpu)
{
	struct oncpu_holds *s = p->tr.holds;
	if (s && cpu >= 0 && cpu < s->ncpus && s->by_cpu[cpu] >= 0)
		__atomic_store_n(&s->h[s->by_cpu[cpu]].want_until,
				 p->tr.tick_no + ONCPU_HOLD_WANT_TICKS, __ATOMIC_RELAXED);
}

void
oncpu_hold_release_cpu(struct profiler *p, int cpu)
{
	struct oncpu_holds *s = p->tr.holds;
	if (s && cpu >= 0 && cpu < s->ncpus && s->by_cpu[cpu] >= 0)
		__atomic_store_n(&s->h[s->by_cpu[cpu]].released, p->tr.tick_no, __ATOMIC_RELEASE);
}

/* Does holder h hold its CPU for the tick now (or did it: the tracer
 * will tell by the thread's se.exec_start)? */
static bool
holder_came(const struct holder *h, unsigned tick)
{
	return !__atomic_load_n(&h->dead, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&h->tick, __ATOMIC_ACQUIRE) == tick;
}

void
oncpu_hold_arrivals(struct profiler *p)
{
	struct oncpu_holds *s = p->tr.holds;
	if (!s)
		return;
	/* A holder not there yet waits for the thread it takes the CPU from
	 * to leave the kernel (its next point of preemption).  Waited for
	 * here, before any interrupt of the tick, once and for all of them:
	 * not in the looks, where it would lengthen the stops of the threads
	 * interrupted before. */
	unsigned t = p->tr.tick_no;
	uint64_t until = now_ns() + ONCPU_HOLD_ARRIVE_NS;
	for (size_t i = 0; i < s->n; i++) {
		const struct holder *h = &s->h[i];
		if (h->cpu == p->tr.tick_cpu || !h->started ||
		    (int)(__atomic_load_n(&h->want_until, __ATOMIC_RELAXED) - t) < 0)
			continue;
		while (!holder_came(h, t) && !__atomic_load_n(&h->dead, __ATOMIC_ACQUIRE) &&
		       now_ns() < until)
			;
	}
}

bool
oncpu_hold_held(struct profiler *p, int cpu, uint64_t *exec_ns)
{
	struct oncpu_holds *s = p->tr.holds;
	if (!s || cpu < 0 || cpu >= s->ncpus || s->by_cpu[cpu] < 0 ||
	    __atomic_load_n(&s->released, __ATOMIC_ACQUIRE) == p->tr.tick_no)
		return false;
	const struct holder *h = &s->h[s->by_cpu[cpu]];
	if (!holder_came(h, p->tr.tick_no))
		return false;
	*exec_ns = h->exec_ns;
	return true;
}

void
oncpu_hold_stop(struct profiler *p)
{
	struct oncpu_holds *s = p->tr.holds;
	if (!s)
		return;
	__atomic_store_n(&s->quit, true, __ATOMIC_RELEASE);
	__atomic_add_fetch(&s->next_tick, 1, __ATOMIC_ACQ_REL);
	syscall(SYS_futex, &s->next_tick, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
	for (size_t i = 0; i < s->n; i++) {
		if (!s->h[i].started)
			continue;
		pthread_join(s->h[i].th, NULL);
		p->stats.held_ticks += s->h[i].held;
	}
	if (s->tracer_prio_set)
		ptrace_realtime_priority(1);
	free(s->by_cpu);
	free(s->h);
	free(s);
	p->tr.holds = NULL;
}
