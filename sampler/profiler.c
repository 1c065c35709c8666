/* sampler/profiler.c - the sampling loop behind `record` and `top`.
 *
 * Each tick samples the threads of every target: stop, registers, one stack
 * copy, resume (ptrace_sample); the unwind, the names and the aggregation
 * happen after the thread runs again.  Ticks follow absolute deadlines
 * (one-shot TFD_TIMER_ABSTIME timers, base + k * period, with a small
 * random jitter so that we cannot run in lock step with a timer of the
 * target); a tick that overruns the next deadline counts it as missed.
 *
 * On-CPU (default): only threads that are running ('R' in
 * /proc/PID/task/TID/stat) are stopped.  --idle (wall clock): every thread,
 * but one whose CPU time (schedstat) has not moved since its last sample
 * is not stopped at all: its previous stack is counted again.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "sampler/sampler.h"

#define STACK_WINDOW      (64 * 1024)
#define STOP_TIMEOUT_MS   50
/* A sleeping thread that does not stop in time is in uninterruptible sleep
 * (D): leave it alone this long.  A runnable one that does not is only
 * waiting for a CPU, and is tried again next tick. */
#define UNSTOPPABLE_NS    1000000000u
/* Pause histogram: 1 us buckets up to 10 ms, then 100 us buckets up to
 * 1 s; the last bucket holds the rest. */
#define PAUSE_FINE_US     10000u
#define PAUSE_BUCKETS     (PAUSE_FINE_US + 9900u + 1u)
/* --idle: a sleeping thread whose CPU time moved less than this since its
 * last sample has not really run: our own stop costs it 15-30 us of CPU
 * (measured with schedstat around one sample). */
#define IDLE_CPU_SLACK_NS 100000u

/* Lookup address -> interned frame id, per process.  Names are the slow
 * part of a sample; most IPs repeat. */
struct addr_cache {
	uint64_t *keys;           /* 0 = empty (address 0 is never looked up) */
	uint32_t *ids;
	size_t cap, n;
};

struct thread_state {
	pid_t tid;                /* 0 = free slot */
	int stat_fd;
	int schedstat_fd;
	uint64_t last_cpu_ns;
	uint32_t *last_ids;       /* --idle: the stack reused while it sleeps */
	size_t last_n;
	uint32_t root_id;         /* "comm-PID/TID" */
	char name[64];            /* the comm in root_id */
	uint64_t skip_until_ns;   /* after a stop timeout */
	unsigned seen_tick;
	bool dead;                /* its stat file says it exited: the tid may
				     come back as a new thread */
};

struct proc_state {
	pid_t pid;
	char comm[64];
	struct ptrace_target *pt;       /* owned by ptrace/ until released */
	bool attached;
	bool exited;
	struct unwind_target *ut;
	unsigned ut_generation;
	struct addr_cache names;
	struct thread_state *threads;  /* open addressing on tid */
	size_t tcap, tn;
	uint32_t root_id;         /* "comm-PID" when several processes */
};

struct profiler {
	struct profiler_config cfg;
	struct proc_state *procs;
	size_t nprocs;
	struct collapse *stacks;
	int timer_fd;
	int epoll_fd;             /* timer_fd + ptrace_event_fd(): profiler_fd() */
	uint64_t period_ns;
	uint64_t start_ns;
	uint64_t next_index;      /* index k of the next deadline */
	unsigned tick_no;
	struct profiler_stats stats;
	uint32_t *pause_hist;
	uint64_t pause_sum_ns, pause_max_ns;
	struct stack_snapshot snap;
	struct unwind_frame *frames;
	uint32_t *ids;
	pid_t child;              /* launch mode */
	int child_status;
	uint64_t rng;
	profiler_hook hook;
	void *hook_arg;
	char **frame_modules;     /* frame id -> module basename (top's column) */
	size_t nframe_modules;
	bool stopped;
	size_t nattached;
	uint32_t *seq;            /* --inline: per-address id lists */
	size_t seq_n, seq_cap;
};

/* ---- address -> frame id cache ----------------------------------------- */

static uint64_t
hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static void
addr_cache_clear(struct addr_cache *c)
{
	free(c->keys);
	free(c->ids);
	memset(c, 0, sizeof(*c));
}

