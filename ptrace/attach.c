/* ptrace/attach.c - seize every thread, keep up with their stops, detach.
 *
 * Rules (DESIGN.md "ptrace rules"): PTRACE_SEIZE only, never
 * PTRACE_O_EXITKILL, so that a SIGKILLed stackspy leaves its tracees running
 * (the kernel detaches seized tracees when the tracer dies).  A signal that
 * stops a tracee on its way in is re-injected.  A group-stop (kill -STOP) is
 * kept with PTRACE_LISTEN and left in place at detach.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/ptrace-internal.h"

#define PF_KTHREAD 0x00200000

/* Tracee stops are announced to the tracer with SIGCHLD: we keep SIGCHLD
 * blocked and read it from a signalfd, so a wait can have a timeout without
 * timers or signal handlers. */
static int sigchld_fd = -1;
/* Set when a SIGCHLD from some other tracee than the one waited for was
 * read, or may have been (SIGCHLDs coalesce): ptrace_target_poll must look. */
static bool other_stop_pending;

static struct tracee *
target_find(struct ptrace_target *t, pid_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

/* Every target from attach to release, in one list: waitpid(-1) returns
 * the stops of all our tracees, and one that belongs to another target than
 * the one being polled must still be handled, not dropped (it would stay
 * stopped); ptrace_detach_all() walks it on every exit path.  Targets are
 * allocated here, so their addresses never move. */
static struct ptrace_target *registry;

/* Threads still seized after a detach gave up on them (they did not stop
 * by its deadline: uninterruptible sleep).  They trap when they leave it,
 * and must then be let go at once: ptrace_target_poll() and
 * ptrace_release_lingering() do. */
static pid_t *lingering;
static size_t nlingering, lingering_cap;

void
linger_add(pid_t tid)
{
	if (nlingering == lingering_cap) {
		size_t ncap = lingering_cap ? 2 * lingering_cap : 16;
		pid_t *nv = realloc(lingering, ncap * sizeof(*nv));
		if (!nv)
			return;  /* the kernel lets it go when we exit */
		lingering = nv;
		lingering_cap = ncap;
	}
	lingering[nlingering++] = tid;
}

bool
linger_has(pid_t tid)
{
	for (size_t i = 0; i < nlingering; i++)
		if (lingering[i] == tid)
			return true;
	return false;
}

static void
linger_remove(pid_t tid)
{
	for (size_t i = 0; i < nlingering; i++) {
		if (lingering[i] == tid) {
			lingering[i] = lingering[--nlingering];
			return;
		}
	}
}

/* Read by signal handlers and by the watchdog. */
static volatile sig_atomic_t held;

static void
held_update(void)
{
	int n = (int)nlingering + (int)follow_loose_count();
	for (struct ptrace_target *t = registry; t; t = t->next)
		n += !t->detached;
	held = n;
	watchdog_set_busy(n);
}

int
ptrace_held_count(void)
{
	return held;
}

struct ptrace_target *
registry_new(pid_t pid, unsigned long options)
{
	struct ptrace_target *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->options = options & ~(unsigned long)PTRACE_O_EXITKILL;
	t->next = registry;
	registry = t;
	follow_count(t, 1);
	/* Before the first seize: from now on a SIGSTOPped stackspy would
	 * stall its tracees. */
	ptrace_watchdog_start();
	held_update();
	return t;
}

static void
registry_remove(struct ptrace_target *t)
{
	for (struct ptrace_target **pp = &registry; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			follow_count(t, -1);
			held_update();
			return;
		}
	}
}

struct tracee *
registry_find(struct ptrace_target *hint, pid_t tid, struct ptrace_target **owner)
{
	struct tracee *th = hint ? target_find(hint, tid) : NULL;
	*owner = hint;
	for (struct ptrace_target *t = registry; !th && t; t = t->next) {
		if (t != hint) {
			th = target_find(t, tid);
			*owner = t;
		}
	}
	return th;
}

