/* sampler/unwinder.c - the second half of every sample of `record` and
 * `top`: the unwind, the names and the aggregation, done after the thread
 * runs again, by a thread of its own, so that the tracer thread only
 * traces (between ticks, on the tracer, only if that thread could not be
 * started).
 *
 * The tracer hands each sample over as a job through one queue (the only
 * path: a tick's stop, a late stop, a thread in D read without a stop, a
 * reused stack), in the order it took them.  Samples wait in a bounded
 * part of it: when the unwinder is that far behind (a huge symbol table
 * being read), the next ones are dropped and counted, never waited for:
 * nothing the tracer does waits on a file.  The jobs that say where to
 * unwind (a process's memory map, after an attach or an exec; its end)
 * are never dropped and keep their place between the samples.
 *
 * What is whose: the tracer owns the ptrace side of every process (its
 * proc_state, its threads, its own map for the stack ends of the copies);
 * the unwinder owns what names frames (a second unwind target per process,
 * the address-to-name caches, the scratch buffers in p->uw_own).
 * p->stacks is both's: interning a name and adding a stack (and the hook
 * that feeds top's model) take p->stacks_lock, as does reading them
 * (output, checkpoints, pushes, top's screen), and the frame tables
 * (p->frame_modules...) the unwinder fills. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "ptrace/watchdog.h"
#include "sampler/error.h"
#include "sampler/options.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

enum job_kind {
	JOB_SAMPLE,               /* a snapshot to unwind */
	JOB_REUSE,                /* --idle: the last stacks of a tick's
				     sleeping threads (reuse_* below) */
	JOB_PROC_OPEN,            /* unwind this process with ut from now on */
	JOB_PROC_END,             /* the process ended: free its side */
	JOB_CALL,                 /* fn(arg), after the samples before it */
};

struct job {
	enum job_kind kind;
	uint32_t proc;
	pid_t pid, tid;
	bool keep_last;           /* --idle: the stack goes back to the tracer, */
	uint32_t seq;             /* ... as the thread's sample seq */
	uint32_t weight;          /* JOB_SAMPLE: the ticks it stands for */
	uint8_t nroots, nk;
	uint32_t roots[2];        /* comm-PID, comm-PID/TID (what applies) */
	uint32_t kids[MAX_KERNEL_FRAMES];  /* --kernel, D: outermost first */
	uint64_t sampled_ns;
	struct unwind_target *ut; /* JOB_PROC_OPEN */
	uint32_t *ids;            /* JOB_REUSE: the entries (owned) */
	size_t nids;              /* ... their length in ids */
	size_t nreuse;            /* ... and how many stacks they are */
	char name[64];            /* the thread's, for the hook (top) */
	void (*fn)(struct profiler *, void *);  /* JOB_CALL */
	void *arg;
	struct stack_snapshot snap;
};

/* A stack unwound for the tracer's --idle reuse. */
struct unwinder {
	pthread_mutex_t lock;
	pthread_cond_t more;      /* a job, or closing */
	pthread_cond_t idle;      /* a job done */
	struct job *ring;
	size_t cap, head, n;
	size_t nsamples;          /* JOB_SAMPLE and JOB_REUSE in the ring */
	uint64_t pushed, done;
	bool closing;
	/* The hand-off wakes the unwinder's thread once a tick, and only
	 * when it sleeps (issue 36: a futex wake, a context switch and a
	 * lock round trip per sample made record at 1 kHz cost its target
	 * 1.22x what the bare ptrace floor does). */
	bool sleeping;            /* its thread waits for a job */
	bool hold;                /* a tick is on: no wake until its end */
	uint64_t queued_ns;       /* the first job since the last wake-up */
	uint64_t wakes;           /* wake-ups sent */
	struct last_stack *lasts; /* for the tracer (unwinder_take_lasts) */
	size_t nlasts, lasts_cap;
	/* The tracer's: this tick's reused stacks (unwinder_push_reuse),
	 * one job at its end (unwinder_flush_reuse). */
	uint32_t *reuse;
	size_t nreuse_ids, reuse_cap, nreuse;
	/* The unwinder's own. */
	struct job cur;
	struct unwind_proc *procs;
	size_t nprocs;
	pthread_t thread;
	bool running;             /* a thread of its own */
	bool stuck;               /* it did not finish in time: left running,
				     to run no further job (a checkpoint
				     would write over the output) */
};

