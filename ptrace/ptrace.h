/* ptrace/ptrace.h - ptrace/'s public entry: the targets (tracees) and
 * their lifecycle.
 *
 * ptrace/ owns every ptrace(2) and waitpid(2) call of stackspy and the one
 * registry of tracees that every exit path detaches: attach with
 * PTRACE_SEIZE to every thread of a process, take samples (registers + one
 * stack copy, the thread stopped only for that), and detach so that the
 * target is exactly as it was: running if it was running, still in
 * group-stop if it was kill -STOPped.  Nothing here exits or prints.
 *
 * It may call arch/ (register tables), base/ and libc, nothing above;
 * every module above (unwind/, sampler/, ui/, tests) may use it.
 *
 * This header: the target and its threads, attaching (attach.c), stops
 * nobody waits for (poll.c, wait.c), detaching and lingering threads
 * (detach.c, registry.c), the explanation of EPERM (eperm.c) and followed
 * children (follow.c).  The other jobs have headers of their own:
 *   ptrace/sample.h    snapshots and sampling (sample.c)
 *   ptrace/launch.h    a command started traced (launch.c)
 *   ptrace/procfs.h    what /proc says about a process or thread
 *                      (procfs.c, proctree.c)
 *   ptrace/watchdog.h  the process that ends a stuck tracer (watchdog.c)
 *   ptrace/clock.h     the clock (clock.c)
 */
#ifndef STACKSPY_PTRACE_H
#define STACKSPY_PTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum tracee_state {
	TRACEE_RUNNING,           /* seized, running */
	TRACEE_LISTENING,         /* seized, in group-stop (PTRACE_LISTEN) */
	TRACEE_GONE,              /* exited, or detached: no longer traced */
	TRACEE_HELD,              /* stopped and kept so (SAMPLE_HOLD:
				     dump --consistent) until the detach */
};

struct tracee {
	pid_t tid;
	enum tracee_state state;
	char name[64];            /* /proc/PID/task/TID/comm before attach */
	char proc_state;          /* state letter from /proc/.../stat before attach */
	int error;                /* last sampling error (negative errno), 0 if none */
	bool late;                /* SAMPLE_LATE: interrupted for a
				     sample, not stopped by the deadline; its
				     stop is sampled when it comes */
	int attach_error;         /* PTRACE_SEIZE failed (negative errno; the
				     thread is then TRACEE_GONE, never
				     sampled, and kept listed while it lives) */
	pid_t tracer;             /* with attach_error -EPERM: the TracerPid of
				     the thread (another tool traces it), 0
				     if none or unknown */
	bool released;            /* a PTRACE_DETACH of it succeeded: it is
				     not our tracee any more, and has nothing
				     left for us to reap */
	uint64_t interrupted_ns;  /* ptrace_interrupt_early: when its
				     interrupt went, for the batch that takes
				     its stop; 0 if none is pending */
	bool taken;               /* ptrace_sample_ready took that stop: the
				     batch keeps its snapshot and result */
};

/* A traced process.  Allocated and owned by ptrace/ (ptrace_target_attach,
 * ptrace_launch): its address is stable until ptrace_target_release(), and
 * it stays in the registry that ptrace_detach_all() walks until then.
 * Callers read the fields; only ptrace/ writes them.  t->threads is an
 * array that rescan may move: do not keep a struct tracee * across a call
 * to ptrace_target_rescan() or ptrace_target_prune(). */
struct ptrace_target {
	pid_t pid;
	struct tracee *threads;
	size_t nthreads;
	size_t cap;
	unsigned flags;           /* ATTACH_*: how it was attached */
	bool exec_seen;           /* a thread reported PTRACE_EVENT_EXEC since
				     the caller last cleared this */
	bool leader_exited;       /* the leader's exit status was reaped */
	int leader_status;        /* ... and this was it (wait status) */
	bool launched;            /* started by ptrace_launch(): our child */
	bool detached;            /* ptrace_target_detach() ran */
	bool gone;                /* the process is gone: /proc/PID vanished
				     or now holds another process (its start
				     time changed); rescan attaches nothing */
	unsigned long long start_time;  /* /proc/PID/stat field 22 at attach */
	size_t refused_total;     /* threads ever refused (attach_error) */
	pid_t parent;             /* followed: the process that created it */
	bool followed;            /* created by a tracee, adopted here
				     (ATTACH_FOLLOW) */
	bool announced;           /* ... and given to ptrace_target_next_new */
	struct ptrace_target *next;  /* private: the registry's list */
	struct ptrace_late *late; /* private: ptrace_target_set_late() */
};

