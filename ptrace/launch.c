/* ptrace/launch.c - run a command as a traced child (stackspy record --
 * CMD): it is seized before its exec, so that its first instruction is
 * already ours to sample. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptrace/ptrace-internal.h"

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
		tracee_resume(th, st);
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
 * (monotonic_ns) passes.  Returns child_reap's answer. */
static int
child_wait(struct ptrace_target *t, uint64_t deadline)
{
	int r;
	while ((r = child_reap(t, false)) == 0) {
		uint64_t now = monotonic_ns();
		if (now >= deadline)
			break;
		/* Its exit sends SIGCHLD: wake then, or every 20 ms (SIGCHLD
		 * is not ours to read where ptrace/ never attached). */
		tracee_sleep(deadline - now > 20000000u ? now + 20000000u : deadline, t->pid);
	}
	return r;
}

int
ptrace_child_wait(struct ptrace_target *t, int ms, int *status)
{
	if (!t || !t->launched)
		return 0;
	if (t->detached && !t->leader_exited)
		child_wait(t, monotonic_ns() + (uint64_t)ms * 1000000u);
	return ptrace_child_status(t, status);
}

int
ptrace_child_end(struct ptrace_target *t, int grace_ms, int *status, bool *killed)
{
	*killed = false;
	if (!t || !t->launched)
		return -EINVAL;
	if (ptrace_child_status(t, status))
		return 0;
	/* A traced command would take SIGTERM into a signal-delivery-stop
	 * that nobody hands on any more. */
	if (!t->detached)
		return -EBUSY;
	if (kill(t->pid, SIGTERM) < 0 && errno != ESRCH)
		return -errno;
	/* A stopped command (kill -STOP, Ctrl-Z) could not act on it. */
	kill(t->pid, SIGCONT);
	int r = child_wait(t, monotonic_ns() + (uint64_t)grace_ms * 1000000u);
	if (r == 0) {
		if (kill(t->pid, SIGKILL) < 0 && errno != ESRCH)
			return -errno;
		*killed = true;
		r = child_reap(t, true);
	}
	if (r < 0)
		return r;
	*status = t->leader_status;
	return 1;
}