static struct unwind_proc *
uproc(struct unwinder *u, uint32_t proc)
{
	/* Indexed by proc: the slots not yet used read as zeroed. */
	if (BASE_GROW_ZERO(u->procs, u->nprocs, (size_t)proc + 1, 16) < 0)
		return NULL;
	return &u->procs[proc];
}

static void
uproc_release(struct unwind_proc *up)
{
	unwind_target_free(up->ut);
	up->ut = NULL;
	base_map_free(&up->names);
}

/* ---- the unwinder's work ------------------------------------------------- */

static void
add_stack(struct profiler *p, const struct job *j, const uint32_t *ids, size_t n)
{
	/* The hook (top's model) is read under the same lock as the stacks
	 * (top draws under it). */
	uint32_t weight = j->weight ? j->weight : 1;
	pthread_mutex_lock(&p->stacks_lock);
	int r = collapse_add(p->stacks, ids, n, weight);
	for (uint32_t c = 0; r >= 0 && p->hook && n > j->nroots && c < weight; c++)
		p->hook(p->hook_arg, j->pid, j->tid, j->name, ids + j->nroots, n - j->nroots);
	pthread_mutex_unlock(&p->stacks_lock);
	pthread_mutex_lock(&p->counts_lock);
	p->uw_samples += r >= 0 ? weight : 0;
	pthread_mutex_unlock(&p->counts_lock);
}

static void
post_last(struct unwinder *u, const struct job *j, const uint32_t *ids, size_t n)
{
	uint32_t *copy = n ? malloc(n * sizeof(*copy)) : NULL;
	if (n && !copy)
		n = 0;
	if (n)
		memcpy(copy, ids, n * sizeof(*copy));
	pthread_mutex_lock(&u->lock);
	if (BASE_GROW(u->lasts, u->lasts_cap, u->nlasts + 1, 64) < 0) {
		pthread_mutex_unlock(&u->lock);
		free(copy);
		return;
	}
	u->lasts[u->nlasts++] = (struct last_stack){ j->proc, j->tid, j->seq, copy, n };
	pthread_mutex_unlock(&u->lock);
}

/* Unwind snap, taken at sampled_ns (CLOCK_MONOTONIC: the tick), into
 * p->uw_own.frames; walked again when a mapping it met is no longer the
 * file the map says (unwind_target_maps_current).  Returns the frames
 * found. */
static int
profiler_walk(struct profiler *p, struct unwind_proc *up, const struct stack_snapshot *snap,
	      uint64_t sampled_ns)
{
	enum unwind_stop stop;
	int depth = p->cfg.max_depth;
	int nf = unwind_walk(up->ut, p->cfg.engine, snap, p->uw_own.frames, depth, &stop);
	/* A library swapped at the same address (dlclose, dlopen): walked
	 * again on the map as it is (tests/record-dlswap.test). */
	if (nf > 0 && !unwind_target_maps_current(up->ut, p->uw_own.frames, nf, sampled_ns))
		nf = unwind_walk(up->ut, p->cfg.engine, snap, p->uw_own.frames, depth, &stop);
	return nf;
}

static void
run_sample(struct profiler *p, struct unwinder *u, struct job *j)
{
	struct unwind_proc *up = uproc(u, j->proc);
	int nf = up && up->ut ? profiler_walk(p, up, &j->snap, j->sampled_ns) : 0;
	if (nf <= 0) {
		pthread_mutex_lock(&p->counts_lock);
		p->uw_nostack++;
		pthread_mutex_unlock(&p->counts_lock);
		if (j->keep_last)
			post_last(u, j, NULL, 0);
		return;
	}
	if (unwind_target_generation(up->ut) != up->ut_generation) {
		base_map_reset(&up->names);
		up->ut_generation = unwind_target_generation(up->ut);
	}
	size_t n = 0;
	for (size_t k = 0; k < j->nroots; k++)
		p->uw_own.ids[n++] = j->roots[k];
	for (int k = nf - 1; k >= 0; k--)
		n += profiler_frame_ids_of(p, up, p->uw_own.frames, k, &p->uw_own.ids[n]);
	for (size_t k = 0; k < j->nk && n < p->uw_own.nids; k++)
		p->uw_own.ids[n++] = j->kids[k];
	add_stack(p, j, p->uw_own.ids, n);
	if (j->keep_last)
		post_last(u, j, p->uw_own.ids, n);
}