/* How ptrace_target_attach() and ptrace_launch() attach: stackspy's own
 * flags, in a word of their own (the PTRACE_O_* options given to
 * PTRACE_SEIZE follow from them, in attach.c; never PTRACE_O_EXITKILL). */
enum attach_flags {
	/* Report execs (PTRACE_O_TRACEEXEC): exec_seen is set, so that the
	 * maps are read again. */
	ATTACH_EXEC = 1u << 0,
	/* Follow the processes (and threads) the target creates, from their
	 * first instruction, through exec, until they exit:
	 * PTRACE_O_TRACEFORK, _TRACEVFORK and _TRACECLONE.  Each new process
	 * becomes a registered target of its own, with these flags too (so
	 * its children are followed), handed to the caller by
	 * ptrace_target_next_new(); new threads are listed by the next
	 * ptrace_target_rescan().  The detach lets all of them go.
	 * Attaching to a process the kernel attached for us already (a child
	 * forked while we looked) fails with -EALREADY: it comes through
	 * ptrace_target_next_new(). */
	ATTACH_FOLLOW = 1u << 1,
	/* Do not seize a thread found in uninterruptible sleep (D) at scan
	 * time.  It is listed with state TRACEE_GONE and proc_state 'D' and
	 * read with ptrace_snapshot_blocked(): no PTRACE_INTERRUPT is left
	 * pending on it, and neither the sample nor the detach waits for
	 * it. */
	ATTACH_SKIP_DSTATE = 1u << 2,
	/* Seize each thread without reading its /proc/PID/task/TID/stat
	 * first (about 10 us a thread: most of a 1000-thread dump's attach,
	 * bench/dump-parked.sh).  Threads are listed with proc_state '?' and
	 * an empty name, for the caller to read once they run again
	 * (ptrace_thread_info).  A zombie (a leader after pthread_exit) is
	 * known by its refused seize, and read then; a thread in D is seized,
	 * and found by ptrace_sample_many with SAMPLE_DSTATE.  A thread in
	 * job-control stop reports its group-stop to the first sample, which
	 * lets it go back into the stop. */
	ATTACH_NO_PROCINFO = 1u << 3,
	/* ptrace_launch(): the command gets SIGTERM when stackspy dies
	 * (PR_SET_PDEATHSIG), so that even a SIGKILLed stackspy does not
	 * leave it running. */
	ATTACH_END_WITH_TRACER = 1u << 4,
};

/* Can process PID be attached at all?  Returns 0, or -ESRCH (no such
 * process), -EINVAL with why filled ("it is a kernel thread (kthreadd)",
 * "it is a zombie ...", "it is stackspy itself"). */
int ptrace_target_check(pid_t pid, char *why, size_t len);

/* Seize every thread of process PID as flags (ATTACH_*) say, rescanning
 * /proc/PID/task until two passes agree.  Returns a registry-owned target,
 * or NULL with *err a negative errno: -ESRCH no such process, -EPERM not
 * permitted (see ptrace_explain_eperm), -ENOMEM.  On failure nothing stays
 * attached. */
struct ptrace_target *ptrace_target_attach(pid_t pid, unsigned flags, int *err);

/* Forget threads that are gone (after a rescan), so long runs with thread
 * churn do not grow.  Pointers into t->threads are invalidated. */
void ptrace_target_prune(struct ptrace_target *t);

/* Thread tid of t, or NULL: a binary search of t->threads, which is
 * sorted by tid between rescans (valid until the next rescan or prune). */