static bool
addr_cache_get(const struct addr_cache *c, uint64_t key, uint32_t *id)
{
	if (!c->cap)
		return false;
	for (size_t i = hash64(key) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		if (c->keys[i] == key) {
			*id = c->ids[i];
			return true;
		}
		if (c->keys[i] == 0)
			return false;
	}
}

static void
addr_cache_put(struct addr_cache *c, uint64_t key, uint32_t id)
{
	if (2 * (c->n + 1) > c->cap) {
		struct addr_cache g = { .cap = c->cap ? 2 * c->cap : 1024 };
		g.keys = calloc(g.cap, sizeof(*g.keys));
		g.ids = calloc(g.cap, sizeof(*g.ids));
		if (!g.keys || !g.ids) {
			free(g.keys);
			free(g.ids);
			return;  /* uncached is only slower */
		}
		for (size_t i = 0; i < c->cap; i++)
			if (c->keys[i])
				addr_cache_put(&g, c->keys[i], c->ids[i]);
		addr_cache_clear(c);
		*c = g;
	}
	size_t i = hash64(key) & (c->cap - 1);
	while (c->keys[i] && c->keys[i] != key)
		i = (i + 1) & (c->cap - 1);
	if (!c->keys[i])
		c->n++;
	c->keys[i] = key;
	c->ids[i] = id;
}

/* ---- per-thread state --------------------------------------------------- */

static void
thread_state_release(struct thread_state *ts)
{
	if (ts->stat_fd >= 0)
		close(ts->stat_fd);
	if (ts->schedstat_fd >= 0)
		close(ts->schedstat_fd);
	free(ts->last_ids);
}

static struct thread_state *
thread_slot(struct proc_state *ps, pid_t tid)
{
	for (size_t i = hash64((uint64_t)tid) & (ps->tcap - 1);; i = (i + 1) & (ps->tcap - 1))
		if (ps->threads[i].tid == tid || ps->threads[i].tid == 0)
			return &ps->threads[i];
}

/* Rebuild the table with ncap slots.  With keep_tick, the states of
 * threads not seen in that tick are released.  Entries are never deleted
 * in place: with open addressing that would cut probe chains.  On failure
 * nothing changes.  Returns 0 or -ENOMEM. */
static int
thread_table_rebuild(struct proc_state *ps, size_t ncap, const unsigned *keep_tick)
{
	struct thread_state *fresh = calloc(ncap, sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	struct thread_state *old = ps->threads;
	size_t ocap = ps->tcap;
	ps->threads = fresh;
	ps->tcap = ncap;
	ps->tn = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].tid)
			continue;
		if (keep_tick && old[i].seen_tick != *keep_tick) {
			thread_state_release(&old[i]);
			continue;
		}
		*thread_slot(ps, old[i].tid) = old[i];
		ps->tn++;
	}
	free(old);
	return 0;
}

static int
thread_table_grow(struct proc_state *ps)
{
	return thread_table_rebuild(ps, ps->tcap ? 2 * ps->tcap : 64, NULL);
}

/* Drop the states of threads not seen in this tick. */
static void
thread_table_sweep(struct proc_state *ps, unsigned tick)
{
	if (ps->tcap)
		thread_table_rebuild(ps, ps->tcap, &tick);
}

static int
open_task_file(pid_t pid, pid_t tid, const char *name)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static void
root_name(char *buf, size_t len, const char *comm, pid_t pid, pid_t tid)
{
	if (tid)
		snprintf(buf, len, "%s-%d/%d", comm, (int)pid, (int)tid);
	else
		snprintf(buf, len, "%s-%d", comm, (int)pid);
	/* perf's stackcollapse: spaces in thread names become underscores;
	 * so do control characters, which the folded writer would turn into
	 * spaces. */
	for (char *c = buf; *c; c++)
		if (*c == ' ' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '_';
}

static struct thread_state *
thread_state_get(struct profiler *p, struct proc_state *ps, const struct tracee *th)
{
	if (2 * (ps->tn + 1) > ps->tcap && thread_table_grow(ps) < 0)
		return NULL;
	struct thread_state *ts = thread_slot(ps, th->tid);
	if (ts->tid && !ts->dead)
		return ts;
	if (ts->tid) {
		/* A new thread under a recycled tid: start afresh. */
		thread_state_release(ts);
		ps->tn--;
	}
	memset(ts, 0, sizeof(*ts));
	ts->tid = th->tid;
	ts->stat_fd = open_task_file(ps->pid, th->tid, "stat");
	ts->schedstat_fd = p->cfg.idle ? open_task_file(ps->pid, th->tid, "schedstat") : -1;
	char name[160];
	snprintf(ts->name, sizeof(ts->name), "%s", th->name);
	root_name(name, sizeof(name), th->name, ps->pid, th->tid);
	int id = collapse_intern(p->stacks, name);
	ts->root_id = id < 0 ? 0 : (uint32_t)id;
	ps->tn++;
	p->stats.threads_seen++;
	return ts;
}

/* --threads: the thread's name as of now.  A new thread often names
 * itself (pthread_setname_np) just after we seized it under its creator's
 * name; the root must follow (tests/record-threads.test). */
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
	char name[160];
	root_name(name, sizeof(name), ts->name, ps->pid, ts->tid);
	int id = collapse_intern(p->stacks, name);
	if (id >= 0)
		ts->root_id = (uint32_t)id;
}

