/* sampler/threads.c - the thread table of a process: one state per thread
 * (its root frame, --idle's last stack) in a dense array with a base_index
 * on the tid, swept of the threads that are gone; and a bounded cache of
 * the threads' /proc descriptors. */
#include "config.h"

#include <errno.h>
#include <sys/resource.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "sampler/signals.h"

static void
thread_fds_close(struct thread_state *ts)
{
	if (ts->stat_fd >= 0)
		close(ts->stat_fd);
	if (ts->schedstat_fd >= 0)
		close(ts->schedstat_fd);
	ts->stat_fd = ts->schedstat_fd = -1;
}

void
thread_state_release(struct thread_state *ts)
{
	thread_fds_close(ts);
	free(ts->last_ids);
}

static uint64_t
tid_hash(pid_t tid)
{
	return base_mix64((uint64_t)tid);
}

static bool
tid_equal(const void *owner, const void *key, uint32_t id)
{
	return ((const struct thread_state *)owner)[id].tid == *(const pid_t *)key;
}

struct thread_state *
thread_state_find(struct proc_state *ps, pid_t tid)
{
	uint32_t id = base_index_find(&ps->tindex, tid_hash(tid), tid_equal, ps->threads, &tid);
	return id != BASE_INDEX_NONE ? &ps->threads[id] : NULL;
}

int
thread_table_reserve(struct proc_state *ps, size_t n)
{
	if (ps->tn + n > UINT32_MAX - 1)
		return -ENOMEM;
	int r = BASE_GROW(ps->threads, ps->tcap, ps->tn + n, 64);
	return r < 0 ? r : base_index_reserve(&ps->tindex, ps->tn + n);
}

/* Removal moves the last state into the hole: the array stays dense, and
 * its order means nothing. */
void
thread_table_sweep(struct proc_state *ps, unsigned tick)
{
	for (size_t i = 0; i < ps->tn;) {
		struct thread_state *ts = &ps->threads[i];
		if (ts->seen_tick == tick) {
			i++;
			continue;
		}
		ps->cpu_seen_sum -= ts->cpu_seen;
		thread_state_release(ts);
		base_index_remove(&ps->tindex, tid_hash(ts->tid), (uint32_t)i);
		size_t last = --ps->tn;
		if (i == last)
			break;
		pid_t moved = ps->threads[last].tid;
		base_index_remove(&ps->tindex, tid_hash(moved), (uint32_t)last);
		*ts = ps->threads[last];
		/* cannot fail: the index holds fewer ids than before */
		base_index_insert(&ps->tindex, tid_hash(moved), (uint32_t)i);
	}
}

void
thread_table_free(struct proc_state *ps)
{
	for (size_t i = 0; i < ps->tn; i++)
		thread_state_release(&ps->threads[i]);
	free(ps->threads);
	ps->threads = NULL;
	ps->tcap = ps->tn = 0;
	base_index_free(&ps->tindex);
	free(ps->hot);
	ps->hot = NULL;
	free(ps->prio);
	ps->prio = NULL;
	ps->prio_cap = 0;
	ps->nhot = ps->hot_cap = 0;
	ps->cpu_seen_sum = 0;
	ps->cpu_base_ok = false;
}

struct thread_state *
thread_state_get(struct profiler *p, struct proc_state *ps, const struct tracee *th)
{
	struct thread_state *ts = thread_state_find(ps, th->tid);
	if (ts && !ts->dead)
		return ts;
	if (ts) {
		/* A new thread under a recycled tid: start afresh. */
		ps->cpu_seen_sum -= ts->cpu_seen;
		thread_state_release(ts);
	} else {
		if (thread_table_reserve(ps, 1) < 0)
			return NULL;
		ts = &ps->threads[ps->tn];
		base_index_insert(&ps->tindex, tid_hash(th->tid), (uint32_t)ps->tn);  /* reserved */
		ps->tn++;
	}
	memset(ts, 0, sizeof(*ts));
	ts->tid = th->tid;
	ts->stat_fd = ts->schedstat_fd = -1;
	char name[160];
	snprintf(ts->name, sizeof(ts->name), "%s", th->name);
	collapse_name_root(name, sizeof(name), th->name, ps->pid, th->tid);
	int id = profiler_intern(p, name);
	ts->root_id = id < 0 ? 0 : (uint32_t)id;
	p->stats.threads_seen++;
	return ts;
}

