/* ptrace/launch.c - run a command as a traced child (stackspy record --
 * CMD): it is seized before its exec, so that its first instruction is
 * already ours to sample. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "ptrace/clock.h"
#include "ptrace/launch.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"

static pid_t
wait_child(pid_t child, int *st, int flags)
{
	pid_t w;
	do
		w = waitpid(child, st, flags);
	while (w < 0 && errno == EINTR);
	return w;
}

/* The child waits on the go pipe until it is seized, then execs; a second,
 * close-on-exec pipe carries exec's errno back. */
static void
child_run(char *const argv[], int go, int err, pid_t tracer, bool end_with_tracer)
	__attribute__((noreturn));

static void
child_run(char *const argv[], int go, int err, pid_t tracer, bool end_with_tracer)
{
	char c;
	/* Our signal dispositions and mask are not the command's. */
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* A tracer that dies without ending us (SIGKILL) still must not
	 * leave us running; the kernel detaches us first.  The check after
	 * it: the tracer may have died before it. */
	if (end_with_tracer &&
	    (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != tracer))
		_exit(127);
	if (read(go, &c, 1) != 1)
		_exit(127);
	execvp(argv[0], argv);
	int e = errno;
	if (write(err, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

struct ptrace_target *
ptrace_launch(char *const argv[], unsigned flags, int *err, bool *exec_failed)
{
	int go[2], ep[2];
	bool end_with_tracer = flags & ATTACH_END_WITH_TRACER;
	flags &= ~(unsigned)ATTACH_END_WITH_TRACER;
	pid_t tracer = getpid();
	*exec_failed = false;
	if (pipe2(go, O_CLOEXEC) < 0) {
		*err = -errno;
		return NULL;
	}
	if (pipe2(ep, O_CLOEXEC) < 0) {
		*err = -errno;
		close(go[0]);
		close(go[1]);
		return NULL;
	}
	pid_t child = fork();
	if (child < 0) {
		*err = -errno;
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return NULL;
	}
	if (child == 0) {
		close(go[1]);
		close(ep[0]);
		child_run(argv, go[0], ep[1], tracer, end_with_tracer);
	}
	close(go[0]);
	close(ep[1]);
	/* ATTACH_EXEC stops it at the exec, before the new program's
	 * first instruction. */
	struct ptrace_target *t = ptrace_target_attach(child, flags | ATTACH_EXEC, err);
	if (!t) {
		close(go[1]);
		close(ep[0]);
		kill(child, SIGKILL);
		wait_child(child, NULL, 0);
		return NULL;
	}
	t->launched = true;
	if (write(go[1], "x", 1) != 1) {
		/* the child is gone; seen below */
	}
	close(go[1]);
	int e = 0;
	ssize_t got = read(ep[0], &e, sizeof(e));
	close(ep[0]);
	if (got == (ssize_t)sizeof(e)) {
		ptrace_target_release(t);
		wait_child(child, NULL, 0);
		*exec_failed = true;
		*err = -e;
		return NULL;
	}
	/* The exec happened (the pipe closed on it): take its stop now, so
	 * the maps the caller reads are the new program's. */
	struct tracee *th = &t->threads[0];
	for (;;) {
		int st;
		pid_t w = wait_child(child, &st, __WALL);
		if (w < 0 || !WIFSTOPPED(st)) {
			th->state = TRACEE_GONE;
			if (w == child) {
				t->leader_exited = true;
				t->leader_status = st;
			}
			break;
		}
		bool exec_stop = trace_event(st) == PTRACE_EVENT_EXEC;
		ptrace_tracee_resume(th, st);
		if (exec_stop)
			break;
	}
	/* The thread was named before the exec, after us ("stackspy"):
	 * --threads roots must carry the command's name
	 * (tests/record-threads.test). */
	for (size_t i = 0; i < t->nthreads; i++)
		ptrace_thread_info(child, t->threads[i].tid, NULL, t->threads[i].name,
				   sizeof(t->threads[i].name));
	return t;
}

/* Reap the launched command if it has exited (block: wait until it has).
 * If its leader is a thread a detach gave up on, it is still seized, and
 * its late stop may come here first: let it go with its signal.  Returns 1 with
 * the status noted in t, 0 while it runs, or a negative errno. */
static int
child_reap(struct ptrace_target *t, bool block)
{
	for (;;) {
		int st;
		pid_t w = waitpid(t->pid, &st, block ? 0 : WNOHANG);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0) {
			/* Its other threads that are still seized: a stop of
			 * theirs must not keep the command from ending.  (After
			 * our waitpid: it would reap the leader too, if it was
			 * one of them, and lose its status; -ECHILD then.) */
			ptrace_release_lingering(0);
			return 0;
		}
		if (WIFSTOPPED(st)) {
			ptrace(PTRACE_DETACH, t->pid, 0L, trace_signal(st));
			continue;
		}
		t->leader_exited = true;
		t->leader_status = st;
		return 1;
	}
}

int
ptrace_child_status(struct ptrace_target *t, int *status)
{
	if (!t || !t->launched)
		return 0;
	/* No longer traced: an ordinary child, reaped here.  While it is
	 * traced its exit comes through ptrace_target_poll(). */
	if (!t->leader_exited && t->detached)
		child_reap(t, false);
	if (!t->leader_exited)
		return 0;
	*status = t->leader_status;
	return 1;
}

/* Wait until the launched command (detached) exits or deadline
 * (ptrace_clock_monotonic_ns) passes.  Returns child_reap's answer. */
static int
child_wait(struct ptrace_target *t, uint64_t deadline)
{
	int r;
	while ((r = child_reap(t, false)) == 0) {
		uint64_t now = ptrace_clock_monotonic_ns();
		if (now >= deadline)
			break;
		/* Its exit sends SIGCHLD: wake then, or every 20 ms (SIGCHLD
		 * is not ours to read where ptrace/ never attached). */
		ptrace_tracee_sleep(deadline - now > 20000000u ? now + 20000000u : deadline,
				    t->pid);
	}
	return r;
}

int
ptrace_child_wait(struct ptrace_target *t, int ms, int *status)
{
	if (!t || !t->launched)
		return 0;
	if (t->detached && !t->leader_exited)
		child_wait(t, ptrace_clock_monotonic_ns() + (uint64_t)ms * NS_PER_MS);
	return ptrace_child_status(t, status);
}

/* ---- the command's process tree ------------------------------------------- */

/* A process of the command's tree, by its identity (pid and start time:
 * a pid reused by another process after it ended is never signalled). */
struct tree_proc {
	pid_t pid;
	unsigned long long start;
};

static void
tree_add(struct tree_proc **v, size_t *n, size_t *cap, pid_t pid)
{
	unsigned long long start = 0;
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].pid == pid)
			return;
	if (ptrace_procfs_start_time(pid, &start) < 0 || !start)
		return;
	if (BASE_GROW(*v, *cap, *n + 1, 16) < 0)
		return;
	(*v)[(*n)++] = (struct tree_proc){ pid, start };
}