/* State letter of the thread now, from its open stat file; 0 if gone.
 * With --threads, the name in the same line renames the root. */
static char
thread_state_now(struct profiler *p, struct proc_state *ps, struct thread_state *ts)
{
	char buf[512];
	ssize_t n = ts->stat_fd < 0 ? -1 : pread(ts->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		ts->dead = true;
		return 0;
	}
	buf[n] = '\0';
	char *cp = strrchr(buf, ')');
	if (!cp || cp[1] != ' ')
		return 0;
	char *op = strchr(buf, '(');
	if (p->cfg.threads && op && op < cp)
		thread_rename(p, ps, ts, op + 1, (size_t)(cp - op - 1));
	return cp[2];
}

static uint64_t
thread_cpu_ns(struct thread_state *ts)
{
	char buf[128];
	if (ts->schedstat_fd < 0)
		return 0;
	ssize_t n = pread(ts->schedstat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

/* ---- names ----------------------------------------------------------------- */

/* The first module a frame name was seen in (names are interned without
 * it); only on a name's first sight, so the cost is per name, not per
 * sample.  Out of memory only leaves the column empty. */
static void
frame_module_note(struct profiler *p, uint32_t id, const char *module)
{
	if (id >= p->nframe_modules) {
		size_t n = p->nframe_modules ? p->nframe_modules : 256;
		while (n <= id)
			n *= 2;
		char **v = realloc(p->frame_modules, n * sizeof(*v));
		if (!v)
			return;
		memset(v + p->nframe_modules, 0, (n - p->nframe_modules) * sizeof(*v));
		p->frame_modules = v;
		p->nframe_modules = n;
	}
	if (!p->frame_modules[id]) {
		const char *base = strrchr(module, '/');
		p->frame_modules[id] = strdup(base ? base + 1 : module);
	}
}

/* The interned name of the physical frame at ip (no cache). */
static uint32_t
frame_name_id(struct profiler *p, struct proc_state *ps, uint64_t ip, bool caller)
{
	struct unwind_symbol sym;
	char buf[512];
	const char *name;
	unwind_symbolize(ps->ut, ip, caller, p->cfg.sym_flags, &sym);
	if (sym.function) {
		name = sym.function;
	} else if (sym.module) {
		const char *base = strrchr(sym.module, '/');
		snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : sym.module);
		name = buf;
	} else {
		name = "[unknown]";
	}
	int r = collapse_intern(p->stacks, name);
	uint32_t id = r < 0 ? 0 : (uint32_t)r;
	if (r >= 0 && sym.module)
		frame_module_note(p, id, sym.module);
	return id;
}

/* With --inline, one physical frame can be several: the function holding
 * the code, then the functions inlined into it at ip, outermost first
 * (root-first order, as stacks are stored), each named name_[i] as
 * flamegraph tools expect.  The lists live in p->seq (count, ids...) and the
 * address cache maps to their index. */
#define MAX_INLINE 8

static size_t
frame_ids_inline(struct profiler *p, struct proc_state *ps, uint64_t ip, bool caller,
		 uint32_t *out)
{
	uint64_t key = caller ? ip - 1 : ip;
	uint32_t at;
	if (key && addr_cache_get(&ps->names, key, &at)) {
		memcpy(out, &p->seq[at + 1], p->seq[at] * sizeof(*out));
		return p->seq[at];
	}
	struct unwind_source_frame sf[MAX_INLINE];
	int ns = unwind_source(ps->ut, ip, caller, p->cfg.sym_flags, sf, MAX_INLINE);
	size_t n = 0;
	out[n++] = frame_name_id(p, ps, ip, caller);
	for (int k = ns - 2; k >= 0; k--) {
		char name[512];
		if (!sf[k].inlined || !sf[k].function)
			continue;
		snprintf(name, sizeof(name), "%s_[i]", sf[k].function);
		int r = collapse_intern(p->stacks, name);
		if (r >= 0)
			out[n++] = (uint32_t)r;
	}
	if (key && p->seq_n + n + 1 <= UINT32_MAX) {
		if (p->seq_n + n + 1 > p->seq_cap) {
			size_t ncap = p->seq_cap ? 2 * p->seq_cap : 4096;
			uint32_t *nv = realloc(p->seq, ncap * sizeof(*nv));
			if (!nv)
				return n;
			p->seq = nv;
			p->seq_cap = ncap;
		}
		p->seq[p->seq_n] = (uint32_t)n;
		memcpy(&p->seq[p->seq_n + 1], out, n * sizeof(*out));
		addr_cache_put(&ps->names, key, (uint32_t)p->seq_n);
		p->seq_n += n + 1;
	}
	return n;
}

/* The frame ids of the physical frame at ip, root first: one, or with
 * --inline up to MAX_INLINE.  Names are cached per lookup address. */
static size_t
frame_ids(struct profiler *p, struct proc_state *ps, uint64_t ip, bool caller, uint32_t *out)
{
	if (p->cfg.inline_frames)
		return frame_ids_inline(p, ps, ip, caller, out);
	uint64_t key = caller ? ip - 1 : ip;
	if (key && addr_cache_get(&ps->names, key, out))
		return 1;
	out[0] = frame_name_id(p, ps, ip, caller);
	if (key)
		addr_cache_put(&ps->names, key, out[0]);
	return 1;
}

/* ---- one thread, one process, one tick ------------------------------------- */

static void
add_stack(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
	  const uint32_t *ids, size_t n)
{
	if (collapse_add(p->stacks, ids, n, 1) < 0)
		return;
	p->stats.samples++;
	if (p->hook)
		p->hook(p->hook_arg, ps->pid, ts->tid, ids, n);
}

static void
record_pause(struct profiler *p, uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint64_t b = us < PAUSE_FINE_US ? us : PAUSE_FINE_US + (us - PAUSE_FINE_US) / 100;
	p->pause_hist[b < PAUSE_BUCKETS ? b : PAUSE_BUCKETS - 1]++;
	p->pause_sum_ns += ns;
	if (ns > p->pause_max_ns)
		p->pause_max_ns = ns;
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

	int r = ptrace_sample(ps->pt, th, STACK_WINDOW, unwind_target_stack_end, ps->ut,
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
	record_pause(p, p->snap.pause_ns);

	/* The thread runs again: the rest is ours. */
	enum unwind_stop stop;
	int nf = unwind_walk(ps->ut, p->cfg.engine, &p->snap, p->frames, p->cfg.max_depth, &stop);
	if (nf <= 0) {
		p->stats.errors[PROF_ERR_NOSTACK]++;
		return;
	}
	if (unwind_target_generation(ps->ut) != ps->ut_generation) {
		addr_cache_clear(&ps->names);
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
	addr_cache_clear(&ps->names);
	ptrace_read_comm(ps->pid, ps->comm, sizeof(ps->comm));
}

static void
sample_process(struct profiler *p, struct proc_state *ps, uint64_t now)
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

/* ---- ticks ----------------------------------------------------------------- */

static uint64_t
rng_next(struct profiler *p)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return p->rng;
}

/* Arm the timer for deadline k: base + k * period, plus a jitter of up to
 * +-1/8 period that does not accumulate. */
static void
arm(struct profiler *p)
{
	uint64_t jitter_span = p->period_ns / 4;
	int64_t jitter = jitter_span ? (int64_t)(rng_next(p) % jitter_span) - (int64_t)(jitter_span / 2) : 0;
	uint64_t at = p->start_ns + p->next_index * p->period_ns + (uint64_t)((int64_t)0 + jitter);
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(at / 1000000000u);
	its.it_value.tv_nsec = (long)(at % 1000000000u);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	timerfd_settime(p->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

int
profiler_fd(const struct profiler *p)
{
	return p->epoll_fd;
}

/* Stops between ticks: a signal to a thread (it waits in its
 * signal-delivery-stop until we hand the signal on), or the late stop of a
 * sample that timed out.  Handled as they come, not at the next tick. */
static bool
handle_tracee_events(struct profiler *p)
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

void
profiler_poll_events(struct profiler *p)
{
	handle_tracee_events(p);
}

int
profiler_tick(struct profiler *p)
{
	uint64_t expirations;
	if (read(p->timer_fd, &expirations, sizeof(expirations)) < 0 && errno == EAGAIN) {
		/* Woken by a tracee event, or spuriously. */
		if (!handle_tracee_events(p)) {
			/* Nobody left to collect the SIGCHLD that woke us. */
			struct pollfd pfd = { .fd = ptrace_event_fd(), .events = POLLIN };
			char buf[128];
			while (pfd.fd >= 0 && poll(&pfd, 1, 0) > 0 && read(pfd.fd, buf, sizeof(buf)) > 0)
				;
		}
		return 1;
	}
	uint64_t now = monotonic_ns();
	p->stats.ticks++;
	p->tick_no++;
	bool alive = false;
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		if (!ps->attached || ps->exited)
			continue;
		sample_process(p, ps, now);
		alive |= !ps->exited;
	}
	/* Stops that came in during the tick (a signal to a thread sampled
	 * earlier in it) are handed on now, not a period later. */
	handle_tracee_events(p);
	/* Next deadline: the first one still ahead; the ones we ran past
	 * are missed ticks, counted, not silently dropped. */
	uint64_t done = monotonic_ns();
	p->next_index++;
	while (p->start_ns + p->next_index * p->period_ns < done) {
		p->next_index++;
		p->stats.missed_ticks++;
	}
	arm(p);
	return alive ? 1 : 0;
}

void
profiler_run(struct profiler *p, double seconds)
{
	uint64_t end = seconds > 0 ? p->start_ns + (uint64_t)(seconds * 1e9) : 0;
	while (!stop_signal) {
		uint64_t now = monotonic_ns();
		if (end && now >= end)
			break;
		struct pollfd pfd = { .fd = p->epoll_fd, .events = POLLIN };
		int timeout = -1;
		if (end) {
			uint64_t left_ms = (end - now) / 1000000u + 1;
			timeout = left_ms > 1000 ? 1000 : (int)left_ms;
		}
		int r = poll(&pfd, 1, timeout);
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0 && profiler_tick(p) == 0)
			break;
	}
}

/* ---- start, stop ------------------------------------------------------------- */

static int
attach_one(struct profiler *p, struct proc_state *ps, pid_t pid)
{
	char why[256];
	ps->pid = pid;
	int r = ptrace_target_check(pid, why, sizeof(why));
	if (r == -EINVAL) {
		error_msg("cannot attach to process %d: %s", (int)pid, why);
		return r;
	}
	if (r == 0) {
		ps->pt = ptrace_target_attach(pid, PTRACE_O_TRACEEXEC, &r);
		if (ps->pt)
			r = 0;
	}
	if (r < 0) {
		perror_msg(r, "cannot attach to process %d", (int)pid);
		if (r == -EPERM)
			hint_msg("%s", ptrace_explain_eperm(pid, why, sizeof(why)));
		return r;
	}
	ps->attached = true;
	ps->ut = unwind_target_open(pid, &r);
	if (!ps->ut) {
		perror_msg(r, "cannot read the memory map of process %d", (int)pid);
		ptrace_target_release(ps->pt);
		ps->pt = NULL;
		ps->attached = false;
		return r;
	}
	ps->ut_generation = unwind_target_generation(ps->ut);
	ptrace_read_comm(pid, ps->comm, sizeof(ps->comm));
	char name[160];
	root_name(name, sizeof(name), ps->comm, pid, 0);
	int id = collapse_intern(p->stacks, name);
	ps->root_id = id < 0 ? 0 : (uint32_t)id;
	return 0;
}

/* Launch mode: ptrace_launch() runs the command traced and stopped at its
 * exec, before its first instruction. */
static int
launch(struct profiler *p, struct proc_state *ps)
{
	int r;
	bool exec_failed;
	ps->pt = ptrace_launch(p->cfg.argv, PTRACE_O_TRACEEXEC, &r, &exec_failed);
	if (!ps->pt) {
		if (exec_failed)
			perror_msg(r, "cannot run '%s'", p->cfg.argv[0]);
		else
			perror_msg(r, "cannot trace the command");
		return r;
	}
	pid_t child = ps->pt->pid;
	p->child = child;
	ps->pid = child;
	ps->attached = true;
	if (ps->pt->leader_exited)
		ps->exited = true;
	ps->ut = unwind_target_open(child, &r);
	if (!ps->ut) {
		if (r != -ESRCH) {
			perror_msg(r, "cannot read the memory map of the command");
			/* We started it; we do not leave it running untraced
			 * and unreaped. */
			kill(child, SIGKILL);
			return r;
		}
		/* It ran and exited before we could look: an empty profile. */
		ps->exited = true;
		ptrace_target_poll(ps->pt);
		int st;
		if (ptrace_child_status(ps->pt, &st))
			p->child_status = st;
	}
	if (ps->ut)
		ps->ut_generation = unwind_target_generation(ps->ut);
	snprintf(ps->comm, sizeof(ps->comm), "%s", strrchr(p->cfg.argv[0], '/') ?
		 strrchr(p->cfg.argv[0], '/') + 1 : p->cfg.argv[0]);
	return 0;
}

int
profiler_start(const struct profiler_config *cfg, struct profiler **out)
{
	struct profiler *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	p->child = -1;
	p->child_status = -1;
	p->timer_fd = -1;
	p->epoll_fd = -1;
	p->nprocs = cfg->argv ? 1 : (size_t)cfg->npids;
	p->procs = calloc(p->nprocs, sizeof(*p->procs));
	p->stacks = collapse_new();
	p->pause_hist = calloc(PAUSE_BUCKETS, sizeof(*p->pause_hist));
	p->frames = calloc((size_t)cfg->max_depth, sizeof(*p->frames));
	p->ids = calloc((size_t)cfg->max_depth * MAX_INLINE + 2, sizeof(*p->ids));
	p->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!p->procs || !p->stacks || !p->pause_hist || !p->frames || !p->ids || p->timer_fd < 0) {
		int e = errno ? -errno : -ENOMEM;
		profiler_free(p);
		return e;
	}
	p->rng = (uint64_t)monotonic_ns() | 1;
	size_t ok = 0;
	int last = 0;
	if (cfg->argv) {
		last = launch(p, &p->procs[0]);
		ok = last == 0;
	} else {
		for (size_t i = 0; i < p->nprocs; i++) {
			int r = attach_one(p, &p->procs[i], cfg->pids[i]);
			if (r == 0)
				ok++;
			else
				last = r;
		}
	}
	p->nattached = ok;
	if (ok == 0) {
		profiler_free(p);
		return last ? last : -ESRCH;
	}
	p->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	if (p->epoll_fd < 0 || epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, p->timer_fd, &ev) < 0 ||
	    (ptrace_event_fd() >= 0 &&
	     epoll_ctl(p->epoll_fd, EPOLL_CTL_ADD, ptrace_event_fd(), &ev) < 0)) {
		int e = -errno;
		profiler_free(p);
		return e;
	}
	p->period_ns = (uint64_t)(1e9 / cfg->rate_hz);
	if (p->period_ns == 0)
		p->period_ns = 1;
	p->start_ns = monotonic_ns();
	p->next_index = 0;
	arm(p);
	*out = p;
	return 0;
}

