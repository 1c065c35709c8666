/* sampler/dump-live.c - dump of a running process: attach, sample, unwind.
 *
 * All threads are sampled first (each stopped only until its registers
 * and stack are copied, the next one interrupted meanwhile), the process
 * is detached, and only then is anything symbolized or printed: the
 * target is free before the slow part starts.  The copies are unwound by
 * a second thread while the
 * next threads are sampled (struct dump_unwinder): that needs no thread
 * stopped either.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "base/base.h"
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "sampler/dump-internal.h"
#include "sampler/follow.h"
#include "sampler/error.h"
#include "sampler/out-file.h"
#include "sampler/options.h"
#include "sampler/output.h"
#include "sampler/profiler.h"
#include "sampler/signals.h"
#include "unwind/unwind.h"

/* STACKSPY_DEBUG=1: where a dump's time goes, phase by phase: the wall
 * time since the phase before and this thread's CPU time in it
 * (bench/dump-parked.sh holds a dump against the ptrace floor; these say
 * which part is over it).  The first call only starts the clock. */
static void
debug_phase(const char *what)
{
	static uint64_t wall0, cpu0;
	if (!sampler_debug())
		return;
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	uint64_t cpu = (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
	uint64_t wall = ptrace_clock_monotonic_ns();
	if (wall0)
		error_msg("debug: %-11s %7.3f ms, %7.3f ms of CPU", what,
			  (double)(wall - wall0) / (double)NS_PER_MS,
			  (double)(cpu - cpu0) / (double)NS_PER_MS);
	wall0 = wall;
	cpu0 = cpu;
}

/* How long a thread may take to stop (a record's tick waits less:
 * RECORD_STOP_TIMEOUT_MS). */
#define DUMP_STOP_TIMEOUT_MS 250

/* Report why PID cannot be attached.  Always an error line, maybe a hint. */
static void
report_attach_error(pid_t pid, int err)
{
	if (err == -EPERM) {
		char why[512];
		perror_msg(err, "cannot attach to process %d", (int)pid);
		sampler_hint_msg("%s", ptrace_explain_eperm(pid, why, sizeof(why)));
	} else {
		perror_msg(err, "cannot attach to process %d", (int)pid);
	}
}

/* Keep only what was copied: a dump of 10,000 threads holds all their
 * stacks until the unwind. */
static void
snapshot_shrink(struct stack_snapshot *s)
{
	if (s->stack_len < s->stack_cap) {
		unsigned char *nb = realloc(s->stack, s->stack_len ? s->stack_len : 1);
		if (nb) {
			s->stack = nb;
			s->stack_cap = s->stack_len ? s->stack_len : 1;
		}
	}
}

/* Read thread d without stopping it: it is blocked (D at attach, never
 * seized; or seized but it did not stop in time), so its user stack cannot
 * change while we copy it (ptrace_snapshot_blocked checks it did not move).
 * A thread whose D state was brief may be running again: a few tries. */
static void
sample_blocked(pid_t pid, struct unwind_target *ut, struct dump_thread *d,
	       struct stack_snapshot *snap)
{
	struct task_syscall sc;
	int r = -EAGAIN;
	for (int tries = 0; tries < 3 && r == -EAGAIN; tries++) {
		if (tries)
			usleep(1000);
		r = ptrace_snapshot_blocked(pid, d->tid, STACK_WINDOW_BYTES,
					    unwind_target_stack_end, ut, snap, &sc);
	}
	if (r == -ESRCH) {
		d->tid = 0;       /* exited meanwhile: not shown */
		return;
	}
	if (r < 0) {
		if (r == -EAGAIN)
			d->error = "did not stop in time, and is not blocked either";
		else if (!d->error)
			d->error = strerror(-r);
		return;
	}
	snapshot_shrink(snap);
	d->sampled = true;
	d->unstopped = true;
	d->error = NULL;
	d->in_syscall = sc.nr >= 0;
	d->syscall_nr = sc.nr;
	d->syscall_arg0 = sc.args[0];
}

/* The kernel stack and wchan of thread d (root only for the stack).
 * asked: --kernel was given, and a refusal is said once, not dropped in
 * silence (the kernel lets only root, CAP_SYS_ADMIN, read
 * /proc/TID/stack). */
static void
read_kernel_stack(pid_t pid, struct dump_thread *d, bool asked)
{
	static bool said;
	struct kernel_frame kf[MAX_KERNEL_FRAMES];
	ptrace_read_wchan(pid, d->tid, d->wchan, sizeof(d->wchan));
	int n = ptrace_kernel_stack(pid, d->tid, kf, MAX_KERNEL_FRAMES);
	if ((n == -EACCES || n == -EPERM) && asked && !said) {
		said = true;
		error_msg("warning: --kernel: the kernel stacks are left out: /proc/%d/task/%d/stack "
			  "is readable by root only (CAP_SYS_ADMIN); run stackspy as root for them",
			  (int)pid, (int)d->tid);
	}
	if (n <= 0)
		return;
	if (!(d->kframes = malloc((size_t)n * sizeof(*kf))))
		error_msg_and_die("out of memory");
	memcpy(d->kframes, kf, (size_t)n * sizeof(*kf));
	d->nkframes = n;
}

/* Threads per ptrace_sample_many batch.  Within a batch the stops are
 * taken in order with one thread interrupted ahead (DUMP_AHEAD): the next
 * thread goes into its stop while the tracer copies the one before, so
 * the tracer seldom sleeps, and a thread's pause is its own copy and at
 * most the one before it (bench/dump-parked.sh: 8 interrupted at once
 * paused each thread 60-120 us where the serial floor stops one for
 * 15-20 us; one ahead, 20-30 us, and no slower).  A thread slow to stop
 * (in D) turns the rest of its batch to all at once, so k threads in D
 * cost about one check, not k (ptrace/sample.h).  Between batches the
 * unwinder is given the new samples and the target polled. */
#define DUMP_BATCH 32
#define DUMP_AHEAD 1

/* A batch's stack buffers (a full window each), reused from one batch to
 * the next: only the bytes a copy got are kept per thread, so that a
 * dump of 10,000 threads holds only what it needs until the unwind, and
 * the buffers are faulted in once. */
struct dump_batch {
	struct stack_snapshot outs[DUMP_BATCH];
	int results[DUMP_BATCH];
	struct tracee *threads[DUMP_BATCH];
	size_t slot[DUMP_BATCH];
	size_t n;
};

/* Move what batch buffer src copied into dst (exactly sized). */
static void
snapshot_keep(struct stack_snapshot *dst, const struct stack_snapshot *src)
{
	*dst = *src;
	dst->stack_cap = src->stack_len ? src->stack_len : 1;
	if (!(dst->stack = malloc(dst->stack_cap)))
		error_msg_and_die("out of memory");
	memcpy(dst->stack, src->stack, src->stack_len);
	/* Its interpreter's frames, read in the stop. */
	dst->interp = NULL;
	dst->interp_cap = dst->interp_len = 0;
	if (src->interp_len) {
		if (!(dst->interp = malloc(src->interp_len)))
			error_msg_and_die("out of memory");
		memcpy(dst->interp, src->interp, src->interp_len);
		dst->interp_cap = dst->interp_len = src->interp_len;
	}
}

/* Sample the threads of b together (ptrace_sample_many: threads that
 * cannot stop cost the timeout once, not once each), moving each snapshot
 * into snaps[b->slot[k]] and its outcome into p->threads[b->slot[k]].  A
 * thread that exited since the scan gets tid 0: not an error, not shown. */
static void
sample_batch(struct ptrace_target *pt, struct unwind_target *ut, struct dump_batch *b,
	     struct dump_process *p, struct stack_snapshot *snaps, bool consistent, int max_depth)
{
	const struct sample_opts so = {
		.window = STACK_WINDOW_BYTES,
		.stack_end = unwind_target_stack_end,
		.ctx = ut,
		.timeout_us = DUMP_STOP_TIMEOUT_MS * (int64_t)US_PER_MS,
		.stagger_us = 0,
		.ahead = DUMP_AHEAD,
		/* The default: each thread stopped only for its own copy
		 * and the one before it (blocked threads do not move
		 * anyway; a running program is not held still for the whole
		 * dump).  --consistent: all stay stopped until the detach,
		 * as with gdb. */
		.flags = (consistent ? SAMPLE_HOLD : SAMPLE_DETACH) |
			 SAMPLE_DSTATE | SAMPLE_INORDER,
		/* CPython's frames, where unwind_python_prepare found it. */
		.interp_read = unwind_python_stop_read,
		.interp_window = unwind_python_version(ut) ? unwind_python_chain_bytes(max_depth) : 0,
	};
	int r = ptrace_sample_many(pt, b->threads, b->n, &so, b->outs, b->results);
	for (size_t k = 0; k < b->n; k++) {
		struct dump_thread *d = &p->threads[b->slot[k]];
		struct stack_snapshot *s = &snaps[b->slot[k]];
		int e = r < 0 ? r : b->results[k];
		d->pause_us = (double)b->outs[k].pause_ns / (double)NS_PER_US;
		if (e == -ESRCH) {
			d->tid = 0;
			continue;
		}
		if (e == -ETIMEDOUT)
			d->error = "did not stop in time";
		else if (e == -EAGAIN)
			d->state = 'D';
		else if (e < 0)
			d->error = strerror(-e);
		else
			d->sampled = true;
		/* Seized blind (need_info): the state it was in when
		 * interrupted is what the stop found, not what /proc says
		 * after the release (R for a moment, while it goes back to
		 * its sleep). */
		if (e == 0 && d->state == '?')
			d->state = b->outs[k].group_stopped ? 'T' :
				   oncpu_cut_syscall(arch_host(), &b->outs[k]) ? 'S' : 'R';
		snapshot_keep(s, &b->outs[k]);
		/* It is blocked where it cannot stop (in D): read it as it
		 * is. */
		if (e == -ETIMEDOUT || e == -EAGAIN)
			sample_blocked(pt->pid, ut, d, s);
	}
	b->n = 0;
}

/* The unwind of the threads sampled so far runs in a second thread while
 * the next ones are sampled: the sampling mostly waits for threads to
 * stop, and unwinding is a third of a dump's time (bench/dump-parked.sh).
 * It has its own unwind target (nothing in unwind/ is shared between
 * targets but the SIGBUS guards of mapped files, which only it uses
 * meanwhile: the sampling only asks its own target for stack ends), and
 * makes no ptrace call (DESIGN.md: all come from one thread). */
struct dump_unwinder {
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t more;
	const struct dump_options *o;
	struct dump_process *p;
	struct stack_snapshot *snaps;
	pid_t pid;                /* whose memory map to read */
	struct unwind_target *ut; /* its own; NULL if it could not be read */
	size_t ready;             /* p->threads[0, ready) are sampled */
	bool done;                /* no more will come */
	bool idle;                /* SCHED_IDLE while the sampling runs */
	size_t unwound;           /* p->threads[0, unwound) were its to unwind
				     (those it did not, out of memory or
				     interrupted, the main thread does) */
};

/* The system call a stopped thread was blocked in, from its registers
 * (the locks need the futex address), where NT_PRSTATUS has the call's
 * number (x86-64: orig_rax) and the arch table the argument registers;
 * elsewhere (aarch64 keeps the number out of NT_PRSTATUS) sampler/locks.c
 * reads the call the thread went back into from /proc, recognised by the
 * sp kept here. */
static void
thread_syscall(struct dump_thread *d, const struct stack_snapshot *s)
{
	const struct arch *a = arch_host();
	struct arch_syscall sc;
	struct arch_regs regs;
	if (d->unstopped || !a || arch_regs_from_prstatus(a, s->regs, s->regs_len, &regs) < 0)
		return;
	if (a->pr_syscall_nr < 0 || a->nsyscall_args == 0) {
		if (a->reg_sp >= 0 && (regs.valid >> a->reg_sp) & 1)
			d->sample_sp = regs.r[a->reg_sp];
		return;
	}
	if (arch_pr_syscall(a, s->regs, s->regs_len, &sc) < 0 || !sc.in_syscall)
		return;
	d->in_syscall = true;
	d->syscall_nr = sc.nr;
	d->syscall_arg0 = regs.r[a->syscall_args[0]];
}

/* STACKSPY_TEST_INFO_WAIT=FILE (tests/dump-group.test only): the first
 * read of a thread's name and state after its sample creates FILE.wait
 * (the dump is under way) and waits until FILE exists (10 s at most), so
 * that the test can change what /proc says of the threads (a SIGSTOP)
 * after they were sampled and let go, and see that the state shown is the
 * one the stop found (mutation dump-state-from-stop), not one read while
 * a thread happened to be on its way back to sleep. */
static void
test_info_wait(void)
{
	static int waited;
	if (__atomic_exchange_n(&waited, 1, __ATOMIC_RELAXED))
		return;
	const char *path = getenv("STACKSPY_TEST_INFO_WAIT");
	if (!path || !*path)
		return;
	char started[PATH_MAX];
	snprintf(started, sizeof(started), "%s.wait", path);
	int fd = open(started, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	for (int i = 0; i < 1000 && access(path, F_OK) != 0; i++)
		usleep(10000);
}

/* The name of a thread seized without it (need_info), read once it runs
 * again; and its state, if its sample did not tell (sample_batch). */
static void
thread_info(int taskfd, struct dump_thread *d)
{
	char state;
	d->need_info = false;
	test_info_wait();
	if (taskfd < 0)
		return;
	if (d->state != '?')
		ptrace_thread_name_at(taskfd, d->tid, d->name, sizeof(d->name));
	else if (ptrace_thread_info_at(taskfd, d->tid, &state, d->name, sizeof(d->name)) == 0)
		d->state = state;
}

/* /proc/PID/task, for thread_info. */
static int
open_task_dir(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Unwind thread d once, into scratch (o->cfg.max_depth frames), keeping only
 * the frames found: 1000 threads of --max-depth 256 were 4 MiB, a page
 * fault each.  Returns false when out of memory (the unwinder leaves it
 * to the main thread, which may exit: only it detaches). */
static bool
unwind_thread(const struct dump_options *o, int taskfd, struct unwind_target *ut,
	      struct dump_thread *d, struct stack_snapshot *s,
	      struct unwind_frame *scratch)
{
	if (d->need_info && d->tid)
		thread_info(taskfd, d);
	if (!d->sampled || !d->tid || d->frames)
		return true;
	enum unwind_stop stop;
	int n = unwind_walk(ut, o->cfg.engine, s, scratch, o->cfg.max_depth, &stop);
	if (n < 0)
		n = 0;
	/* Never NULL once unwound: that tells it is done. */
	d->frames = malloc((n ? (size_t)n : 1) * sizeof(*d->frames));
	if (!d->frames)
		return false;
	memcpy(d->frames, scratch, (size_t)n * sizeof(*d->frames));
	d->nframes = n;
	d->stop = stop;
	thread_syscall(d, s);
	/* Its stack copy is not read again (the locks read the live
	 * process): freed now, the next batches' copies reuse the memory
	 * instead of faulting in fresh pages (two a thread, 2,000 page
	 * faults in a dump of 1,000 threads). */
	ptrace_snapshot_release(s);
	return true;
}

/* Look up the symbols of d's frames, once an address, and drop the
 * names: the first lookup in a module reads and sorts its symbol table
 * (a millisecond and more for a C library), which the locks and the
 * output would otherwise do after the detach, on the way to the output.
 * Done here, it runs beside the sampling, in the target that is kept.
 * seen: the addresses looked up so far (direct mapped). */
#define WARM_CACHE 256
static void
warm_symbols(struct unwind_target *ut, const struct dump_thread *d, unsigned flags,
	     uint64_t seen[WARM_CACHE])
{
	for (int i = 0; d->frames && i < d->nframes; i++) {
		bool caller = unwind_frame_is_caller(d->frames, i);
		uint64_t key = d->frames[i].ip << 1 | (caller ? 1 : 0);
		size_t slot = (size_t)(base_mix64(key) % WARM_CACHE);
		if (!key || seen[slot] == key)
			continue;
		seen[slot] = key;
		struct unwind_symbol sym;
		unwind_symbolize(ut, d->frames[i].ip, caller, flags, &sym);
	}
}

static void *
unwinder_main(void *arg)
{
	struct dump_unwinder *u = arg;
	int r;
	struct unwind_frame *scratch = malloc((size_t)u->o->cfg.max_depth * sizeof(*scratch));
	u->ut = scratch ? unwind_target_open(u->pid, &r) : NULL;
	int taskfd = open_task_dir(u->pid);
	uint64_t seen[WARM_CACHE] = { 0 };
	unsigned sym_flags = u->o->cfg.sym_flags & ~(unsigned)(OUTPUT_SOURCE | OUTPUT_GROUP);
	pthread_mutex_lock(&u->lock);
	for (;;) {
		while (u->unwound == u->ready && !u->done)
			pthread_cond_wait(&u->more, &u->lock);
		size_t from = u->unwound, to = u->ready;
		if (from == to || !u->ut)
			break;
		pthread_mutex_unlock(&u->lock);
		for (size_t k = from; k < to && !stop_signal; k++) {
			if (!unwind_thread(u->o, taskfd, u->ut, &u->p->threads[k], &u->snaps[k],
					   scratch))
				break;
			warm_symbols(u->ut, &u->p->threads[k], sym_flags, seen);
		}
		pthread_mutex_lock(&u->lock);
		u->unwound = to;
	}
	pthread_mutex_unlock(&u->lock);
	if (taskfd >= 0)
		close(taskfd);
	free(scratch);
	return NULL;
}

static void
unwinder_start(struct dump_unwinder *u)
{
	sigset_t all, old;
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->more, NULL);
	/* Signals are the main thread's (sampler/signals.c); faults are
	 * delivered to the faulting thread whatever its mask. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	u->running = pthread_create(&u->thread, NULL, unwinder_main, u) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Is a CPU left for the unwinder (nothing else runnable than the
 * tracer and the unwinder, /proc/loadavg's fourth field)? */
static bool
cpu_to_spare(void)
{
	char buf[128];
	unsigned running = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return sscanf(buf, "%*s %*s %*s %u/", &running) == 1 && cpus > 1 &&
	       running <= (unsigned long)cpus;
}

/* While the threads are sampled, the CPU is theirs first: a thread
 * interrupted on the CPU the unwinder runs on goes into its stop at once
 * instead of after the unwinder's time slice (bench/dump-parked.sh: mean
 * pause 35-125 us, max over 1 ms, against 20-30 us).  Only where the
 * tracer is real-time (CAP_SYS_NICE): the same right gives the unwinder
 * its normal policy back at unwinder_finish (RLIMIT_NICE refuses that to
 * others), and without it the tracer competes for its CPU anyway.  And
 * only where the unwinder would have a CPU to itself otherwise: on a busy
 * host it would get nothing until the sampling ends (two CPU burners: its
 * work then held the output 25 ms), and the targets wait for the others
 * anyway. */
static void
unwinder_yield_cpu(struct dump_unwinder *u)
{
	struct sched_param idle = { 0 };
	if (u->running && ptrace_realtime_on() && cpu_to_spare())
		u->idle = pthread_setschedparam(u->thread, SCHED_IDLE, &idle) == 0;
}

/* p->threads[0, n) are sampled. */
static void
unwinder_feed(struct dump_unwinder *u, size_t n)
{
	if (!u->running)
		return;
	pthread_mutex_lock(&u->lock);
	u->ready = n;
	pthread_cond_signal(&u->more);
	pthread_mutex_unlock(&u->lock);
}

/* Wait for it; returns its target (NULL: none), and the threads it did
 * not unwind are left for the caller. */
static struct unwind_target *
unwinder_finish(struct dump_unwinder *u)
{
	if (!u->running)
		return NULL;
	/* Back from SCHED_IDLE (allowed: it went idle only where the tracer
	 * could be real-time, the same CAP_SYS_NICE). */
	struct sched_param normal = { 0 };
	if (u->idle)
		pthread_setschedparam(u->thread, SCHED_OTHER, &normal);
	pthread_mutex_lock(&u->lock);
	u->done = true;
	pthread_cond_signal(&u->more);
	pthread_mutex_unlock(&u->lock);
	/* Threads given up on by the detach (in D) are let go as they
	 * leave their sleep, and the watchdog sees us making progress,
	 * however long the unwinding takes. */
	for (;;) {
		struct timespec ts = ptrace_clock_realtime_deadline(20 * NS_PER_MS);
		if (pthread_timedjoin_np(u->thread, NULL, &ts) != ETIMEDOUT)
			break;
		ptrace_poll_all();
	}
	pthread_mutex_destroy(&u->lock);
	pthread_cond_destroy(&u->more);
	u->running = false;
	return u->ut;
}

/* Sample the chosen threads of pt (o->tid: that one) batch by batch into
 * p->threads and snaps, handing each batch to the unwinder u. */
static void
sample_threads(const struct dump_options *o, struct ptrace_target *pt, struct unwind_target *ut,
	       struct dump_process *p, struct stack_snapshot *snaps, struct dump_batch *b,
	       struct dump_unwinder *u)
{
	size_t i = 0;
	while (i < pt->nthreads && !stop_signal) {
		for (; i < pt->nthreads && b->n < DUMP_BATCH; i++) {
			struct tracee *th = &pt->threads[i];
			if (o->tid && th->tid != o->tid)
				continue;
			struct dump_thread *d = &p->threads[p->nthreads];
			d->tid = th->tid;
			d->state = th->proc_state;
			d->need_info = th->proc_state == '?';
			snprintf(d->name, sizeof(d->name), "%s", th->name);
			if (th->proc_state == 'D' && th->state == TRACEE_GONE)
				sample_blocked(pt->pid, ut, d, &snaps[p->nthreads]);
			else if (th->proc_state != 'Z' && th->proc_state != 'X') {
				b->threads[b->n] = th;
				b->slot[b->n++] = p->nthreads;
			}
			p->nthreads++;
		}
		if (b->n) {
			sample_batch(pt, ut, b, p, snaps, o->consistent, o->cfg.max_depth);
			ptrace_target_poll(pt);
		}
		unwinder_feed(u, p->nthreads);
	}
}

/* Attach, read the memory map, sample the chosen threads, detach.  Fills
 * p->threads, *snaps_out and *ut_out.  Returns 0 or a negative errno
 * (nothing sampled, already reported). */
static int
sample_process(const struct dump_options *o, pid_t pid, struct dump_process *p,
	       struct stack_snapshot **snaps_out, struct unwind_target **ut_out)
{
	int r;
	/* Seized without reading each thread's /proc stat first (10 us a
	 * thread, most of the attach): a thread in D is given up 1 ms after
	 * its interrupt (SAMPLE_DSTATE) and read unstopped
	 * (sample_blocked), its name and state are read after its sample.
	 * --consistent reads them first: its threads stay stopped until the
	 * end, where every state would read t; its threads in D are not
	 * seized. */
	debug_phase("start");
	struct ptrace_target *pt = ptrace_target_attach(pid, o->consistent ? ATTACH_SKIP_DSTATE :
							ATTACH_NO_PROCINFO, &r);
	debug_phase("seize");
	if (!pt) {
		report_attach_error(pid, r);
		return r;
	}
	/* The map and the vdso copy need no thread stopped.  After the
	 * attach, so that a refusal is explained by the attach's EPERM
	 * rather than by /proc's EACCES. */
	pid_t ut_pid = pid;
	struct unwind_target *ut = unwind_target_open(pid, &r);
	/* A leader that called pthread_exit is a zombie whose /proc/PID/maps
	 * reads as ESRCH; any live thread shows the same address space. */
	for (size_t i = 0; !ut && r == -ESRCH && i < pt->nthreads; i++) {
		const struct tracee *th = &pt->threads[i];
		if (th->tid != pid && th->proc_state != 'Z' && th->proc_state != 'X')
			ut = unwind_target_open(ut_pid = th->tid, &r);
	}
	if (!ut) {
		ptrace_target_release(pt);
		perror_msg(r, "cannot read the memory map of process %d", (int)pid);
		return r;
	}
	*ut_out = ut;
	debug_phase("memory map");
	unwind_python_prepare(ut);  /* before any stop: they read its frames */

	p->threads = calloc(pt->nthreads, sizeof(*p->threads));
	struct stack_snapshot *snaps = calloc(pt->nthreads, sizeof(*snaps));
	struct dump_batch *b = calloc(1, sizeof(*b));
	if (!p->threads || !snaps || !b)
		error_msg_and_die("out of memory");
	struct dump_unwinder u = { .o = o, .p = p, .snaps = snaps, .pid = ut_pid };
	/* One batch leaves nothing to overlap. */
	if (pt->nthreads > DUMP_BATCH)
		unwinder_start(&u);
	/* Real-time from the first batch to the last (ptrace/sample.c says
	 * why), not taken and dropped again for each batch: the unwinding
	 * meanwhile is the other thread's (which does not inherit it). */
	debug_phase("prepare");
	ptrace_hold_realtime(true);
	unwinder_yield_cpu(&u);
	uint64_t hold_start = ptrace_clock_monotonic_ns();
	sample_threads(o, pt, ut, p, snaps, b, &u);
	ptrace_hold_realtime(false);
	debug_phase("sampling");
	/* The GIL's holder before threads held (--consistent) run again. */
	dump_python_facts(p, ut);
	ptrace_target_release(pt);
	uint64_t held_ns = ptrace_clock_monotonic_ns() - hold_start;
	debug_phase("detach");
	/* Its target has the images its unwinding opened: the one kept. */
	struct unwind_target *uut = unwinder_finish(&u);
	debug_phase("unwinder");
	if (uut) {
		unwind_target_free(ut);
		*ut_out = ut = uut;
	}
	if (o->consistent) {
		/* Every stopped thread was held until now: its pause is
		 * (at most) the whole sampling. */
		double held_us = (double)held_ns / (double)NS_PER_US;
		for (size_t k = 0; k < p->nthreads; k++)
			if (p->threads[k].sampled && !p->threads[k].unstopped)
				p->threads[k].pause_us = held_us;
	}
	for (size_t k = 0; k < DUMP_BATCH; k++)
		ptrace_snapshot_release(&b->outs[k]);
	free(b);
	/* Drop the threads that exited under us. */
	size_t kept = 0;
	for (size_t k = 0; k < p->nthreads; k++) {
		if (!p->threads[k].tid)
			continue;
		p->threads[kept] = p->threads[k];
		snaps[kept++] = snaps[k];
	}
	p->nthreads = kept;
	/* After the detach: nothing here needs a thread stopped. */
	for (size_t k = 0; k < p->nthreads; k++) {
		struct dump_thread *d = &p->threads[k];
		if (d->unstopped)
			p->nunstopped++;
		if (d->unstopped || (o->cfg.kernel && d->state != 'Z' && d->state != 'X'))
			read_kernel_stack(pid, d, o->cfg.kernel);
	}
	*snaps_out = snaps;
	return 0;
}

int
dump_one(const struct dump_options *o_in, pid_t pid, bool *partial, const char *before,
	 bool *begun)
{
	char why[256];
	struct dump_options opts = *o_in;   /* the TID given as a PID */
	const struct dump_options *o = &opts;
	pid_t tgid;
	pid_t only_tid = 0;
	/* A TID where a PID was expected: that thread of its process. */
	if (ptrace_thread_tgid(pid, &tgid) == 0 && tgid != pid && tgid > 0) {
		if (o->tid && o->tid != pid) {
			error_msg("%d is a thread of process %d, not a process", (int)pid, (int)tgid);
			return -ESRCH;
		}
		opts.tid = pid;
		only_tid = pid;
		pid = tgid;
	}
	int r = ptrace_target_check(pid, why, sizeof(why));
	if (r == -EINVAL) {
		error_msg("cannot attach to process %d: %s", (int)pid, why);
		return r;
	}
	if (r < 0) {
		report_attach_error(pid, r);
		return r;
	}
	struct dump_process p;
	struct unwind_target *ut = NULL;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	p.only_tid = only_tid;
	p.engine = o->cfg.engine;
	ptrace_read_comm(pid, p.comm, sizeof(p.comm));

	struct stack_snapshot *snaps = NULL;
	/* The unwinding runs beside the sampling without a limit (a walk
	 * there holds up nothing but itself) and ends, on both threads,
	 * --timeout after the last copy. */
	unwind_set_deadline(0);
	unsigned long misses = unwind_deadline_misses();
	r = sample_process(o, pid, &p, &snaps, &ut);
	if (r < 0)
		return r;
	unwind_set_deadline(ptrace_clock_monotonic_ns() +
			    (uint64_t)(o->timeout * (double)NS_PER_SEC));
	/* Every thread let go before the unwind and the output, and a
	 * Ctrl-Z that came meanwhile taken now (sampler/signals.c). */
	sampler_cleanup_release_before_output();
	sampler_signals_job_stop();
	if (stop_signal) {
		/* Detached already; nothing half-written goes out. */
		unwind_target_free(ut);
		sampler_signals_reraise();
	}
	if (o->tid && p.nthreads == 0) {
		error_msg("thread %d is not a thread of process %d", (int)o->tid, (int)pid);
		r = -ESRCH;
	}
	struct unwind_frame *scratch = malloc((size_t)o->cfg.max_depth * sizeof(*scratch));
	if (!scratch)
		error_msg_and_die("out of memory");
	int taskfd = open_task_dir(pid);
	for (size_t i = 0; r == 0 && i < p.nthreads; i++) {
		struct dump_thread *d = &p.threads[i];
		if (d->error)
			*partial = true;
		/* Those the unwinder did not get to (or all, without it). */
		if (!unwind_thread(o, taskfd, ut, d, &snaps[i], scratch))
			error_msg_and_die("out of memory");
	}
	if (taskfd >= 0)
		close(taskfd);
	free(scratch);
	debug_phase("unwind rest");
	if (r == 0) {
		dump_find_locks(&p, ut);
		dump_find_waits(&p, ut);
		if (o->graph)
			dump_follow_add(o->graph, &p, false);
	}
	debug_phase("locks, waits");
	if (r == 0) {
		fputs(before, o->out);
		*begun = true;
	}
	if (r == 0 && dump_output(o->out, o->format, &p, ut, o->cfg.sym_flags) < 0) {
		sampler_out_file_write_error(errno ? errno : EIO, o->output);
		r = -EIO;
	}
	debug_phase("output");
	if (r == 0)
		unwinder_report_target_inputs(ut, pid);
	if (unwind_deadline_misses() != misses) {
		size_t late = 0;
		for (size_t i = 0; i < p.nthreads; i++)
			late += p.threads[i].sampled && p.threads[i].stop == UNWIND_STOP_DEADLINE;
		*partial = true;
		error_msg("the unwinding of process %d reached its time limit (--timeout %g): "
			  "%zu thread%s printed as far as %s got, frames of files not read by "
			  "then named module+offset", (int)pid, o->timeout, late,
			  late == 1 ? "" : "s", late == 1 ? "it" : "they");
	}
	for (size_t i = 0; i < p.nthreads; i++) {
		struct dump_thread *d = &p.threads[i];
		free(d->frames);
		free(d->kframes);
		ptrace_snapshot_release(&snaps[i]);
	}
	dump_free_locks(&p);
	free(snaps);
	free(p.threads);
	unwind_target_free(ut);
	return r;
}
