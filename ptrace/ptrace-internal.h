/* ptrace/ptrace-internal.h - private to ptrace/.
 *
 * The files of ptrace/, each calling only those listed after it:
 *   launch.c    a command started traced (seized before its exec)
 *   sample.c    registers and a stack copy, late samples
 *   poll.c      the stops nobody waits for (waitpid(-1))
 *   attach.c    seize, rescan, prune, reattach
 *   detach.c    letting go, lingering threads
 *   follow.c    children of tracees; exec events (ptrace_tracee_event)
 *   wait.c      SIGCHLD, waits, resuming a stop (trace_stop_of)
 *   registry.c  targets, lingering threads, the held count
 *   watchdog.c  the process that ends a stuck or stopped tracer
 *   procfs.c, proctree.c, eperm.c   /proc
 *   clock.c     the clock
 * (launch.c and attach.c release what they could not finish through
 * detach.c; poll.c hands late stops to sample.c.)
 */
#ifndef STACKSPY_PTRACE_INTERNAL_H
#define STACKSPY_PTRACE_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "ptrace/ptrace.h"

/* ---- wait statuses ------------------------------------------------------
 * What a wait status of a tracee (waitpid with __WALL, the tracee seized)
 * says, classified once. */
enum trace_stop {
	TRACE_GONE,               /* exited or killed */
	TRACE_SIGNAL,             /* signal-delivery-stop: its signal is handed
				     on at resume or detach */
	TRACE_GROUP_STOP,         /* PTRACE_EVENT_STOP with a stop signal
				     (kill -STOP, SIGTSTP ...): kept with
				     PTRACE_LISTEN, left in place at detach */
	TRACE_TRAP,               /* PTRACE_EVENT_STOP with SIGTRAP: our
				     PTRACE_INTERRUPT, a new child's first
				     stop, or a listening tracee's SIGCONT */
	TRACE_EVENT,              /* another PTRACE_EVENT_* (fork, vfork,
				     clone, exec ...): trace_event() says which */
};

/* The PTRACE_EVENT_* of a stop (0: a signal-delivery-stop). */
static inline int
trace_event(int st)
{
	return (st >> 16) & 0xff;
}

static inline enum trace_stop
trace_stop_of(int st)
{
	if (!WIFSTOPPED(st))
		return TRACE_GONE;
	switch (trace_event(st)) {
	case 0:
		return TRACE_SIGNAL;
	case PTRACE_EVENT_STOP:
		switch (WSTOPSIG(st)) {
		case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
			return TRACE_GROUP_STOP;
		default:
			return TRACE_TRAP;
		}
	default:
		return TRACE_EVENT;
	}
}

/* The signal to hand back when resuming or detaching from stop st: that
 * of a signal-delivery-stop (a signal on its way in), else none. */
static inline long
trace_signal(int st)
{
	return trace_stop_of(st) == TRACE_SIGNAL ? (long)WSTOPSIG(st) : 0L;
}

/* ---- procfs.c ------------------------------------------------------------ */
/* Read a small /proc file into buf (NUL-terminated).  Returns the length or
 * a negative errno. */
ssize_t ptrace_procfs_read(const char *path, char *buf, size_t len);

/* ptrace_proc_status_text() of /proc/PID/status read as a decimal long.
 * Returns 0 or -ENOENT (no such line, or no such process). */
int ptrace_procfs_status_field(pid_t pid, const char *key, long *val);

/* Thread IDs in /proc/PID/task.  *out is malloc'd.  Returns the count or a
 * negative errno (-ESRCH when the process is gone). */
int ptrace_procfs_list_tasks(pid_t pid, pid_t **out);
/* Field 22 of /proc/PID/stat (start time in clock ticks since boot): with
 * the pid, the identity of a process.  Returns 0 with *out set (0 when
 * the line cannot be parsed), -ESRCH when there is no such process, or
 * another negative errno (e.g. -EMFILE: no verdict). */
int ptrace_procfs_start_time(pid_t pid, unsigned long long *out);
/* The TracerPid of thread tid of pid, 0 if none or unknown. */
pid_t ptrace_procfs_tracer(pid_t pid, pid_t tid);

/* ---- eperm.c ------------------------------------------------------------- */
/* Why PTRACE_SEIZE of thread tid of pid (a process we could attach) said
 * EPERM, read from its /proc status after the refusal: it is exiting or
 * gone, another tracer holds it (*tracer: its TracerPid), or neither
 * (*tracer 0: a tracer that let go since, or a security module). */
enum eperm_thread {
	EPERM_THREAD_EXITING,
	EPERM_THREAD_TRACED,
	EPERM_THREAD_UNTRACED,
};
enum eperm_thread ptrace_eperm_thread(pid_t pid, pid_t tid, pid_t *tracer);

/* Wait for a state change of tid for at most timeout_ms (negative: forever).
 * Returns 1 with *status filled, 0 on timeout, -ECHILD/-errno on error. */
int ptrace_tracee_wait(pid_t tid, int *status, int timeout_ms);
/* Can this thread wait with ptrace_tracee_wait_until (its deadline timer is
 * made, and is this thread's)? */
bool ptrace_tracee_wait_blocking_ok(void);
/* Wait for thread tid's next status with a blocking waitpid until
 * deadline_ns (CLOCK_MONOTONIC): 1 with *status, 0 at the deadline, or a
 * negative errno (-ECHILD: gone).  Only where ptrace_tracee_wait_blocking_ok. */
int ptrace_tracee_wait_until(pid_t tid, int *status, uint64_t deadline_ns);
/* After the last ptrace_tracee_wait_until of a batch: its timer disarmed. */
void ptrace_tracee_wait_until_end(void);