struct ptrace_target *
registry_next_unannounced(void)
{
	for (struct ptrace_target *t = registry; t; t = t->next) {
		if (t->followed && !t->announced) {
			t->announced = true;
			return t;
		}
	}
	return NULL;
}

static int
sigchld_setup(void)
{
	if (sigchld_fd >= 0)
		return 0;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	sigchld_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return sigchld_fd < 0 ? -errno : 0;
}

uint64_t
monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
tracee_wait(pid_t tid, int *status, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? 0 : monotonic_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		pid_t r = waitpid(tid, status, WNOHANG | __WALL);
		if (r == tid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r < 0)
			continue;
		struct timespec ts, *tsp = NULL;
		if (timeout_ms >= 0) {
			uint64_t now = monotonic_ns();
			if (now >= deadline)
				return 0;
			uint64_t left = deadline - now;
			ts.tv_sec = (time_t)(left / 1000000000u);
			ts.tv_nsec = (long)(left % 1000000000u);
			tsp = &ts;
		}
		struct pollfd pfd = { .fd = sigchld_fd, .events = POLLIN };
		ptrace_watchdog_alive(tsp ? deadline : UINT64_MAX);
		int pr = ppoll(&pfd, 1, tsp, NULL);
		if (pr > 0) {
			struct signalfd_siginfo si;
			/* SIGCHLDs coalesce: the one we read may stand for
			 * another tracee's stop too, so the next poll must look
			 * whatever pid it names. */
			while (read(sigchld_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				other_stop_pending = true;
		}
	}
}

bool
tracee_sleep(uint64_t wake_ns, pid_t expected)
{
	struct timespec ts, *tsp = NULL;
	if (wake_ns != UINT64_MAX) {
		uint64_t now = monotonic_ns();
		uint64_t left = wake_ns > now ? wake_ns - now : 0;
		ts.tv_sec = (time_t)(left / 1000000000u);
		ts.tv_nsec = (long)(left % 1000000000u);
		tsp = &ts;
	}
	struct pollfd pfd = { .fd = sigchld_fd, .events = POLLIN };
	bool other = false;
	ptrace_watchdog_alive(wake_ns);
	if (ppoll(&pfd, 1, tsp, NULL) > 0) {
		/* Several at a time: a read that does not fill the buffer
		 * has emptied the queue, and no read ends in EAGAIN. */
		struct signalfd_siginfo si[8];
		ssize_t r;
		do {
			r = read(sigchld_fd, si, sizeof(si));
			for (ssize_t k = 0; r > 0 && k < r / (ssize_t)sizeof(si[0]); k++) {
				other_stop_pending = true;
				if ((pid_t)si[k].ssi_pid != expected)
					other = true;
			}
		} while (r == (ssize_t)sizeof(si));
	}
	return other;
}

void
tracee_event(struct ptrace_target *t, pid_t tid, int st)
{
	if ((st >> 16) != PTRACE_EVENT_EXEC) {
		follow_event(t, tid, st);
		return;
	}
	t->exec_seen = true;
	/* An exec from a thread other than the leader: every other thread is
	 * gone and the exec'ing one now has the leader's tid.  Its old tid
	 * never reports an exit, so forget it here, or the process would
	 * never look ended. */
	unsigned long former = 0;
	if (ptrace(PTRACE_GETEVENTMSG, tid, 0L, &former) < 0 || (pid_t)former == tid)
		return;
	struct tracee *old = target_find(t, (pid_t)former);
	if (old)
		old->state = TRACEE_GONE;
}

static bool
is_group_stop(int st)
{
	if ((st >> 16) != PTRACE_EVENT_STOP)
		return false;
	switch (WSTOPSIG(st)) {
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return true;
	default:
		return false;
	}
}

int
tracee_resume(struct tracee *th, int st)
{
	long r;
	if (!WIFSTOPPED(st)) {
		th->state = TRACEE_GONE;
		return -ESRCH;
	}
	if ((st >> 16) == 0) {
		/* signal-delivery-stop: deliver the signal as if we were not here. */
		r = ptrace(PTRACE_CONT, th->tid, 0L, (long)WSTOPSIG(st));
		th->state = TRACEE_RUNNING;
	} else if (is_group_stop(st)) {
		/* Stay stopped, but let SIGCONT end the stop as it would without us. */
		r = ptrace(PTRACE_LISTEN, th->tid, 0L, 0L);
		th->state = TRACEE_LISTENING;
	} else {
		r = ptrace(PTRACE_CONT, th->tid, 0L, 0L);
		th->state = TRACEE_RUNNING;
	}
	if (r < 0) {
		if (errno == ESRCH)
			th->state = TRACEE_GONE;
		return -errno;
	}
	return 0;
}

int
ptrace_target_check(pid_t pid, char *why, size_t len)
{
	char path[64], buf[1024];
	why[0] = '\0';
	if (pid <= 0)
		return -ESRCH;
	if (pid == getpid()) {
		snprintf(why, len, "it is stackspy itself");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	char *cp = strrchr(buf, ')');
	char *op = strchr(buf, '(');
	if (!cp || !op || cp[1] != ' ')
		return -ESRCH;
	*cp = '\0';
	char state = cp[2];
	/* Fields after the comm: state ppid pgrp session tty_nr tpgid flags. */
	int ppid = 0;
	unsigned long flags = 0;
	if (sscanf(cp + 2, "%*c %d %*d %*d %*d %*d %lu", &ppid, &flags) != 2)
		return -ESRCH;
	if (flags & PF_KTHREAD) {
		snprintf(why, len, "it is a kernel thread (%s); kernel threads have no user-space stack", op + 1);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		/* A leader that called pthread_exit is a zombie while its other
		 * threads run: that process is still worth a dump. */
		pid_t *tids = NULL;
		int n = procfs_list_tasks(pid, &tids);
		int live = 0;
		for (int i = 0; i < n; i++) {
			char ts;
			if (ptrace_thread_info(pid, tids[i], &ts, NULL, 0) == 0 && ts != 'Z' && ts != 'X')
				live++;
		}
		free(tids);
		if (live == 0) {
			snprintf(why, len, "it is a zombie (it has exited and its parent %d has not reaped it yet)", ppid);
			return -EINVAL;
		}
	}
	return 0;
}

static struct tracee *
target_add(struct ptrace_target *t, pid_t tid)
{
	if (t->nthreads == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 16;
		struct tracee *nv = realloc(t->threads, ncap * sizeof(*nv));
		if (!nv)
			return NULL;
		t->threads = nv;
		t->cap = ncap;
	}
	struct tracee *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return th;
}

/* t->threads[0, sorted) is sorted by tid (rescan keeps it so); entries
 * after it were appended by the current pass.  A record rescans every tick,
 * so with 1000 threads a linear search here was a million compares a tick. */
static bool
target_has(const struct ptrace_target *t, size_t sorted, pid_t tid)
{
	size_t lo = 0, hi = sorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sorted && t->threads[lo].tid == tid)
		return true;
	for (size_t i = sorted; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return true;
	return false;
}

static int
cmp_tracee(const void *a, const void *b)
{
	pid_t x = ((const struct tracee *)a)->tid, y = ((const struct tracee *)b)->tid;
	return (x > y) - (x < y);
}

/* Field 22 of /proc/PID/stat (start time in clock ticks since boot): with
 * the pid, the identity of a process.  Returns 0 with *out set (0 when
 * the line cannot be parsed), -ESRCH when there is no such process, or
 * another negative errno (e.g. -EMFILE: no verdict). */
static int
proc_start_time(pid_t pid, unsigned long long *out)
{
	char path[64], buf[1024];
	*out = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	ssize_t r = procfs_read(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return -ESRCH;
	if (r < 0)
		return (int)r;
	char *cp = strrchr(buf, ')');
	if (!cp || cp[1] != ' ')
		return 0;
	/* After the comm: state is field 3, start time field 22. */
	char *f = cp + 2;
	for (int field = 3; field < 22 && f; field++) {
		f = strchr(f, ' ');
		if (f)
			f++;
	}
	*out = f ? strtoull(f, NULL, 10) : 0;
	return 0;
}

/* The TracerPid of thread tid of pid, 0 if none or unknown. */
static pid_t
thread_tracer(pid_t pid, pid_t tid)
{
	char path[96], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return 0;
	const char *l = strstr(buf, "\nTracerPid:");
	return l ? (pid_t)strtol(l + 11, NULL, 10) : 0;
}

/* The PTRACE_O_* bits of our options (the others are ours). */
static unsigned long
seize_options(unsigned long options)
{
	unsigned long o = options & ~(PTRACE_ATTACH_SKIP_DSTATE | PTRACE_ATTACH_FOLLOW |
				      PTRACE_ATTACH_NO_PROCINFO);
	if (options & PTRACE_ATTACH_FOLLOW)
		o |= PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE;
	return o;
}

/* ptrace_thread_info of thread tid of t, through taskfd (/proc/PID/task
 * open) when there is one. */
static int
thread_info(const struct ptrace_target *t, pid_t tid, int taskfd, char *state, char *name,
	    size_t namelen)
{
	return taskfd >= 0 ? ptrace_thread_info_at(taskfd, tid, state, name, namelen) :
			     ptrace_thread_info(t->pid, tid, state, name, namelen);
}

/* Seize one thread; taskfd: /proc/PID/task open, or -1.  Returns 1 if
 * added, 0 if it was gone or a zombie, negative errno on failure. */
static int
seize_thread(struct ptrace_target *t, pid_t tid, int taskfd)
{
	char state = '?';
	char name[64] = "";
	bool lazy = t->options & PTRACE_ATTACH_NO_PROCINFO;
	/* State and name before we touch it: afterwards every thread looks
	 * traced. */
	if (!lazy && thread_info(t, tid, taskfd, &state, name, sizeof(name)) < 0)
		return 0;
	struct tracee *th = target_add(t, tid);
	if (!th)
		return -ENOMEM;
	/* Never PTRACE_O_EXITKILL (see the top of this file). */
	int seize_err = 0;
	if (lazy) {
		if (ptrace(PTRACE_SEIZE, tid, 0L, (long)seize_options(t->options)) == 0) {
			th->proc_state = '?';
			th->name[0] = '\0';
			th->state = TRACEE_RUNNING;
			return 1;
		}
		/* Refused or gone: what it is tells why (a zombie cannot be
		 * seized). */
		seize_err = errno;
		if (seize_err == ESRCH || thread_info(t, tid, taskfd, &state, name, sizeof(name)) < 0) {
			t->nthreads--;
			return 0;
		}
	}
	th->proc_state = state;
	snprintf(th->name, sizeof(th->name), "%s", name);
	if (state == 'Z' || state == 'X') {
		/* Exited thread (e.g. a leader after pthread_exit): nothing to
		 * trace, but show it. */
		th->state = TRACEE_GONE;
		return 1;
	}
	if (state == 'D' && (t->options & PTRACE_ATTACH_SKIP_DSTATE)) {
		/* dump reads it unstopped (ptrace_snapshot_blocked): seized, it
		 * would keep an interrupt pending and cost the detach timeout. */
		th->state = TRACEE_GONE;
		return 1;
	}
	if (!lazy && ptrace(PTRACE_SEIZE, tid, 0L, (long)seize_options(t->options)) < 0)
		seize_err = errno;
	if (seize_err) {
		int e = seize_err;
		if (e == EPERM && (tid != t->pid || t->nthreads > 1)) {
			/* One thread of a process we could attach: another
			 * tracer (strace -p TID) holds it.  List it with the
			 * reason rather than leave it out silently. */
			th->state = TRACEE_GONE;
			th->attach_error = -EPERM;
			th->tracer = thread_tracer(t->pid, tid);
			t->refused_total++;
			return 1;
		}
		t->nthreads--;
		if (e == ESRCH)
			return 0;
		return -e;
	}
	th->state = TRACEE_RUNNING;
	if (state == 'T') {
		/* Seizing a job-control-stopped thread makes it report its
		 * group-stop to us; take that report and keep it stopped. */
		int st;
		if (tracee_wait(tid, &st, 100) == 1)
			tracee_resume(th, st);
	}
	return 1;
}

/* A thread the kernel attached for us (follow.c): listed, running. */
static int
adopt_thread(struct ptrace_target *t, pid_t tid)
{
	struct tracee *th = target_add(t, tid);
	if (!th)
		return -ENOMEM;
	th->state = TRACEE_RUNNING;
	th->proc_state = 'R';
	ptrace_thread_info(t->pid, tid, NULL, th->name, sizeof(th->name));
	return 1;
}

void
target_fill_new_process(struct ptrace_target *t)
{
	proc_start_time(t->pid, &t->start_time);
	adopt_thread(t, t->pid);
}

/* The process is gone: none of its threads can be ours any more (their
 * exit statuses, if any, are still reaped by poll). */
static void
target_mark_gone(struct ptrace_target *t)
{
	t->gone = true;
	for (size_t i = 0; i < t->nthreads; i++)
		t->threads[i].state = TRACEE_GONE;
}

int
ptrace_target_rescan(struct ptrace_target *t)
{
	int added = 0;
	/* Opened at the first new thread: a rescan that finds none (a
	 * record's, every tick) costs no more system calls. */
	int taskfd = -1;
	if (t->gone)
		return -ESRCH;
	/* Threads can be created while we scan: repeat until a pass finds
	 * nothing new. */
	for (int pass = 0; pass < 100; pass++) {
		/* Never seize the threads of another process that got the
		 * pid after ours ended. */
		unsigned long long st;
		int sr = proc_start_time(t->pid, &st);
		if (sr == -ESRCH || (sr == 0 && t->start_time && st != t->start_time)) {
			target_mark_gone(t);
			added = -ESRCH;
			break;
		}
		if (sr < 0) {
			added = sr;
			break;
		}
		pid_t *tids = NULL;
		int n = procfs_list_tasks(t->pid, &tids);
		if (n == -ESRCH)
			target_mark_gone(t);
		if (n < 0) {
			added = n;
			break;
		}
		int new_here = 0;
		size_t sorted = t->nthreads;
		for (int i = 0; i < n; i++) {
			if (target_has(t, sorted, tids[i]))
				continue;
			if (taskfd < 0) {
				char path[64];
				snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
				taskfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			}
			int r = follow_take_loose(t->pid, tids[i]) ? adopt_thread(t, tids[i]) :
				seize_thread(t, tids[i], taskfd);
			if (r < 0 && tids[i] == t->pid && t->nthreads == 0) {
				free(tids);
				if (taskfd >= 0)
					close(taskfd);
				return r;
			}
			if (r > 0) {
				new_here++;
				added++;
			}
		}
		free(tids);
		if (t->nthreads > sorted)
			qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_tracee);
		if (new_here == 0)
			break;
	}
	if (taskfd >= 0)
		close(taskfd);
	return added;
}

/* A refused thread stays listed (so that rescan does not try it again
 * every tick) while it lives. */
static bool
refused_alive(const struct ptrace_target *t, const struct tracee *th)
{
	char path[96];
	if (!th->attach_error || t->gone)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)t->pid, (int)th->tid);
	return access(path, F_OK) == 0;
}