/* The thread's name as of now.  A new thread often names itself
 * (pthread_setname_np) just after we seized it under its creator's name;
 * --threads' root must follow (tests/record-threads.test), and the hook
 * (top's thread list) gets the name of the sample. */
static void
thread_rename(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
	      const char *comm, size_t len)
{
	if (len >= sizeof(ts->name))
		len = sizeof(ts->name) - 1;
	if (strncmp(ts->name, comm, len) == 0 && ts->name[len] == '\0')
		return;
	memcpy(ts->name, comm, len);
	ts->name[len] = '\0';
	if (!p->cfg.threads)
		return;
	char name[160];
	collapse_name_root(name, sizeof(name), ts->name, ps->pid, ts->tid);
	int id = profiler_intern(p, name);
	if (id >= 0)
		ts->root_id = (uint32_t)id;
}

/* One descriptor per thread ran out of RLIMIT_NOFILE at about a thousand
 * threads (and then every thread looked new every tick).  Only the
 * threads of the ring keep theirs; with more threads than that, the
 * oldest are closed and reopened when next needed (a few microseconds
 * each).  A quarter of what is left of the limit, minus room for the
 * unwinder's files; never less than a batch (whose threads must keep
 * theirs from choice to stop). */
static size_t
fd_cache_cap(void)
{
	struct rlimit rl;
	size_t cap = FD_CACHE_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		rlim_t spare = rl.rlim_cur > 256 ? (rl.rlim_cur - 256) / 4 : 0;
		if (spare < cap)
			cap = (size_t)spare;
	}
	return cap < SAMPLE_BATCH + 1 ? SAMPLE_BATCH + 1 : cap;
}

/* Make room in the ring by closing the descriptors of its oldest owner
 * (an entry whose thread is gone, or got a new state, costs nothing). */
static void
fd_ring_evict(struct profiler *p)
{
	struct fd_owner *o = &p->tr.fd_ring[p->tr.fd_head];
	p->tr.fd_head = (p->tr.fd_head + 1) % FD_CACHE_MAX;
	p->tr.fd_n--;
	if (o->proc >= p->nprocs)
		return;
	struct thread_state *ts = thread_state_find(&p->procs[o->proc], o->tid);
	if (ts)
		thread_fds_close(ts);
}

/* Open ts's stat and schedstat (both modes need schedstat: --idle for the
 * CPU time, on-CPU for the scheduled-in count of the rule, oncpu.c).
 * Returns 0 or a negative errno. */
/* Open ts's file name (stat or schedstat) into *fdp if it is not open.
 * A thread takes one place in the ring from its first open descriptor
 * until both are closed.  Returns 0 or a negative errno. */
static int
thread_fd_open(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
	       int *fdp, const char *name)
{
	if (*fdp >= 0)
		return 0;
	bool in_ring = ts->stat_fd >= 0 || ts->schedstat_fd >= 0;
	if (!in_ring) {
		if (!p->tr.fd_cap)
			p->tr.fd_cap = fd_cache_cap();
		while (p->tr.fd_n >= p->tr.fd_cap)
			fd_ring_evict(p);
	}
	int fd = profiler_task_file_open(ps->pid, ts->tid, name);
	if (fd < 0)
		return fd;
	*fdp = fd;
	if (!in_ring) {
		struct fd_owner *o = &p->tr.fd_ring[(p->tr.fd_head + p->tr.fd_n) % FD_CACHE_MAX];
		o->proc = p->procs && ps >= p->procs && ps < p->procs + p->nprocs ?
			  (uint32_t)(ps - p->procs) : UINT32_MAX;
		o->tid = ts->tid;
		p->tr.fd_n++;
	}
	return 0;
}

static int
thread_fds_open(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
		bool sched)
{
	int r = thread_fd_open(p, ps, ts, &ts->stat_fd, "stat");
	if (r == 0 && sched)
		r = thread_fd_open(p, ps, ts, &ts->schedstat_fd, "schedstat");
	return r;
}