/* Sleep until a SIGCHLD arrives or until wake_ns (ptrace_clock_monotonic_ns(); UINT64_MAX:
 * no limit).  Returns true if a SIGCHLD read came from another child than
 * expected, i.e. some other tracee may have a status to collect (SIGCHLDs
 * coalesce, so false proves nothing). */
bool ptrace_tracee_sleep(uint64_t wake_ns, pid_t expected);

/* Stack pointer and pc from a raw NT_PRSTATUS of this host's architecture
 * (0 where it has no arch/ table). */
uint64_t ptrace_regs_stack_pointer(const unsigned char *regs, size_t len);
uint64_t ptrace_regs_pc(const unsigned char *regs, size_t len);

/* Bring tracee th back to running (or to listening when it is in group-stop)
 * after a stop that we reaped with status st.  Used by sample, poll and
 * attach.  Returns 0 or -errno. */
int ptrace_tracee_resume(struct tracee *th, int st);

/* Late samples (sample.c): take the sample of th, whose late stop (status
 * st, an interrupt's event-stop) poll reaped, resume it and hand it to
 * the target's callback.  Returns false when t has no late sampling set
 * up (the caller then only resumes th). */
bool ptrace_sample_late(struct ptrace_target *t, struct tracee *th, int st);
void ptrace_late_free(struct ptrace_target *t);

/* Thread tid of t reported an event-stop st: on PTRACE_EVENT_EXEC note it,
 * and forget the exec'ing thread's former tid (a non-leader exec); on a
 * fork, vfork or clone adopt the child (follow.c). */
void ptrace_tracee_event(struct ptrace_target *t, pid_t tid, int st);
/* Answer thread th's wait status st as a poll does (poll.c): an exit
 * marks it gone; a stop is handed on, a late sample's stop taken. */
void ptrace_answer_status(struct ptrace_target *owner, struct tracee *th, int st);

/* ---- registry.c ----------------------------------------------------------
 * ptrace_registry_new: a new target, listed; ptrace_registry_remove: unlisted (release);
 * find: the tracee tid and its target (*owner), looking in hint first (may
 * be NULL); next_unannounced: the next target created by follow.c that the
 * caller has not been given yet; head: the first target (t->next the
 * others); following: how many targets follow their children. */
struct ptrace_target *ptrace_registry_new(pid_t pid, unsigned flags);
void ptrace_registry_remove(struct ptrace_target *t);
struct tracee *ptrace_registry_find(struct ptrace_target *hint, pid_t tid,
			     struct ptrace_target **owner);
struct ptrace_target *ptrace_registry_next_unannounced(void);
struct ptrace_target *ptrace_registry_head(void);
size_t ptrace_registry_following(void);
/* Thread tid of t, or NULL; a new entry for tid (NULL: out of memory). */
struct tracee *ptrace_target_find(struct ptrace_target *t, pid_t tid);
struct tracee *ptrace_target_add(struct ptrace_target *t, pid_t tid);
/* A thread the kernel attached for us (follow.c): listed, running.
 * Returns 1, or -ENOMEM. */
int ptrace_registry_adopt_thread(struct ptrace_target *t, pid_t tid);
/* A new process the kernel attached for us: its start time and its one
 * thread, running. */
void ptrace_target_fill_new_process(struct ptrace_target *t);
/* Threads still seized after the detach gave up on them. */
void ptrace_linger_add(pid_t tid);
bool ptrace_linger_has(pid_t tid);
void ptrace_linger_remove(pid_t tid);
size_t ptrace_linger_count(void);
pid_t ptrace_linger_at(size_t i);
void ptrace_linger_forget(void);
/* The held count again (targets attached, lingering and loose threads),
 * for ptrace_held_count and the watchdog; loose: follow.c's count. */
void ptrace_held_update(void);
void ptrace_registry_set_loose(size_t n);

/* ---- wait.c ---------------------------------------------------------- */
/* Block SIGCHLD and read it from a signalfd (once).  0 or -errno. */
int ptrace_sigchld_setup(void);
/* Read every SIGCHLD queued: true when one was (or one read before by a
 * wait may stand for another tracee's stop): ptrace_target_poll looks. */
bool ptrace_sigchld_drain(void);

/* ---- follow.c: children of tracees (ATTACH_FOLLOW) -------------- */
bool ptrace_follow_active(void);
size_t ptrace_follow_loose_count(void);
/* A fork, vfork or clone event-stop st of tracee tid of owner (NULL if
 * none): adopt the child. */
void ptrace_follow_event(struct ptrace_target *owner, pid_t tid, int st);
/* A stop of a tracee no target lists: a new child's first stop, adopted
 * and resumed (true), or not ours to follow (false). */
bool ptrace_follow_unknown_stop(pid_t tid, int st);
/* A thread of process tgid that the kernel attached for us and that no
 * target lists yet: true (and forgotten here) for the rescan to list it. */
bool ptrace_follow_take_loose(pid_t tgid, pid_t tid);
/* tid exited. */
void ptrace_follow_gone(pid_t tid);
/* Let every loose thread go, by deadline (ptrace_clock_monotonic_ns) or lingering. */
void ptrace_follow_detach_loose(uint64_t deadline);
void ptrace_follow_forget(void);

/* watchdog.c: tell the watchdog how many tracees (targets still attached,
 * threads still seized after a detach gave up on them) we hold. */
void ptrace_watchdog_set_busy(int n);
/* In a forked child: the watchdog watches the parent, not us; the next
 * attach starts one of our own. */
void ptrace_watchdog_forget(void);

#endif