void
ptrace_target_prune(struct ptrace_target *t)
{
	size_t kept = 0;
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].state != TRACEE_GONE || refused_alive(t, &t->threads[i]))
			t->threads[kept++] = t->threads[i];
	t->nthreads = kept;
}

struct ptrace_target *
ptrace_target_attach(pid_t pid, unsigned long options, int *err)
{
	int r = sigchld_setup();
	if (r < 0) {
		*err = r;
		return NULL;
	}
	struct ptrace_target *t = registry_new(pid, options);
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	proc_start_time(pid, &t->start_time);
	/* The leader first: its failure (EPERM) is the process's failure. */
	r = seize_thread(t, pid, -1);
	if (r >= 0)
		r = ptrace_target_rescan(t);
	if (r >= 0 && t->nthreads == 0)
		r = -ESRCH;
	if (r == -EPERM && thread_tracer(pid, pid) == getpid())
		r = -EALREADY;  /* a child the kernel attached for us (follow.c) */
	if (r < 0) {
		ptrace_target_release(t);
		*err = r;
		return NULL;
	}
	return t;
}

int
ptrace_target_reattach(struct ptrace_target *t)
{
	if (!t->detached)
		return 0;
	if (t->gone)
		return -ESRCH;
	unsigned long long st;
	int r = proc_start_time(t->pid, &st);
	if (r == 0 && t->start_time && st != t->start_time)
		r = -ESRCH;
	if (r < 0) {
		if (r == -ESRCH)
			t->gone = true;
		return r;
	}
	/* Start over: the threads are those of now; those another tracer
	 * holds stay listed (and counted once). */
	size_t kept = 0;
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].attach_error)
			t->threads[kept++] = t->threads[i];
	t->nthreads = kept;
	t->detached = false;
	t->exec_seen = false;
	held_update();
	r = seize_thread(t, t->pid, -1);
	if (r >= 0 && t->nthreads > 1)
		qsort(t->threads, t->nthreads, sizeof(*t->threads), cmp_tracee);
	if (r >= 0)
		r = ptrace_target_rescan(t);
	if (r >= 0 && t->nthreads == 0)
		r = -ESRCH;
	if (r < 0) {
		ptrace_target_detach(t);
		return r;
	}
	return 0;
}