char
thread_state_now(struct profiler *p, struct proc_state *ps, struct thread_state *ts)
{
	char buf[512];
	/* On-CPU, a sleeping thread needs no schedstat: with more threads
	 * than the cache, that halves the opens of a tick. */
	int r = thread_fds_open(p, ps, ts, p->cfg.idle);
	ssize_t n = r < 0 ? r : pread(ts->stat_fd, buf, sizeof(buf) - 1, 0);
	if (r == -ENOENT || r == -ESRCH || (r == 0 && n <= 0)) {
		ts->dead = true;
		return 0;
	}
	if (r < 0)
		goto unreadable;
	buf[n] = '\0';
	const char *comm;
	size_t len;
	char state = profiler_task_stat_parse(buf, &comm, &len, &ts->state_cpu);
	if (state == 'R' && !p->cfg.idle && (r = thread_fds_open(p, ps, ts, true)) < 0) {
		if (r == -ENOENT || r == -ESRCH)
			return 0;
		goto unreadable;
	}
	if (state && comm)
		thread_rename(p, ps, ts, comm, len);
	return state;
unreadable:
	/* Out of descriptors or memory: this thread is not sampled this
	 * tick, and the summary says so (exit status 1). */
	p->stats.errors[PROF_ERR_PROCFS]++;
	return 0;
}

int
thread_schedstat(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
		 struct task_schedstat *out)
{
	int r = thread_fd_open(p, ps, ts, &ts->schedstat_fd, "schedstat");
	if (r == 0)
		r = ptrace_read_schedstat(ts->schedstat_fd, out);
	else
		memset(out, 0, sizeof(*out));
	if (r < 0 || !out->slices)
		return r;
	/* Hot when it ran since it was last read (not at the first read:
	 * a pool of thousands found asleep would all be read again for
	 * HOT_TICKS ticks). */
	if (ts->slices_seen && (out->cpu_ns != ts->cpu_seen || out->slices != ts->slices_seen))
		ts->hot_tick = p->tr.tick_no;
	else if (!ts->slices_seen)
		ts->hot_tick = p->tr.tick_no - HOT_TICKS - 1;
	if (!ts->counted_set) {
		/* On-CPU: its counted samples stand for its CPU time from
		 * now (oncpu_weight). */
		ts->counted_cpu_ns = out->cpu_ns;
		ts->counted_set = true;
	}
	ps->cpu_seen_sum += out->cpu_ns - ts->cpu_seen;
	ts->cpu_seen = out->cpu_ns;
	ts->slices_seen = out->slices;
	return 0;
}

/* ---- Cold threads ----------------------------------------------------------
 *
 * Reading a thread's schedstat is one system call; with 5,000 threads of a
 * pool asleep, reading them all made a tick take 57 ms (bench/
 * record-threads.sh: 17 Hz of 99).  A tick reads only the threads that ran
 * in the last HOT_TICKS ticks (hot), and the kernel's clock of the
 * process's CPU time just before them: that clock less the sum of every
 * thread's CPU time as last read is the time of the threads not read
 * since (cold); while it is what it was at the last look at every thread
 * (to the nanosecond), none of them ran, and none is read.  Else every
 * thread is read that tick, and the base taken again.  A thread's time is
 * added up at each switch and at the scheduler's tick (HZ): a cold thread
 * woken less than a scheduler tick before our tick and still running is
 * seen at the next tick, not this one (tests/record-pool.test measures
 * what that costs a pool whose workers each wake once a minute).
 */

void
thread_mark_hot(const struct profiler *p, struct thread_state *ts)
{
	ts->hot_tick = p->tr.tick_no;
}

bool
thread_is_cold(const struct profiler *p, const struct thread_state *ts)
{
	return ts->slices_seen && p->tr.tick_no - ts->hot_tick > HOT_TICKS;
}

static bool
process_cpu_ns(struct proc_state *ps, uint64_t *ns)
{
	struct timespec t;
	if (ps->cpu_clock_ok == 0)
		ps->cpu_clock_ok = clock_getcpuclockid(ps->pid, &ps->cpu_clock) == 0 ? 1 : -1;
	if (ps->cpu_clock_ok < 0 || clock_gettime(ps->cpu_clock, &t) < 0)
		return false;
	*ns = timespec_to_ns(&t);
	return true;
}

/* Read the process's clock into *clock, then the schedstat of the threads
 * of ps->hot (into their census, with census).  The time of the threads
 * not read is then *clock less the sum of every thread's last read:
 * exactly, unless one of those read got CPU time meanwhile (the time is
 * added in steps: at a switch, at the scheduler's tick), which makes it
 * smaller.  One reading: the clock sums every thread of the process in
 * the kernel (a millisecond at 20,000 threads).  Returns false when the
 * clock cannot be read. */