/* A reused stack's entry in a JOB_REUSE: pid, tid, nroots, n, count, the
 * thread's name (REUSE_NAME_IDS ids, with a hook only), then the n ids. */
#define REUSE_HEAD 5
#define REUSE_NAME_IDS (sizeof(((struct job *)0)->name) / sizeof(uint32_t))

/* Every stack of a tick's reuse job, under one taking of each lock. */
static void
run_reuse(struct profiler *p, const struct job *j)
{
	uint64_t added = 0;
	pthread_mutex_lock(&p->stacks_lock);
	for (size_t k = 0; k + REUSE_HEAD <= j->nids;) {
		const uint32_t *e = &j->ids[k];
		size_t nroots = e[2], n = e[3];
		uint32_t count = e[4];
		const char *name = "";
		k += REUSE_HEAD;
		if (p->hook) {
			name = (const char *)&j->ids[k];
			k += REUSE_NAME_IDS;
		}
		const uint32_t *ids = &j->ids[k];
		k += n;
		if (collapse_add(p->stacks, ids, n, count) < 0)
			continue;
		added += count;
		for (uint32_t c = 0; p->hook && n > nroots && c < count; c++)
			p->hook(p->hook_arg, (pid_t)e[0], (pid_t)e[1], name, ids + nroots,
				n - nroots);
	}
	pthread_mutex_unlock(&p->stacks_lock);
	pthread_mutex_lock(&p->counts_lock);
	p->uw_samples += added;
	pthread_mutex_unlock(&p->counts_lock);
}

/* STACKSPY_TEST_SLOW_UNWIND=MS (tests/record-slow-unwind.test only): the
 * first sample's unwind takes MS longer, as one that reads a large debug
 * file would, so that the test sees the tracer go on meanwhile (and, past
 * unwinder_finish_ms(), the output written without what was not unwound).
 * The time is spent as such a read spends it, in a loop that offers
 * unwind_set_yield's hook (unwind_busy_for), thousands of times: a
 * sleep never ran the hook on this thread, and a real file read it too
 * few times to meet a stop of the target on a fast host (mutation
 * yield-thread). */
static void
test_slow(void)
{
	static long ms = -2;
	if (ms == -2) {
		const char *e = getenv("STACKSPY_TEST_SLOW_UNWIND");
		ms = e && *e ? strtol(e, NULL, 10) : -1;
	}
	if (ms <= 0)
		return;
	uint64_t ns = (uint64_t)ms * NS_PER_MS;
	ms = -1;
	unwind_busy_for(ns);
}

/* STACKSPY_TEST_FINISH_MS=N (tests/record-slow-unwind.test only): the end
 * of a recording waits for a stuck unwinder N ms (1 to UNWIND_FINISH_MS)
 * instead of UNWIND_FINISH_MS, so that the test of that bound does not sit
 * out its 5 s; unset or out of range: UNWIND_FINISH_MS. */
unsigned
unwinder_finish_ms(void)
{
	static long ms = -2;
	if (ms == -2) {
		const char *e = getenv("STACKSPY_TEST_FINISH_MS");
		long v = e && *e ? strtol(e, NULL, 10) : 0;
		ms = v >= 1 && v <= (long)UNWIND_FINISH_MS ? v : (long)UNWIND_FINISH_MS;
	}
	return (unsigned)ms;
}