int
ptrace_event_fd(void)
{
	return sigchld_fd;
}

/* ptrace_poll_all_from_yield: a late stop is let go without its sample. */
static bool poll_from_yield;

void
ptrace_target_poll(struct ptrace_target *t)
{
	/* waitpid(-1) walks every tracee in the kernel: with 1000 threads,
	 * doing it after each sample was 12% of a dump.  Look only when a
	 * SIGCHLD says a stop may be waiting, and every 64th call anyway
	 * because SIGCHLDs coalesce. */
	static unsigned calls;
	struct signalfd_siginfo si[8];
	bool pending = other_stop_pending || (++calls % 64) == 0;
	/* Events handled: progress (watchdog.c). */
	ptrace_watchdog_alive(0);
	ssize_t n;
	/* A read that does not fill the buffer has emptied the queue. */
	while (sigchld_fd >= 0 && (n = read(sigchld_fd, si, sizeof(si))) > 0) {
		pending = true;
		if (n < (ssize_t)sizeof(si))
			break;
	}
	if (!pending)
		return;
	other_stop_pending = false;
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG | __WALL);
		if (r <= 0)
			return;
		struct ptrace_target *owner;
		struct tracee *th = registry_find(t, r, &owner);
		if ((!th || th->state == TRACEE_GONE) && !linger_has(r) &&
		    follow_unknown_stop(r, st))
			continue;  /* a new child, adopted (follow.c) */
		if (!th && !WIFSTOPPED(st))
			follow_gone(r);
		if (!th || th->state == TRACEE_GONE) {
			/* A thread we gave up on (it did not stop in time at
			 * detach, e.g. in uninterruptible sleep) whose stop
			 * came later: let it go, with its signal. */
			if (WIFSTOPPED(st))
				ptrace(PTRACE_DETACH, r, 0L, (st >> 16) == 0 ? (long)WSTOPSIG(st) : 0L);
			if (nlingering) {
				linger_remove(r);
				held_update();
			}
			if (!th || WIFSTOPPED(st))
				continue;
		}
		if (!th)
			continue;
		if (!WIFSTOPPED(st)) {
			th->state = TRACEE_GONE;
			if (r == owner->pid) {
				owner->leader_exited = true;
				owner->leader_status = st;
			}
			continue;
		}
		tracee_event(owner, r, st);
		if (th->late && (st >> 16) != 0) {
			/* The stop a sample's interrupt asked for, late. */
			th->late = false;
			if (!poll_from_yield && (st >> 16) == PTRACE_EVENT_STOP &&
			    WSTOPSIG(st) == SIGTRAP && sample_late(owner, th, st))
				continue;
		}
		/* A listening tracee whose group-stop was ended by SIGCONT
		 * reports an event-stop with SIGTRAP: resume() runs it again. */
		tracee_resume(th, st);
	}
}

