/* ptrace/attach.c - seize every thread of a process, keep the list up to
 * date (rescan, prune), attach again after a detach.
 *
 * Rules (DESIGN.md "ptrace rules"): PTRACE_SEIZE only, never
 * PTRACE_O_EXITKILL, so that a SIGKILLed stackspy leaves its tracees running
 * (the kernel detaches seized tracees when the tracer dies).  A signal that
 * stops a tracee on its way in is re-injected.  A group-stop (kill -STOP) is
 * kept with PTRACE_LISTEN and left in place at detach (wait.c, detach.c).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"

#define PF_KTHREAD 0x00200000  /* /proc/PID/stat flags: a kernel thread */

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
	struct proc_stat ps;
	if (ptrace_procfs_read(path, buf, sizeof(buf)) < 0 || ptrace_proc_stat_parse(buf, &ps) < 0)
		return -ESRCH;
	if (ps.flags & PF_KTHREAD) {
		snprintf(why, len, "it is a kernel thread (%.*s); kernel threads have no user-space stack",
			 (int)ps.comm_len, ps.comm);
		return -EINVAL;
	}
	if (ps.state == 'Z' || ps.state == 'X') {
		/* A leader that called pthread_exit is a zombie while its other
		 * threads run: that process is still worth a dump. */
		pid_t *tids = NULL;
		int n = ptrace_procfs_list_tasks(pid, &tids);
		int live = 0;
		for (int i = 0; i < n; i++) {
			char ts;
			if (ptrace_thread_info(pid, tids[i], &ts, NULL, 0) == 0 && ts != 'Z' && ts != 'X')
				live++;
		}
		free(tids);
		if (live == 0) {
			snprintf(why, len, "it is a zombie (it has exited and its parent %d has not reaped it yet)",
				 ps.ppid);
			return -EINVAL;
		}
	}
	return 0;
}

/* The index of the first of t->threads[0, n) (sorted by tid) whose tid
 * is not below tid. */