static void
run_job(struct profiler *p, struct unwinder *u, struct job *j)
{
	struct unwind_proc *up;
	switch (j->kind) {
	case JOB_SAMPLE:
		test_slow();
		run_sample(p, u, j);
		break;
	case JOB_REUSE:
		run_reuse(p, j);
		free(j->ids);
		j->ids = NULL;
		break;
	case JOB_PROC_OPEN:
		up = uproc(u, j->proc);
		if (!up) {
			unwind_target_free(j->ut);
		} else {
			unwind_target_free(up->ut);
			up->ut = j->ut;
			up->pid = j->pid;
			up->ut_generation = unwind_target_generation(j->ut);
			base_map_reset(&up->names);
		}
		j->ut = NULL;
		break;
	case JOB_PROC_END:
		if (j->proc < u->nprocs)
			uproc_release(&u->procs[j->proc]);
		break;
	case JOB_CALL:
		j->fn(p, j->arg);
		break;
	}
}

/* ---- the queue ------------------------------------------------------------ */

/* With a rescue (profiler_set_rescue), how often the idle unwinder looks
 * whether the watchdog asks for it. */
#define RESCUE_LOOK_NS (50 * NS_PER_MS)

/* Samples wait in the bounded part of the queue; the other jobs are never
 * dropped. */
static bool
job_is_sample(const struct job *j)
{
	return j->kind == JOB_SAMPLE || j->kind == JOB_REUSE;
}

/* Takes the oldest job into u->cur (its snapshot buffer swapped with
 * cur's, so the ring may grow while it runs).  Under u->lock. */
static void
take(struct unwinder *u)
{
	struct job *slot = &u->ring[u->head];
	struct stack_snapshot mine = u->cur.snap;
	u->cur = *slot;
	slot->snap = mine;
	slot->ids = NULL;
	slot->ut = NULL;
	u->head = (u->head + 1) % u->cap;
	u->n--;
	if (job_is_sample(&u->cur))
		u->nsamples--;
}

/* Run the queued jobs in order; with wait, also those still to come,
 * until the queue is closed (the unwinder's thread), else until it is
 * empty (between ticks). */
/* Wait on c (under u->lock) at most ns. */
static void
wait_at_most(struct unwinder *u, pthread_cond_t *c, uint64_t ns)
{
	struct timespec dl = ptrace_clock_realtime_deadline(ns);
	pthread_cond_timedwait(c, &u->lock, &dl);
}

/* Wait for a job, or the end; with a rescue to look out for, at most
 * RESCUE_LOOK_NS (a stuck tracer sends no job).  Under u->lock. */
static void
wait_for_job(struct unwinder *u, bool rescue)
{
	u->sleeping = true;
	u->queued_ns = 0;  /* the queue is empty: its next job starts the wait */
	if (rescue)
		wait_at_most(u, &u->more, RESCUE_LOOK_NS);
	else
		pthread_cond_wait(&u->more, &u->lock);
	u->sleeping = false;
}

/* Wake the unwinder's thread if it sleeps and has work.  Under u->lock. */
static void
kick(struct unwinder *u)
{
	if (u->sleeping && u->n) {
		u->sleeping = false;  /* one wake-up is enough */
		u->queued_ns = 0;
		u->wakes++;
		pthread_cond_signal(&u->more);
	}
}

/* At the end of a tick: wake it for UNWIND_WAKE_SAMPLES samples, or for
 * jobs that have waited UNWIND_WAKE_NS (at 1 kHz of one thread, a wake-up
 * a tick was a context switch a sample on the target's CPUs).  Under
 * u->lock. */
static void
kick_tick(struct unwinder *u)
{
	if (u->nsamples >= UNWIND_WAKE_SAMPLES ||
	    (u->queued_ns && ptrace_clock_monotonic_ns() - u->queued_ns >= UNWIND_WAKE_NS) ||
	    u->n > u->nsamples)
		kick(u);
}