void
ptrace_poll_all(void)
{
	if (registry || nlingering)
		ptrace_target_poll(NULL);
}

void
ptrace_poll_all_from_yield(void)
{
	poll_from_yield = true;
	ptrace_poll_all();
	poll_from_yield = false;
}

/* How long a detach waits for threads to stop, all of them together. */
#define DETACH_TIMEOUT_MS 1000

/* Detaching needs a stopped thread: interrupt every thread of t first, so
 * that they all stop in parallel. */
static void
detach_interrupt(struct ptrace_target *t)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		struct tracee *th = &t->threads[i];
		/* A held thread (PTRACE_SAMPLE_HOLD) is stopped already. */
		if (th->state != TRACEE_GONE && th->state != TRACEE_HELD &&
		    ptrace(PTRACE_INTERRUPT, th->tid, 0L, 0L) < 0)
			th->state = TRACEE_GONE;
	}
}

static void
note_exit(struct ptrace_target *t, pid_t tid, int st)
{
	if (tid == t->pid && !t->leader_exited) {
		t->leader_exited = true;
		t->leader_status = st;
	}
}

/* Then take each stop and PTRACE_DETACH, handing back a signal that was on
 * its way in, until the common deadline: a thread that has not stopped by
 * then (uninterruptible sleep) costs no more than the others' wait. */