struct tracee *ptrace_target_thread(const struct ptrace_target *t, pid_t tid);

/* Seize threads created since the last scan, after checking that PID is
 * still the process attached to (same start time).  Returns the number
 * added, or -ESRCH when the process is gone (t->gone is set, every thread
 * marked TRACEE_GONE).  A thread that cannot be seized (another tracer) is
 * listed with attach_error and tracer, counted in refused_total. */
int ptrace_target_rescan(struct ptrace_target *t);

/* Reap stops that arrived while we were not looking (signals to threads that
 * we are not sampling right now, a stop that came after its sample timed
 * out) and re-inject them or resume the thread; stops of other attached
 * targets are handled too.  Cheap; call it between samples. */
void ptrace_target_poll(struct ptrace_target *t);

/* ptrace_target_poll for every registered target (and the threads a
 * detach gave up on). */
void ptrace_poll_all(void);

/* ptrace_poll_all for the hook of a long loop of unwind/ (unwind_set_yield):
 * a late stop (SAMPLE_LATE) is let go without its sample, whose
 * unwinding would re-enter the unwinder that yielded (a symbol table half
 * built: the sample's frames were named [libc.so.6], and the name stayed
 * for the whole recording). */
void ptrace_poll_all_from_yield(void);

/* A descriptor (a signalfd for SIGCHLD) that becomes readable when some
 * tracee has a stop or exit to collect: poll it next to your own
 * descriptors and call ptrace_target_poll() when it is readable, so that
 * signals are handed on at once.  -1 before the first attach. */
int ptrace_event_fd(void);

/* Detach every thread, re-injecting pending signals and leaving a
 * group-stop in place.  All threads are interrupted first and their stops
 * collected against one deadline, so threads that cannot stop cost one
 * timeout in all; those are given up on (the kernel detaches them when we
 * exit, and ptrace_target_poll releases a late stop with its signal).
 * The target stays registered until ptrace_target_release().  Safe to call
 * twice. */
void ptrace_target_detach(struct ptrace_target *t);

/* Attach again to a detached target (after stackspy was stopped and
 * continued): the same process (same start time), its threads as they are
 * now.  Returns 0, -ESRCH (gone, or the pid is another process's now),
 * -EPERM, ...; on failure t stays detached. */
int ptrace_target_reattach(struct ptrace_target *t);

/* Detach (if not yet) and free t; t is invalid afterwards.  NULL is fine. */
void ptrace_target_release(struct ptrace_target *t);

/* Detach every registered target at once (one deadline for all): the exit
 * path of die(), of a stop signal, and of a normal end.  Targets stay
 * registered (release them, or exit).  Safe to call more than once. */
void ptrace_detach_all(void);

/* Tracees held now (registered targets not detached, plus threads still
 * seized after a detach gave up on them).  Async-signal-safe. */
int ptrace_held_count(void);

/* Let go the threads still seized after a detach gave up on them: each
 * one's late stop is detached (with its signal) as it comes, for up to
 * timeout_ms (negative: until none is left; 0: only what is there now),
 * but no longer once all that are left are in uninterruptible sleep.
 * Returns how many are still seized. */
size_t ptrace_release_lingering(int timeout_ms);

/* In a child forked after attaching: forget every tracee (they are the
 * parent's) and the parent's watchdog. */
void ptrace_forget_after_fork(void);

/* The tracer half of such a fork: release lingering threads as they stop
 * until the child `writer` exits, looking every poll_ms.  Returns 0 with
 * its wait status in *status, or a negative errno. */
int ptrace_linger_until_exit(pid_t writer, int poll_ms, int *status);

/* Fill buf with why attaching to PID was refused (another tracer and its
 * PID, another user, yama ptrace_scope, missing CAP_SYS_PTRACE) and a hint.
 * Returns buf. */
char *ptrace_explain_eperm(pid_t pid, char *buf, size_t len);

/* The next process created by a followed target since the last call (a
 * registered target, running, with followed set and parent its creator),
 * or NULL.  Call it between samples, not while iterating targets. */
struct ptrace_target *ptrace_target_next_new(void);

#endif