static void
run_queue(struct profiler *p, bool wait)
{
	struct unwinder *u = p->uw;
	/* The unwinder's thread looks out for the watchdog's request, once. */
	bool rescue = wait && p->rescue_fn;
	pthread_mutex_lock(&u->lock);
	for (;;) {
		while (wait && u->n == 0 && !u->closing &&
		       !(rescue && ptrace_watchdog_rescue_wanted()))
			wait_for_job(u, rescue);
		if (rescue && ptrace_watchdog_rescue_wanted()) {
			/* The tracer is stuck and about to be killed: what
			 * is unwound so far goes out first. */
			rescue = false;
			pthread_mutex_unlock(&u->lock);
			p->rescue_fn(p, p->rescue_arg);
			ptrace_watchdog_rescued();
			pthread_mutex_lock(&u->lock);
			continue;
		}
		if (u->n == 0 || u->stuck)
			break;
		take(u);
		pthread_mutex_unlock(&u->lock);
		run_job(p, u, &u->cur);
		pthread_mutex_lock(&u->lock);
		u->done++;
		pthread_cond_broadcast(&u->idle);
	}
	pthread_mutex_unlock(&u->lock);
}

static void *
unwinder_main(void *arg)
{
	/* On a host whose CPUs the target keeps busy, an unwinder of the
	 * normal priority got a third of the one emulated CPU of
	 * tests/vm-aarch64.test and fell 1,000 samples behind; real-time
	 * like the tracer, one long unwind (a large debug file) would hog a
	 * CPU.  A higher weight among the normal ones: it gets the CPU it
	 * asks for before the target's threads, and cannot keep them from
	 * it.  (Without CAP_SYS_NICE this quietly does nothing.) */
	setpriority(PRIO_PROCESS, (id_t)gettid(), UNWIND_NICE);
	run_queue(arg, true);
	return NULL;
}

int
unwinder_init(struct profiler *p)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->cap = UNWIND_QUEUE_SAMPLES + 64;
	u->ring = calloc(u->cap, sizeof(*u->ring));
	if (!u->ring) {
		free(u);
		return -ENOMEM;
	}
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->more, NULL);
	pthread_cond_init(&u->idle, NULL);
	p->uw = u;
	return 0;
}