static void
detach_collect(struct ptrace_target *t, uint64_t deadline)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		struct tracee *th = &t->threads[i];
		if (th->state == TRACEE_HELD) {
			/* In the stop its sample took; from a group-stop the
			 * kernel puts it back into the group-stop. */
			th->released = ptrace(PTRACE_DETACH, th->tid, 0L, 0L) == 0;
			th->state = TRACEE_GONE;
			continue;
		}
		while (th->state != TRACEE_GONE) {
			uint64_t now = monotonic_ns();
			int ms = now >= deadline ? 0 : (int)((deadline - now + 999999u) / 1000000u);
			int st;
			if (tracee_wait(th->tid, &st, ms) <= 0) {
				/* Given up for now: it stays seized with our
				 * interrupt pending and traps when it leaves
				 * its sleep; ptrace_target_poll() and
				 * ptrace_release_lingering() let it go then. */
				th->state = TRACEE_GONE;
				linger_add(th->tid);
				break;
			}
			if (!WIFSTOPPED(st)) {
				th->state = TRACEE_GONE;
				note_exit(t, th->tid, st);
				break;
			}
			/* A fork on its way to our stop: the child is ours
			 * already and is let go with the rest. */
			follow_event(t, th->tid, st);
			long sig = (st >> 16) == 0 ? WSTOPSIG(st) : 0;
			/* After a group-stop report the kernel puts the thread
			 * back in group-stop by itself when we detach. */
			if (ptrace(PTRACE_DETACH, th->tid, 0L, sig) == 0) {
				th->state = TRACEE_GONE;
				th->released = true;
			} else if (errno == ESRCH) {
				th->state = TRACEE_GONE;
			}
		}
	}
	/* Reap exit notifications of this target's threads (zombies until a
	 * tracer waits for them), and let a stop that came just after its
	 * thread's deadline go with its signal; waitpid(-1) would also take
	 * the stops of other targets still attached. */
	for (size_t i = 0; i < t->nthreads; i++) {
		int st;
		pid_t tid = t->threads[i].tid;
		/* Detached in a stop: nothing of it is ours to reap (one
		 * waitpid less per thread of a dump). */
		if (t->threads[i].released)
			continue;
		while (waitpid(tid, &st, WNOHANG | __WALL) > 0) {
			if (WIFSTOPPED(st)) {
				ptrace(PTRACE_DETACH, tid, 0L, (st >> 16) == 0 ? (long)WSTOPSIG(st) : 0L);
			} else {
				note_exit(t, tid, st);
			}
			linger_remove(tid);
		}
	}
	t->detached = true;
	held_update();
}

