/* ptrace/follow.c - following the processes and threads a tracee creates
 * (ATTACH_FOLLOW: stackspy --subprocesses).
 *
 * With PTRACE_O_TRACEFORK, _TRACEVFORK and _TRACECLONE the kernel attaches
 * every child a tracee creates before it runs an instruction, and reports
 * it twice: the parent stops with PTRACE_EVENT_FORK, _VFORK or _CLONE (the
 * new tid in PTRACE_GETEVENTMSG), and the child stops once at its start
 * (PTRACE_EVENT_STOP).  The two reports come in either order.  Whichever
 * is seen first adopts the child:
 *
 *   - a new process becomes a registered target of its own at once
 *     (targets never move, so no pointer a caller holds is invalidated),
 *     announced to the caller by ptrace_target_next_new();
 *   - a new thread of a process we follow cannot be added to its target
 *     there (the thread array may move under a caller that holds a
 *     pointer into it): it is kept here, "loose", until the target's next
 *     rescan lists it, and released by the detach if that comes first.
 *
 * Nothing auto-attached is ever left traced: the detach walks loose
 * threads and the targets created here like any other.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "base/base.h"
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"

struct loose_thread {
	pid_t tid;
	pid_t tgid;
};

static struct loose_thread *loose;
static size_t nloose, loose_cap;

bool
ptrace_follow_active(void)
{
	return nloose > 0 || ptrace_registry_following() > 0;
}

size_t
ptrace_follow_loose_count(void)
{
	return nloose;
}

/* The registry counts loose threads among those we hold. */
static void
loose_changed(void)
{
	ptrace_registry_set_loose(nloose);
}

static ssize_t
loose_index(pid_t tid)
{
	for (size_t i = 0; i < nloose; i++)
		if (loose[i].tid == tid)
			return (ssize_t)i;
	return -1;
}

bool
ptrace_follow_take_loose(pid_t tgid, pid_t tid)
{
	ssize_t i = loose_index(tid);
	if (i < 0 || loose[i].tgid != tgid)
		return false;
	loose[i] = loose[--nloose];
	loose_changed();
	return true;
}

static void
loose_add(pid_t tid, pid_t tgid)
{
	if (loose_index(tid) >= 0)
		return;
	if (BASE_GROW(loose, loose_cap, nloose + 1, 16) < 0) {
		/* Cannot keep it: let it go now rather than lose it
		 * traced.  It is in its first stop, or will be. */
		int st;
		if (ptrace_tracee_wait(tid, &st, 100) == 1 && WIFSTOPPED(st))
			ptrace(PTRACE_DETACH, tid, 0L, trace_signal(st));
		return;
	}
	loose[nloose].tid = tid;
	loose[nloose].tgid = tgid;
	nloose++;
	loose_changed();
}

/* Make tid (auto-attached, created by a tracee of parent) ours: a target
 * of its own for a process, a loose thread for a thread.  Returns the new
 * target, or NULL (a thread, known already, or gone). */
static struct ptrace_target *
adopt(pid_t tid, bool is_process, const struct ptrace_target *parent)
{
	struct ptrace_target *owner;
	struct tracee *known = ptrace_registry_find(NULL, tid, &owner);
	if ((known && known->state != TRACEE_GONE) || loose_index(tid) >= 0)
		return NULL;
	pid_t tgid = tid;
	if (!is_process && ptrace_thread_tgid(tid, &tgid) < 0)
		return NULL;  /* gone already: its exit is reaped as unknown */
	if (tgid != tid) {
		loose_add(tid, tgid);
		return NULL;
	}
	struct ptrace_target *t = ptrace_registry_new(tid, parent ? parent->flags :
					       ATTACH_FOLLOW | ATTACH_EXEC);
	if (!t) {
		loose_add(tid, tid);  /* released by the detach */
		return NULL;
	}
	t->parent = parent ? parent->pid : 0;
	t->followed = true;
	ptrace_target_fill_new_process(t);
	return t;
}

void
ptrace_follow_event(struct ptrace_target *owner, pid_t tid, int st)
{
	int ev = trace_event(st);
	if (ev != PTRACE_EVENT_FORK && ev != PTRACE_EVENT_VFORK && ev != PTRACE_EVENT_CLONE)
		return;
	unsigned long msg = 0;
	if (ptrace(PTRACE_GETEVENTMSG, tid, 0L, &msg) < 0 || msg == 0)
		return;
	adopt((pid_t)msg, ev != PTRACE_EVENT_CLONE, owner);
}

bool
ptrace_follow_unknown_stop(pid_t tid, int st)
{
	if (!ptrace_follow_active() || !WIFSTOPPED(st))
		return false;
	ssize_t i = loose_index(tid);
	if (i < 0) {
		/* The child's first stop came before its parent's report. */
		pid_t tgid;
		if (ptrace_thread_tgid(tid, &tgid) < 0)
			return false;
		struct ptrace_target *parent = NULL;
		if (tgid == tid) {
			long ppid = 0;
			ptrace_procfs_status_field(tid, "PPid", &ppid);
			struct tracee *pth = ptrace_registry_find(NULL, (pid_t)ppid, &parent);
			if (!pth || !(parent->flags & ATTACH_FOLLOW)) {
				/* Not a child of ours (a tracee we gave up on
				 * stops like this too): not adopted. */
				return false;
			}
		} else {
			struct ptrace_target *t;
			if (!ptrace_registry_find(NULL, tgid, &t) || !(t->flags & ATTACH_FOLLOW))
				return false;
		}
		struct ptrace_target *t = adopt(tid, tgid == tid, parent);
		if (t) {
			/* Its tracee is listed now: resume it the usual way. */
			ptrace_tracee_resume(&t->threads[0], st);
			return true;
		}
		if (loose_index(tid) < 0)
			return false;
	}
	/* A loose thread: its first stop, or a signal on its way in. */
	ptrace(PTRACE_CONT, tid, 0L, trace_signal(st));
	return true;
}

void
ptrace_follow_gone(pid_t tid)
{
	ssize_t i = loose_index(tid);
	if (i >= 0) {
		loose[i] = loose[--nloose];
		loose_changed();
	}
}

void
ptrace_follow_detach_loose(uint64_t deadline)
{
	for (size_t i = 0; i < nloose; i++)
		ptrace(PTRACE_INTERRUPT, loose[i].tid, 0L, 0L);
	while (nloose) {
		pid_t tid = loose[nloose - 1].tid;
		nloose--;
		for (;;) {
			uint64_t now = ptrace_clock_monotonic_ns();
			int ms = ms_until(deadline, now);
			int st;
			if (ptrace_tracee_wait(tid, &st, ms) <= 0) {
				ptrace_linger_add(tid);
				break;
			}
			if (!WIFSTOPPED(st))
				break;
			/* A thread that forked on its way to our stop: its
			 * child is ours too, and is let go with the rest. */
			ptrace_follow_event(NULL, tid, st);
			if (ptrace(PTRACE_DETACH, tid, 0L,
				   trace_signal(st)) == 0 || errno == ESRCH)
				break;
		}
		loose_changed();
	}
}

struct ptrace_target *
ptrace_target_next_new(void)
{
	return ptrace_registry_next_unannounced();
}

void
ptrace_follow_forget(void)
{
	nloose = 0;
	loose_changed();
}

void
ptrace_tracee_event(struct ptrace_target *t, pid_t tid, int st)
{
	if (trace_event(st) != PTRACE_EVENT_EXEC) {
		ptrace_follow_event(t, tid, st);
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
	struct tracee *old = ptrace_target_find(t, (pid_t)former);
	if (old)
		old->state = TRACEE_GONE;
}