int
profiler_unwind_in_background(struct profiler *p)
{
	struct unwinder *u = p->uw;
	if (!u || u->running)
		return 0;
	/* The tracer's long loops no longer poll from inside the unwinder:
	 * it is not the tracer (unwind_set_yield is bound to the thread that
	 * set it, as every ptrace call must come from the tracer). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int r = pthread_create(&u->thread, NULL, unwinder_main, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	u->running = true;
	return 0;
}

/* Room for one more job: false for a sample when the samples waiting
 * fill their part. Under u->lock. */
static bool
make_room(struct unwinder *u, bool sample)
{
	if (sample && u->nsamples >= UNWIND_QUEUE_SAMPLES)
		return false;
	if (u->n < u->cap)
		return true;
	size_t ncap = 2 * u->cap;
	struct job *nv = calloc(ncap, sizeof(*nv));
	if (!nv)
		return false;
	for (size_t k = 0; k < u->cap; k++)
		nv[k] = u->ring[(u->head + k) % u->cap];
	free(u->ring);
	u->ring = nv;
	u->head = 0;
	u->cap = ncap;
	return true;
}

/* Queue job j; its snapshot, if any, by swapping *snap with the slot's
 * free one.  Returns 0, or -ENOSPC when a sample was dropped (the
 * unwinder is behind), -ENOMEM. */
static int
push(struct profiler *p, const struct job *j, struct stack_snapshot *snap)
{
	struct unwinder *u = p->uw;
	bool sample = job_is_sample(j);
	pthread_mutex_lock(&u->lock);
	if (!make_room(u, sample) && !u->running && sample) {
		/* Unwound between ticks: the tick's own jobs make room. */
		pthread_mutex_unlock(&u->lock);
		run_queue(p, false);
		pthread_mutex_lock(&u->lock);
	}
	if (!make_room(u, sample)) {
		pthread_mutex_unlock(&u->lock);
		if (sample)
			p->stats.queue_dropped++;
		return sample ? -ENOSPC : -ENOMEM;
	}
	struct job *slot = &u->ring[(u->head + u->n) % u->cap];
	struct stack_snapshot free_one = slot->snap;
	*slot = *j;
	slot->snap = free_one;
	if (snap) {
		slot->snap = *snap;
		*snap = free_one;
	}
	u->n++;
	u->nsamples += sample;
	u->pushed++;
	if (!u->queued_ns)
		u->queued_ns = ptrace_clock_monotonic_ns();
	/* In a tick, at its end (unwinder_hold); before then only if the
	 * samples waiting fill half their room. */
	if (!u->hold || u->nsamples >= UNWIND_QUEUE_SAMPLES / 2)
		kick(u);
	pthread_mutex_unlock(&u->lock);
	return 0;
}

void
unwinder_hold(struct profiler *p, bool on)
{
	struct unwinder *u = p->uw;
	if (!u || !u->running)
		return;
	pthread_mutex_lock(&u->lock);
	u->hold = on;
	if (!on)
		kick_tick(u);
	pthread_mutex_unlock(&u->lock);
}

uint64_t
unwinder_wakes(struct profiler *p)
{
	struct unwinder *u = p->uw;
	if (!u)
		return 0;
	pthread_mutex_lock(&u->lock);
	uint64_t n = u->wakes;
	pthread_mutex_unlock(&u->lock);
	return n;
}

/* The roots of a stack of thread ts of ps (p->cfg decides which). */
static void
job_roots(const struct profiler *p, const struct proc_state *ps, const struct thread_state *ts,
	  struct job *j)
{
	j->nroots = 0;
	if (profiler_multi(p))
		j->roots[j->nroots++] = ps->root_id;
	if (p->cfg.threads)
		j->roots[j->nroots++] = ts->root_id;
	if (p->hook)
		memcpy(j->name, ts->name, sizeof(j->name));
}

/* A job of kind about process ps (NULL: none), the rest zero. */
static void
job_init(struct job *j, enum job_kind kind, const struct profiler *p,
	 const struct proc_state *ps)
{
	memset(j, 0, sizeof(*j));
	j->kind = kind;
	if (ps) {
		j->proc = (uint32_t)(ps - p->procs);
		j->pid = ps->pid;
	}
}

int
unwinder_push_sample(struct profiler *p, const struct sample_record *r)
{
	struct job j;
	job_init(&j, JOB_SAMPLE, p, r->ps);
	j.weight = r->weight;
	j.tid = r->ts->tid;
	j.sampled_ns = r->sampled_ns;
	j.keep_last = r->keep_last;
	j.seq = p->tr.keep_seq + 1;
	job_roots(p, r->ps, r->ts, &j);
	size_t nk = r->nk > MAX_KERNEL_FRAMES ? MAX_KERNEL_FRAMES : r->nk;
	if (nk)
		memcpy(j.kids, r->kids, nk * sizeof(*r->kids));
	j.nk = (uint8_t)nk;
	int err = push(p, &j, r->snap);
	if (err == 0 && r->keep_last)
		p->tr.keep_seq = j.seq;
	return err;
}

int
unwinder_push_reuse(struct profiler *p, const struct proc_state *ps, const struct thread_state *ts,
		    const uint32_t *ids, size_t n, uint32_t count)
{
	/* One job a tick, not one a thread: with 5,000 sleeping threads a
	 * job each (a kilobyte copied under the queue's lock) was most of
	 * an --idle tick, and the queue's bound dropped them. */
	struct unwinder *u = p->uw;
	struct job j;
	job_init(&j, JOB_REUSE, p, ps);
	job_roots(p, ps, ts, &j);
	size_t name_ids = p->hook ? REUSE_NAME_IDS : 0;
	size_t need = u->nreuse_ids + REUSE_HEAD + name_ids + n;
	if (BASE_GROW(u->reuse, u->reuse_cap, need, 4096) < 0)
		return -ENOMEM;
	uint32_t *e = &u->reuse[u->nreuse_ids];
	e[0] = (uint32_t)ps->pid;
	e[1] = (uint32_t)ts->tid;
	e[2] = j.nroots;
	e[3] = (uint32_t)n;
	e[4] = count;
	if (name_ids)
		memcpy(&e[REUSE_HEAD], j.name, sizeof(j.name));
	memcpy(&e[REUSE_HEAD + name_ids], ids, n * sizeof(*e));
	u->nreuse_ids = need;
	u->nreuse++;
	return 0;
}

size_t
unwinder_room(struct profiler *p)
{
	struct unwinder *u = p->uw;
	pthread_mutex_lock(&u->lock);
	size_t room = u->nsamples < UNWIND_QUEUE_SAMPLES ? UNWIND_QUEUE_SAMPLES - u->nsamples : 0;
	pthread_mutex_unlock(&u->lock);
	return room;
}

void
unwinder_flush_reuse(struct profiler *p)
{
	struct unwinder *u = p->uw;
	if (!u || !u->nreuse)
		return;
	struct job j;
	job_init(&j, JOB_REUSE, p, NULL);
	j.ids = u->reuse;
	j.nids = u->nreuse_ids;
	j.nreuse = u->nreuse;
	u->reuse = NULL;
	u->nreuse_ids = u->reuse_cap = u->nreuse = 0;
	if (push(p, &j, NULL) < 0) {
		/* push counted one of them */
		p->stats.queue_dropped += j.nreuse - 1;
		free(j.ids);
	}
}

void
unwinder_push_map(struct profiler *p, const struct proc_state *ps)
{
	int err;
	struct job j;
	job_init(&j, JOB_PROC_OPEN, p, ps);
	/* Its own: the tracer's (stack ends) stays the tracer's. */
	j.ut = unwind_target_open(ps->pid, &err);
	if (j.ut && push(p, &j, NULL) < 0)
		unwind_target_free(j.ut);
}

void
unwinder_push_end(struct profiler *p, const struct proc_state *ps)
{
	struct job j;
	job_init(&j, JOB_PROC_END, p, ps);
	push(p, &j, NULL);
}

void
profiler_set_rescue(struct profiler *p, void (*fn)(struct profiler *, void *), void *arg)
{
	p->rescue_arg = arg;
	p->rescue_fn = fn;
}

int
profiler_call_in_unwinder(struct profiler *p, void (*fn)(struct profiler *, void *), void *arg)
{
	struct job j;
	job_init(&j, JOB_CALL, p, NULL);
	j.fn = fn;
	j.arg = arg;
	return push(p, &j, NULL);
}

struct last_stack *
unwinder_take_lasts(struct profiler *p, size_t *n)
{
	struct unwinder *u = p->uw;
	*n = 0;
	if (!u)
		return NULL;
	pthread_mutex_lock(&u->lock);
	struct last_stack *v = u->lasts;
	*n = u->nlasts;
	u->lasts = NULL;
	u->nlasts = u->lasts_cap = 0;
	pthread_mutex_unlock(&u->lock);
	return v;
}

bool
unwinder_pending(struct profiler *p)
{
	struct unwinder *u = p->uw;
	if (!u || u->running)
		return false;
	pthread_mutex_lock(&u->lock);
	bool any = u->n > 0;
	pthread_mutex_unlock(&u->lock);
	return any;
}

void
unwinder_drain(struct profiler *p)
{
	if (p->uw && !p->uw->running)
		run_queue(p, false);
}

bool
unwinder_finish(struct profiler *p, unsigned limit_ms)
{
	struct unwinder *u = p->uw;
	if (!u)
		return true;
	if (!u->running) {
		run_queue(p, false);
		return true;
	}
	/* Bounded by its progress, not by the time in all: a slow machine
	 * unwinding a full queue gets there; a file it is stuck in does
	 * not hold the output more than limit_ms. */
	uint64_t since = ptrace_clock_monotonic_ns();
	pthread_mutex_lock(&u->lock);
	uint64_t last_done = u->done;
	u->closing = true;
	pthread_cond_signal(&u->more);
	while (u->done < u->pushed) {
		uint64_t now = ptrace_clock_monotonic_ns();
		if (u->done != last_done) {
			last_done = u->done;
			since = now;
		} else if (now - since >= (uint64_t)limit_ms * NS_PER_MS) {
			break;
		}
		/* Threads the detach gave up on (in D) are let go as they
		 * leave their sleep, not after this wait. */
		wait_at_most(u, &u->idle, 20 * NS_PER_MS);
		pthread_mutex_unlock(&u->lock);
		ptrace_poll_all();
		pthread_mutex_lock(&u->lock);
	}
	uint64_t left = u->pushed - u->done;
	if (left)
		u->stuck = true;
	pthread_mutex_unlock(&u->lock);
	if (left) {
		/* Still naming (a file it should not have taken this long
		 * on): what it did is written, it is left to exit with us,
		 * and adds nothing to the hook's owner (freed after us). */
		p->stats.not_unwound = left;
		pthread_mutex_lock(&p->stacks_lock);
		p->hook = NULL;
		pthread_mutex_unlock(&p->stacks_lock);
		return false;
	}
	pthread_join(u->thread, NULL);
	u->running = false;
	return true;
}

bool
unwinder_free(struct profiler *p)
{
	struct unwinder *u = p->uw;
	if (!u)
		return true;
	if (u->stuck)
		return false;  /* still working: everything it uses stays */
	if (u->running)
		unwinder_finish(p, UINT32_MAX / 2);
	for (size_t k = 0; k < u->cap; k++) {
		ptrace_snapshot_release(&u->ring[k].snap);
		free(u->ring[k].ids);
		unwind_target_free(u->ring[k].ut);
	}
	ptrace_snapshot_release(&u->cur.snap);
	for (size_t k = 0; k < u->nprocs; k++)
		uproc_release(&u->procs[k]);
	for (size_t k = 0; k < u->nlasts; k++)
		free(u->lasts[k].ids);
	free(u->lasts);
	free(u->reuse);
	free(u->procs);
	free(u->ring);
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->more);
	pthread_cond_destroy(&u->idle);
	free(u);
	p->uw = NULL;
	return true;
}