void
ptrace_target_detach(struct ptrace_target *t)
{
	if (!t || t->detached)
		return;
	detach_interrupt(t);
	detach_collect(t, monotonic_ns() + (uint64_t)DETACH_TIMEOUT_MS * 1000000u);
}

static bool
any_attached(void)
{
	for (struct ptrace_target *t = registry; t; t = t->next)
		if (!t->detached)
			return true;
	return follow_loose_count() > 0;
}

void
ptrace_detach_all(void)
{
	uint64_t deadline = monotonic_ns() + (uint64_t)DETACH_TIMEOUT_MS * 1000000u;
	/* Children that tracees fork while we detach are ours too
	 * (follow.c): go round until none is left. */
	while (any_attached()) {
		for (struct ptrace_target *t = registry; t; t = t->next)
			if (!t->detached)
				detach_interrupt(t);
		for (struct ptrace_target *t = registry; t; t = t->next)
			if (!t->detached)
				detach_collect(t, deadline);
		follow_detach_loose(deadline);
	}
}

/* Is every lingering thread in uninterruptible sleep (D)?  Then none
 * will stop soon (a vfork parent waits for its child's exec or exit):
 * no use waiting for them. */
static bool
lingering_all_blocked(void)
{
	for (size_t i = 0; i < nlingering; i++) {
		char state = 0;
		if (ptrace_thread_info(lingering[i], lingering[i], &state, NULL, 0) == 0 &&
		    state != 'D')
			return false;
	}
	return true;
}