void
profiler_stop(struct profiler *p)
{
	if (p->stopped)
		return;
	p->stopped = true;
	p->stats.elapsed_s = (double)(monotonic_ns() - p->start_ns) / 1e9;
	/* Every target at once: threads that cannot stop cost one timeout
	 * in all.  The profiler's targets are the only ones registered. */
	ptrace_detach_all();
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		int st;
		if (ps->pt && ps->pid == p->child && ptrace_child_status(ps->pt, &st))
			p->child_status = st;
		ps->attached = false;
	}
}

void
profiler_free(struct profiler *p)
{
	if (!p)
		return;
	profiler_stop(p);
	for (size_t i = 0; p->procs && i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		ptrace_target_release(ps->pt);
		unwind_target_free(ps->ut);
		addr_cache_clear(&ps->names);
		for (size_t j = 0; j < ps->tcap; j++)
			if (ps->threads[j].tid)
				thread_state_release(&ps->threads[j]);
		free(ps->threads);
	}
	free(p->procs);
	for (size_t i = 0; i < p->nframe_modules; i++)
		free(p->frame_modules[i]);
	free(p->frame_modules);
	collapse_free(p->stacks);
	free(p->pause_hist);
	free(p->frames);
	free(p->ids);
	free(p->seq);
	stack_snapshot_release(&p->snap);
	if (p->timer_fd >= 0)
		close(p->timer_fd);
	if (p->epoll_fd >= 0)
		close(p->epoll_fd);
	free(p);
}