void
unwinder_report_target_inputs(const struct unwind_target *ut, pid_t pid)
{
	struct unwind_dropped d;

	/* What the caps on target-written input left out (unwind.h): the
	 * names of some frames are missing from the output. */
	unwind_target_dropped(ut, &d);
	if (d.perf_map_lines)
		error_msg("warning: %" PRIu64 " lines of /tmp/perf-%d.map left out "
			  "(kept at most %u entries and %u MiB of names)",
			  d.perf_map_lines, (int)pid,
			  UNWIND_PERF_MAP_MAX_ENTRIES, UNWIND_PERF_MAP_MAX_NAME_BYTES >> 20);
	if (d.perf_map_bad)
		error_msg("warning: %" PRIu64 " lines of /tmp/perf-%d.map not in perf's format "
			  "(START SIZE NAME, hex) or longer than 4 KiB, left out",
			  d.perf_map_bad, (int)pid);
	if (d.perf_map_unread)
		error_msg("warning: the last %" PRIu64 " bytes of /tmp/perf-%d.map not read yet "
			  "(one look reads for at most 2 s, twice as many lines as entries "
			  "are kept and 256 bytes a line; later looks go on)",
			  d.perf_map_unread, (int)pid);
	if (d.module_names)
		error_msg("warning: process %d: %" PRIu64 " frames without a module name "
			  "(kept at most %u MiB of module paths)",
			  (int)pid, d.module_names, UNWIND_MAX_MODULE_NAME_BYTES >> 20);
	/* Refused, not an error: JIT frames stay unnamed. */
	if (d.perf_map_refused) {
		char owner[32] = "";
		if (d.perf_map_owner >= 0)
			snprintf(owner, sizeof(owner), " (uid %ld)", d.perf_map_owner);
		error_msg("warning: process %d: its perf map /tmp/perf-PID.map was not read: "
			  "%s%s; its JIT frames are unnamed", (int)pid, d.perf_map_refused, owner);
	}
	/* Debug inputs over their limits (shared by every target: each is
	 * said once, at the first report after it was met). */
	static size_t skipped_seen;
	for (const char *line; (line = unwind_skipped_next(&skipped_seen));)
		error_msg("warning: %s", line);
}

void
unwinder_report_inputs(struct profiler *p)
{
	struct unwinder *u = p->uw;
	if (!u || u->stuck)
		return;
	for (size_t k = 0; k < u->nprocs; k++)
		if (u->procs[k].ut)
			unwinder_report_target_inputs(u->procs[k].ut, u->procs[k].pid);
}