size_t
ptrace_release_lingering(int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? UINT64_MAX :
			    monotonic_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		for (size_t i = 0; i < nlingering;) {
			pid_t tid = lingering[i];
			int st;
			pid_t r = waitpid(tid, &st, WNOHANG | __WALL);
			if (r == tid && WIFSTOPPED(st) &&
			    ptrace(PTRACE_DETACH, tid, 0L, (st >> 16) == 0 ? (long)WSTOPSIG(st) : 0L) < 0 &&
			    errno != ESRCH) {
				i++;
				continue;
			}
			if (r == tid || (r < 0 && errno == ECHILD)) {
				/* Let go, exited, or no longer ours. */
				lingering[i] = lingering[--nlingering];
				continue;
			}
			i++;
		}
		held_update();
		if (nlingering == 0 || monotonic_ns() >= deadline || lingering_all_blocked())
			return nlingering;
		tracee_sleep(deadline, 0);
	}
}

void
ptrace_forget_after_fork(void)
{
	/* The child is nobody's tracer: none of this is its own. */
	nlingering = 0;
	follow_forget();
	for (struct ptrace_target *t = registry; t; t = t->next) {
		t->detached = true;
		for (size_t i = 0; i < t->nthreads; i++)
			t->threads[i].state = TRACEE_GONE;
	}
	watchdog_forget();
	held_update();
}

void
ptrace_target_release(struct ptrace_target *t)
{
	if (!t)
		return;
	ptrace_target_detach(t);
	registry_remove(t);
	late_free(t);
	free(t->threads);
	free(t);
}

int
ptrace_linger_until_exit(pid_t writer, int poll_ms, int *status)
{
	for (;;) {
		pid_t r = waitpid(writer, status, WNOHANG);
		if (r == writer)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (ptrace_release_lingering(poll_ms) == 0) {
			/* Nothing left to release: only the writer to wait for. */
			while ((r = waitpid(writer, status, 0)) < 0 && errno == EINTR)
				;
			return r == writer ? 0 : -errno;
		}
	}
}