struct collapse *
profiler_stacks(const struct profiler *p)
{
	return p->stacks;
}

const struct profiler_stats *
profiler_stats(struct profiler *p)
{
	struct profiler_stats *s = &p->stats;
	if (!p->stopped)
		s->elapsed_s = (double)(monotonic_ns() - p->start_ns) / 1e9;
	s->pause_mean_us = s->stopped ? (double)p->pause_sum_ns / 1000.0 / (double)s->stopped : 0;
	s->pause_max_us = (double)p->pause_max_ns / 1000.0;
	s->pause_p99_us = 0;
	uint64_t want = s->stopped - s->stopped / 100, seen = 0;
	for (size_t i = 0; s->stopped && i < PAUSE_BUCKETS; i++) {
		seen += p->pause_hist[i];
		if (seen >= want) {
			/* The bucket's upper edge, but never above the maximum
			 * (nor below it in the open-ended last bucket). */
			double edge = i < PAUSE_FINE_US ? (double)(i + 1)
				: (double)PAUSE_FINE_US + 100.0 * (double)(i - PAUSE_FINE_US + 1);
			s->pause_p99_us = i == PAUSE_BUCKETS - 1 ? s->pause_max_us
				: fmin(edge, s->pause_max_us);
			break;
		}
	}
	return s;
}