/* The command's descendants now, and every process followed from it
 * (a worker that double-forked away is no descendant any more).  The
 * command itself is not in it. */
static size_t
tree_collect(struct ptrace_target *t, struct tree_proc **out)
{
	struct tree_proc *v = NULL;
	size_t n = 0, cap = 0;
	pid_t *d = NULL;
	int nd = ptrace_descendants(t->pid, &d);
	for (int i = 0; i < nd; i++)
		tree_add(&v, &n, &cap, d[i]);
	free(d);
	for (struct ptrace_target *f = ptrace_registry_head(); f; f = f->next)
		if (f->followed && !f->gone && f->pid != t->pid)
			tree_add(&v, &n, &cap, f->pid);
	*out = v;
	return n;
}

/* Is it the same process still, and not yet ended (a zombie has)? */
static bool
tree_alive(const struct tree_proc *p)
{
	char path[64], buf[1024];
	struct proc_stat ps;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
	return ptrace_procfs_read(path, buf, sizeof(buf)) >= 0 &&
	       ptrace_proc_stat_parse(buf, &ps) == 0 &&
	       ps.start_time == p->start && ps.state != 'Z' && ps.state != 'X';
}

/* sig to each process of v still alive; returns how many were. */
static size_t
tree_signal(const struct tree_proc *v, size_t n, int sig)
{
	size_t alive = 0;
	for (size_t i = 0; i < n; i++) {
		if (!tree_alive(&v[i]))
			continue;
		alive++;
		kill(v[i].pid, sig);
		/* A stopped one (kill -STOP, Ctrl-Z) could not act on it. */
		if (sig == SIGTERM)
			kill(v[i].pid, SIGCONT);
	}
	return alive;
}

/* Wait until no process of v is alive or deadline passes. */
static void
tree_wait(const struct tree_proc *v, size_t n, uint64_t deadline)
{
	for (;;) {
		bool any = false;
		for (size_t i = 0; i < n && !any; i++)
			any = tree_alive(&v[i]);
		uint64_t now = ptrace_clock_monotonic_ns();
		if (!any || now >= deadline)
			return;
		/* Not our children (the command's): no SIGCHLD to wake us. */
		struct timespec ts = ns_to_timespec(10 * NS_PER_MS);
		nanosleep(&ts, NULL);
	}
}

int
ptrace_child_end(struct ptrace_target *t, int grace_ms, int *status, bool *killed)
{
	*killed = false;
	if (!t || !t->launched)
		return -EINVAL;
	/* Its tree, before the command itself may exit and its children
	 * move to init. */
	struct tree_proc *tree = NULL;
	size_t ntree = tree_collect(t, &tree);
	if (ptrace_child_status(t, status)) {
		/* Exited: what it left running ends all the same. */
		if (tree_signal(tree, ntree, SIGTERM)) {
			tree_wait(tree, ntree,
				  ptrace_clock_monotonic_ns() + (uint64_t)grace_ms * NS_PER_MS);
			*killed = tree_signal(tree, ntree, SIGKILL) > 0;
		}
		free(tree);
		return 0;
	}
	/* A traced command would take SIGTERM into a signal-delivery-stop
	 * that nobody hands on any more. */
	if (!t->detached) {
		free(tree);
		return -EBUSY;
	}
	if (kill(t->pid, SIGTERM) < 0 && errno != ESRCH) {
		int e = errno;
		free(tree);
		return -e;
	}
	/* A stopped command (kill -STOP, Ctrl-Z) could not act on it. */
	kill(t->pid, SIGCONT);
	tree_signal(tree, ntree, SIGTERM);
	uint64_t deadline = ptrace_clock_monotonic_ns() + (uint64_t)grace_ms * NS_PER_MS;
	int r = child_wait(t, deadline);
	tree_wait(tree, ntree, deadline);
	if (tree_signal(tree, ntree, SIGKILL))
		*killed = true;
	if (r == 0) {
		if (kill(t->pid, SIGKILL) < 0 && errno != ESRCH) {
			int e = errno;
			free(tree);
			return -e;
		}
		*killed = true;
		r = child_reap(t, true);
	}
	free(tree);
	if (r < 0)
		return r;
	*status = t->leader_status;
	return 1;
}
