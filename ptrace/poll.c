/* ptrace/poll.c - the stops nobody waits for: events of every tracee
 * (waitpid(-1)), handled between samples and ticks.  A stop is resumed
 * (wait.c), a new child adopted (follow.c), a late sample taken
 * (sample.c), a thread the detach gave up on let go (lingering).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"
#include "ptrace/watchdog.h"

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
	/* Events handled: progress (watchdog.c). */
	ptrace_watchdog_alive(0);
	bool pending = ptrace_sigchld_drain();
	if (!pending && (++calls % 64) != 0)
		return;
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG | __WALL);
		if (r <= 0)
			return;
		struct ptrace_target *owner;
		struct tracee *th = ptrace_registry_find(t, r, &owner);
		if ((!th || th->state == TRACEE_GONE) && !ptrace_linger_has(r) &&
		    ptrace_follow_unknown_stop(r, st))
			continue;  /* a new child, adopted (follow.c) */
		if (!th && !WIFSTOPPED(st))
			ptrace_follow_gone(r);
		if (!th || th->state == TRACEE_GONE) {
			/* A thread we gave up on (it did not stop in time at
			 * detach, e.g. in uninterruptible sleep) whose stop
			 * came later: let it go, with its signal. */
			if (WIFSTOPPED(st))
				ptrace(PTRACE_DETACH, r, 0L, trace_signal(st));
			if (ptrace_linger_count()) {
				ptrace_linger_remove(r);
				ptrace_held_update();
			}
			if (!th || WIFSTOPPED(st))
				continue;
		}
		if (!th)
			continue;
		ptrace_answer_status(owner, th, st);
	}
}

void
ptrace_answer_status(struct ptrace_target *owner, struct tracee *th, int st)
{
	if (!WIFSTOPPED(st)) {
		th->state = TRACEE_GONE;
		if (th->tid == owner->pid) {
			owner->leader_exited = true;
			owner->leader_status = st;
		}
		return;
	}
	ptrace_tracee_event(owner, th->tid, st);
	th->interrupted_ns = 0;  /* no batch takes this stop */
	if (th->late && trace_stop_of(st) != TRACE_SIGNAL) {
		/* The stop a sample's interrupt asked for, late. */
		th->late = false;
		if (!poll_from_yield && trace_stop_of(st) == TRACE_TRAP &&
		    ptrace_sample_late(owner, th, st))
			return;
	}
	/* A listening tracee whose group-stop was ended by SIGCONT
	 * reports an event-stop with SIGTRAP: resume() runs it again. */
	ptrace_tracee_resume(th, st);
}

void
ptrace_poll_all(void)
{
	if (ptrace_registry_head() || ptrace_linger_count())
		ptrace_target_poll(NULL);
}

void
ptrace_poll_all_from_yield(void)
{
	poll_from_yield = true;
	ptrace_poll_all();
	poll_from_yield = false;
}