size_t
profiler_attached_count(const struct profiler *p)
{
	return p->nattached;
}

int
profiler_command_status(const struct profiler *p)
{
	return p->child_status;
}

pid_t
profiler_pid(const struct profiler *p)
{
	return p->nprocs ? p->procs[0].pid : 0;
}

const char *
profiler_comm(const struct profiler *p)
{
	return p->nprocs ? p->procs[0].comm : "";
}

const char *
profiler_frame_module(const struct profiler *p, uint32_t id)
{
	return id < p->nframe_modules ? p->frame_modules[id] : NULL;
}

void
profiler_set_hook(struct profiler *p, profiler_hook fn, void *arg)
{
	p->hook = fn;
	p->hook_arg = arg;
}

void
profiler_print_summary(struct profiler *p, const struct profiler_config *cfg)
{
	const struct profiler_stats *s = profiler_stats(p);
	double rate = s->elapsed_s > 0 ? (double)s->ticks / s->elapsed_s : 0;
	char errors[256] = "";
	static const char *const kinds[PROF_ERR_MAX] = {
		[PROF_ERR_TIMEOUT] = "did not stop in time",
		[PROF_ERR_PTRACE] = "ptrace failed",
		[PROF_ERR_NOSTACK] = "no frame unwound",
	};
	size_t len = 0;
	for (int i = 0; i < PROF_ERR_MAX; i++)
		if (s->errors[i] && len < sizeof(errors))
			len += (size_t)snprintf(errors + len, sizeof(errors) - len, "%s%" PRIu64 " %s",
						len ? ", " : "", s->errors[i], kinds[i]);
	error_msg("%" PRIu64 " samples in %.1f s: %" PRIu64 " ticks at %.1f Hz (asked %.1f Hz), "
		  "%" PRIu64 " missed; %zu threads seen",
		  s->samples, s->elapsed_s, s->ticks, rate, cfg->rate_hz, s->missed_ticks,
		  s->threads_seen);
	char reused[64] = "";
	if (cfg->idle)
		snprintf(reused, sizeof(reused), ", %" PRIu64 " reused without stopping", s->reused);
	error_msg("pause per thread-sample: mean %.1f us, p99 %.1f us, max %.1f us "
		  "(%" PRIu64 " stopped%s); errors: %s",
		  s->pause_mean_us, s->pause_p99_us, s->pause_max_us, s->stopped,
		  reused, errors[0] ? errors : "none");
}