static size_t
threads_lower_bound(const struct ptrace_target *t, size_t n, pid_t tid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct tracee *
ptrace_target_thread(const struct ptrace_target *t, pid_t tid)
{
	size_t i = threads_lower_bound(t, t->nthreads, tid);
	return i < t->nthreads && t->threads[i].tid == tid ? &t->threads[i] : NULL;
}

/* t->threads[0, sorted) is sorted by tid (rescan keeps it so); entries
 * after it were appended by the current pass, in the ascending order of
 * its listing (ptrace_procfs_list_tasks sorts it), so a tid listed twice
 * (a thread that exits moves the others' positions in /proc's listing
 * between two reads of it) is the last one appended.  A record rescans
 * every tick, and an attach to 1000 threads searched the appended ones
 * linearly: half a million compares, a tenth of the attach. */
static bool
target_has(const struct ptrace_target *t, size_t sorted, pid_t tid)
{
	size_t lo = threads_lower_bound(t, sorted, tid);
	if (lo < sorted && t->threads[lo].tid == tid)
		return true;
	return t->nthreads > sorted && t->threads[t->nthreads - 1].tid == tid;
}

static int
cmp_tracee(const void *a, const void *b)
{
	pid_t x = ((const struct tracee *)a)->tid, y = ((const struct tracee *)b)->tid;
	return (x > y) - (x < y);
}

/* The PTRACE_O_* options that flags (ATTACH_*) ask for.  Never
 * PTRACE_O_EXITKILL (see the top of this file). */
static unsigned long
seize_options(unsigned flags)
{
	unsigned long o = 0;
	if (flags & ATTACH_EXEC)
		o |= PTRACE_O_TRACEEXEC;
	if (flags & ATTACH_FOLLOW)
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

/* PTRACE_SEIZE of thread tid of t said EPERM.  Another tracer's thread
 * gets that, and so does one whose exit has begun: a process that creates
 * and joins 60,000 threads a second has such threads at most rescans, and
 * they were reported as held by another tracer, the record's exit 1
 * (tests/record-churn.test).  Returns 0 if it is seized after all (the
 * tracer that held it let go), ESRCH if it is exiting or gone, or EPERM
 * (*tracer: the tracer that holds it, 0 if none). */
static int
seize_refused(struct ptrace_target *t, pid_t tid, pid_t *tracer)
{
	for (int tries = 0;; tries++) {
		enum eperm_thread why = ptrace_eperm_thread(t->pid, tid, tracer);
		if (why == EPERM_THREAD_EXITING)
			return ESRCH;
		if (why == EPERM_THREAD_TRACED || tries > 0)
			return EPERM;
		if (ptrace(PTRACE_SEIZE, tid, 0L, (long)seize_options(t->flags)) == 0)
			return 0;
		if (errno != EPERM)
			return errno;
	}
}

/* Seize one thread; taskfd: /proc/PID/task open, or -1.  Returns 1 if
 * added, 0 if it was gone or a zombie, negative errno on failure. */
static int
seize_thread(struct ptrace_target *t, pid_t tid, int taskfd)
{
	char state = '?';
	char name[64] = "";
	bool lazy = t->flags & ATTACH_NO_PROCINFO;
	/* State and name before we touch it: afterwards every thread looks
	 * traced. */
	if (!lazy && thread_info(t, tid, taskfd, &state, name, sizeof(name)) < 0)
		return 0;
	struct tracee *th = ptrace_target_add(t, tid);
	if (!th)
		return -ENOMEM;
	/* Never PTRACE_O_EXITKILL (see the top of this file). */
	int seize_err = 0;
	if (lazy) {
		if (ptrace(PTRACE_SEIZE, tid, 0L, (long)seize_options(t->flags)) == 0) {
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
	if (state == 'D' && (t->flags & ATTACH_SKIP_DSTATE)) {
		/* dump reads it unstopped (ptrace_snapshot_blocked): seized, it
		 * would keep an interrupt pending and cost the detach timeout. */
		th->state = TRACEE_GONE;
		return 1;
	}
	if (!lazy && ptrace(PTRACE_SEIZE, tid, 0L, (long)seize_options(t->flags)) < 0)
		seize_err = errno;
	pid_t tracer = 0;
	if (seize_err == EPERM && (tid != t->pid || t->nthreads > 1))
		seize_err = seize_refused(t, tid, &tracer);
	if (seize_err) {
		int e = seize_err;
		if (e == EPERM && (tid != t->pid || t->nthreads > 1)) {
			/* One thread of a process we could attach: another
			 * tracer (strace -p TID) holds it.  List it with the
			 * reason rather than leave it out silently. */
			th->state = TRACEE_GONE;
			th->attach_error = -EPERM;
			th->tracer = tracer;
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
		if (ptrace_tracee_wait(tid, &st, 100) == 1)
			ptrace_tracee_resume(th, st);
	}
	return 1;
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
		int sr = ptrace_procfs_start_time(t->pid, &st);
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
		int n = ptrace_procfs_list_tasks(t->pid, &tids);
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
			int r = ptrace_follow_take_loose(t->pid, tids[i]) ?
				ptrace_registry_adopt_thread(t, tids[i]) :
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
ptrace_target_attach(pid_t pid, unsigned flags, int *err)
{
	int r = ptrace_sigchld_setup();
	if (r < 0) {
		*err = r;
		return NULL;
	}
	struct ptrace_target *t = ptrace_registry_new(pid, flags);
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	ptrace_procfs_start_time(pid, &t->start_time);
	/* The leader first: its failure (EPERM) is the process's failure. */
	r = seize_thread(t, pid, -1);
	if (r >= 0)
		r = ptrace_target_rescan(t);
	if (r >= 0 && t->nthreads == 0)
		r = -ESRCH;
	if (r == -EPERM && ptrace_procfs_tracer(pid, pid) == getpid())
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
	int r = ptrace_procfs_start_time(t->pid, &st);
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
	ptrace_held_update();
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