static bool
read_hot(struct profiler *p, struct proc_state *ps, bool census, uint64_t *clock)
{
	if (!process_cpu_ns(ps, clock))
		return false;
	for (size_t i = 0; i < ps->nhot; i++) {
		struct thread_state *ts = thread_state_find(ps, ps->hot[i]);
		struct task_schedstat ss;
		if (!ts || ts->dead || thread_schedstat(p, ps, ts, census ? &ts->census : &ss) < 0)
			continue;
		if (census)
			ts->census_tick = p->tr.tick_no;
	}
	return true;
}

bool
thread_census(struct profiler *p, struct proc_state *ps)
{
	uint64_t lo, hi;
	ps->cpu_now_ok = read_hot(p, ps, true, &lo);
	ps->nhot = 0;
	/* The summary's CPU time of the targets: what each census's clock
	 * added since the last (profiler_print_summary). */
	if (ps->cpu_now_ok) {
		if (ps->cpu_last_ns && lo > ps->cpu_last_ns)
			p->stats.target_cpu_ns += lo - ps->cpu_last_ns;
		ps->cpu_last_ns = lo;
	}
	if (!ps->cpu_now_ok || !ps->cpu_base_ok)
		return false;
	/* The threads not read did not run if they have the time they had
	 * at the last look at every thread (cpu_base). */
	if (lo - ps->cpu_seen_sum == ps->cpu_base)
		return true;
	/* A hot thread got time between the clock and its reading (its
	 * time less theirs is then smaller): the clock again, after them.
	 * If their time then can be what it was, they are taken not to
	 * have run (one that ran less than the hot ones got meanwhile is
	 * seen at a later tick); else every thread is looked at. */
	if (!process_cpu_ns(ps, &hi))
		return false;
	return (int64_t)(lo - ps->cpu_seen_sum) <= (int64_t)ps->cpu_base &&
	       (int64_t)ps->cpu_base <= (int64_t)(hi - ps->cpu_seen_sum);
}

void
thread_census_keep(struct profiler *p, struct proc_state *ps, const struct thread_state *ts)
{
	if (!ts->slices_seen || thread_is_cold(p, ts))
		return;
	if (BASE_GROW(ps->hot, ps->hot_cap, ps->nhot + 1, 64) == 0)
		ps->hot[ps->nhot++] = ts->tid;
}

/* How many times the end of a look at every thread reads the hot ones
 * again for a base that no thread's CPU time moved under. */
#define CENSUS_SETTLE_TRIES 4

void
thread_census_end(struct profiler *p, struct proc_state *ps, bool looked_at_all)
{
	if (!looked_at_all) {
		ps->cpu_base_ok = ps->cpu_base_ok && ps->cpu_now_ok;
		return;
	}
	/* The threads were read over the whole tick, and the busy ones got
	 * CPU time meanwhile: the base is taken with the hot ones read again
	 * between two readings of the clock that agree. */
	ps->cpu_base_ok = false;
	for (int k = 0; k < CENSUS_SETTLE_TRIES; k++) {
		uint64_t lo, hi;
		if (!read_hot(p, ps, false, &lo) || !process_cpu_ns(ps, &hi))
			return;
		if (lo == hi) {
			ps->cpu_base = lo - ps->cpu_seen_sum;
			ps->cpu_base_ok = true;
			return;
		}
	}
}

/* The first tick of a pool of 5,000 threads read each one's schedstat (90
 * ms: nine ticks missed at 99 Hz), found the busy ones cold (a first
 * reading cannot tell), and the census of the second tick saw them run:
 * every thread read again (45 ms, five more).  Done before the ticks
 * start, as the attach is, with two readings of every thread: the ones
 * that ran between them are hot from the first tick on. */
void
thread_first_look(struct profiler *p, struct proc_state *ps)
{
	if (!ps->attached || !ps->pt || thread_table_reserve(ps, ps->pt->nthreads) < 0)
		return;
	for (int pass = 0; pass < 2; pass++) {
		ps->nhot = 0;
		for (size_t i = 0; i < ps->pt->nthreads && !stop_signal; i++) {
			const struct tracee *th = &ps->pt->threads[i];
			if (th->state == TRACEE_GONE)
				continue;
			struct thread_state *ts = thread_state_get(p, ps, th);
			struct task_schedstat ss;
			if (!ts || thread_schedstat(p, ps, ts, &ss) < 0)
				continue;
			ts->seen_tick = p->tr.tick_no;
			if (pass)
				thread_census_keep(p, ps, ts);
		}
	}
	thread_census_end(p, ps, !stop_signal);
}
