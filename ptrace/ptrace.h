/* ptrace/ptrace.h - the only module that calls ptrace(2).
 *
 * Attach with PTRACE_SEIZE to every thread of a process, take samples
 * (registers + one stack copy, the thread stopped only for that), and detach
 * so that the target is exactly as it was: running if it was running, still
 * in group-stop if it was kill -STOPped.  Nothing here exits or prints.
 */
#ifndef STACKSPY_PTRACE_H
#define STACKSPY_PTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/clock.h"

/* Largest NT_PRSTATUS we accept (x86-64 uses 216 bytes, aarch64 272). */
#define TRACE_REGS_MAX 512

/* /proc/TID/schedstat: CPU time, time spent waiting for a CPU, and how
 * many times the thread was scheduled in; read_ns is when it was read
 * (monotonic_ns).  All zero when unknown. */
struct task_schedstat {
	uint64_t cpu_ns;
	uint64_t wait_ns;
	uint64_t slices;
	uint64_t read_ns;
};

/* Read an open /proc/.../schedstat descriptor (pread, so it can be read
 * again).  Returns 0, or a negative errno with *out zeroed. */
int ptrace_read_schedstat(int fd, struct task_schedstat *out);

/* What one sample captured.  The registers are the raw NT_PRSTATUS regset
 * of the thread's architecture; unwind/ interprets them. */
struct stack_snapshot {
	pid_t tid;
	unsigned char regs[TRACE_REGS_MAX];
	size_t regs_len;
	uint64_t stack_start;     /* target address of stack[0] */
	unsigned char *stack;     /* owned by the snapshot, stack_cap bytes */
	size_t stack_len;         /* bytes actually copied */
	size_t stack_cap;
	uint64_t pause_ns;        /* time the thread was stopped for this sample */
	bool group_stopped;       /* thread was (and stays) in a job-control stop */
	int schedstat_fd;         /* in, with SAMPLE_SCHEDSTAT: the
				     thread's open schedstat, or -1 */
	struct task_schedstat stop_sched;  /* out: read while it was stopped
				     (the one read inside the stop: its
				     scheduled-in count tells whether the
				     thread had to be scheduled in to stop),
				     zero when not read */
};

/* Free the stack buffer of a snapshot (the struct itself is the caller's). */
void stack_snapshot_release(struct stack_snapshot *s);

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

/* Tells ptrace_sample() where the stack mapping containing SP ends, so the
 * copy is cut there.  Returns 0 when unknown (the copy is then bounded only
 * by the window and by the first unreadable page). */
typedef uint64_t (*stack_end_fn)(void *ctx, uint64_t sp);

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

/* Run argv (execvp) as a traced child: fork, seize the child while it waits
 * on a pipe, let it exec, and take its exec stop, so that when this returns
 * the new program has not run an instruction yet and its maps are its own.
 * ATTACH_EXEC is always added to flags.  Returns a registry-owned
 * target with launched set (leader_exited if the command died before its
 * exec stop), or NULL with *err a negative errno and *exec_failed telling
 * whether exec itself failed (*err is then exec's errno: "cannot run") or
 * tracing did ("cannot trace").  Nothing is left running on failure. */
struct ptrace_target *ptrace_launch(char *const argv[], unsigned flags,
				    int *err, bool *exec_failed);

/* End a launched command that still runs, once its target is detached:
 * SIGTERM (and SIGCONT, for a stopped one), up to grace_ms for it to exit,
 * then SIGKILL (*killed set); it is reaped, its status in *status.  Its
 * tree goes with it: the processes descended from it and every process
 * followed from it (ATTACH_FOLLOW), each known by its start time too, get
 * the same (also when the command has exited already).
 * Threads a detach gave up on are let go meanwhile, with their signals.
 * Returns 1 when it was ended, 0 when it had exited already (*status set
 * too), -EBUSY while t is still attached, or another negative errno. */
int ptrace_child_end(struct ptrace_target *t, int grace_ms, int *status, bool *killed);

/* The exit status of a launched command once it has exited (reaped here
 * if it is no longer traced).  Returns 1 with *status set, 0 while it runs
 * or if t was not launched. */
int ptrace_child_status(struct ptrace_target *t, int *status);
/* The same, after waiting up to ms for it to exit by itself (once
 * detached: a signal it was handed at the detach may be ending it). */
int ptrace_child_wait(struct ptrace_target *t, int ms, int *status);

/* Forget threads that are gone (after a rescan), so long runs with thread
 * churn do not grow.  Pointers into t->threads are invalidated. */
void ptrace_target_prune(struct ptrace_target *t);

/* Seize threads created since the last scan, after checking that PID is
 * still the process attached to (same start time).  Returns the number
 * added, or -ESRCH when the process is gone (t->gone is set, every thread
 * marked TRACEE_GONE).  A thread that cannot be seized (another tracer) is
 * listed with attach_error and tracer, counted in refused_total. */
int ptrace_target_rescan(struct ptrace_target *t);

/* ptrace_sample() flags: one bit each. */
#define SAMPLE_DETACH 0x1  /* resume by detaching: a one-shot dump saves
				     the second stop a later detach costs */
#define SAMPLE_SCHEDSTAT 0x2  /* read outs[i].schedstat_fd while the
				     thread is stopped (one pread) */
#define SAMPLE_LATE 0x4    /* a thread that does not stop by the
				     deadline is sampled when it stops
				     (ptrace_target_set_late) */
#define SAMPLE_HOLD 0x8    /* do not resume: the thread stays stopped
				     (TRACEE_HELD) until ptrace_target_detach,
				     so that every thread of a dump is stopped
				     together (dump --consistent) */
#define SAMPLE_DSTATE 0x10 /* a thread not stopped SAMPLE_DSTATE_CHECK_US
				     after its interrupt has its /proc state
				     read (again at twice that age, and so
				     on); in uninterruptible sleep (D) it is
				     given up at once: results[i] -EAGAIN.  It
				     stays seized with the interrupt pending
				     and is let go when it leaves the sleep
				     (as the detach does: lingering); with
				     SAMPLE_LATE its stop then is its
				     late sample (results[i] -ETIMEDOUT) */
#define SAMPLE_DSTATE_CHECK_US 1000

/* What a sample copies and how long it may wait (ptrace_sample_many). */
struct sample_opts {
	size_t window;            /* bytes of stack to copy from SP */
	stack_end_fn stack_end;   /* may be NULL */
	void *ctx;                /* for stack_end */
	int64_t timeout_us;       /* how long a thread may take to stop, counted
				     from its own PTRACE_INTERRUPT (negative:
				     no limit) */
	int64_t stagger_us;       /* how long to wait for the thread just
				     interrupted before interrupting the next
				     (so that its pause never includes another
				     thread's copy); 0: interrupt them all at
				     once and collect the stops as they come */
	unsigned flags;           /* PTRACE_SAMPLE_* */
};

/* Sample n threads of t: registers and one stack copy each, every thread
 * stopped only for its own copy.  Threads are interrupted one after the
 * other without waiting for a slow one: a thread that has not stopped
 * within o->stagger_us stays pending while the next is interrupted (with
 * 0, all are interrupted at once), and
 * each stop is collected as it arrives (PTRACE_GETREGSET, one page-split
 * process_vm_readv of up to o->window bytes from SP, then PTRACE_CONT,
 * PTRACE_LISTEN in a group-stop, or PTRACE_DETACH with
 * SAMPLE_DETACH).  So k threads that cannot stop (uninterruptible
 * sleep) cost about one timeout in all, not k, and a thread that stops at
 * once waits on no other.  Signal-delivery-stops seen while waiting are
 * re-injected.
 *
 * threads[i] point into t->threads (the caller's choice of threads);
 * outs[i] and results[i] are the caller's: outs[i].stack is (re)allocated
 * as needed before any thread is stopped and stays the caller's to release
 * (stack_snapshot_release).  results[i] is 0, -ESRCH (the thread is gone),
 * its attach_error (-EPERM: another tracer holds it), -ETIMEDOUT (it did
 * not stop in time; its late stop is handled by ptrace_target_poll or the
 * detach), -EAGAIN (SAMPLE_DSTATE: in uninterruptible sleep, given
 * up), or another negative errno.  Returns 0,
 * or -ENOMEM (nothing was stopped). */
int ptrace_sample_many(struct ptrace_target *t, struct tracee **threads, size_t n,
		       const struct sample_opts *o, struct stack_snapshot *outs,
		       int *results);

/* ptrace_sample_many over the threads of several targets, against one
 * deadline (a tick of several processes): threads[i] is a thread of
 * targets[i], and ctxs[i] the context its stack_end gets (o->ctx is not
 * used).  The same results and snapshots. */
int ptrace_sample_threads(struct ptrace_target *const *targets, void *const *ctxs,
			  struct tracee **threads, size_t n, const struct sample_opts *o,
			  struct stack_snapshot *outs, int *results);

/* Late samples.  With SAMPLE_LATE, a thread that has not stopped
 * by the deadline keeps its interrupt pending (results[i] -ETIMEDOUT, the
 * tracee marked late); when its stop comes, ptrace_target_poll (or a later
 * ptrace_sample_many that does not choose it) takes the sample then, the
 * same way (registers, one stack copy with o's window and stack_end, a
 * schedstat read with SAMPLE_SCHEDSTAT: snap->schedstat_fd is set
 * from fd_of), resumes the thread, and calls fn with the snapshot, which
 * stays ptrace/'s; fn may take its stack buffer by swapping the struct with
 * one of its own (ptrace/ grows it again as needed).  A thread whose CPU the tick
 * took stops only when it gets one back, with the registers it had then.
 * fn and arg are kept until the target is released; o is copied.
 * Returns 0 or -ENOMEM. */
typedef void (*ptrace_late_fn)(void *arg, struct ptrace_target *t, struct tracee *th,
			       int result, struct stack_snapshot *snap);
typedef int (*ptrace_fd_fn)(void *arg, pid_t tid);
int ptrace_target_set_late(struct ptrace_target *t, const struct sample_opts *o,
			   ptrace_late_fn fn, ptrace_fd_fn fd_of, void *arg);

/* One thread: ptrace_sample_many with n = 1.  Returns its result. */
int ptrace_sample(struct ptrace_target *t, struct tracee *th, size_t window,
		  stack_end_fn stack_end, void *ctx, int timeout_ms,
		  unsigned flags, struct stack_snapshot *out);

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

/* Keep the tracer at the lowest real-time priority (SCHED_FIFO 1) between
 * ptrace_hold_realtime(true) and (false), not only while a thread is
 * stopped for it.  The profiler holds it while it waits for a tick and
 * samples it, so that the instant of a sample does not depend on when a
 * busy host gives the tracer a CPU; it lets go to unwind.  Without
 * CAP_SYS_NICE, or when stackspy already runs real-time, nothing
 * changes. */
void ptrace_hold_realtime(bool hold);

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

/* How long the tracer may stay in job-control stop (kill -STOP) while it
 * holds tracees before the watchdog SIGKILLs it, so that the kernel
 * releases them (running, their signals delivered).  See watchdog.c. */
#define WATCHDOG_BOUND_MS 100
/* How late a running tracer may be past the time it promised to be back
 * by (ptrace_watchdog_alive) while it holds tracees, before the watchdog
 * SIGKILLs it: a deadlock or an endless loop of ours does not stall the
 * target for longer.  Generous: work that does not yield (a large DWARF
 * read for --source) must not trip it. */
#define WATCHDOG_STUCK_MS 5000
/* How long the watchdog waits for a stuck (running) tracer to write what
 * it has before it kills it. */
#define WATCHDOG_RESCUE_MS 1000

/* The watchdog is about to kill us (stuck while holding tracees): write
 * what we have now, from a thread that is not stuck, then say so with
 * ptrace_watchdog_rescued() (and exit).  Async-signal-safe reads. */
bool ptrace_watchdog_rescue_wanted(void);
void ptrace_watchdog_rescued(void);

/* The tracer's promise to the watchdog: it will be back (handling tracee
 * events) by wake_ns (monotonic_ns; a past time such as 0: it is back
 * now; UINT64_MAX: it waits for events with no timeout, which is progress
 * enough).  Called before each wait and
 * after each event loop pass; ptrace/'s own waits call it. */
void ptrace_watchdog_alive(uint64_t wake_ns);

/* Start the watchdog (a child process, out of our process group, that dies
 * with us) once; the first attach or launch does it.  Returns 0 or a
 * negative errno (then there is no watchdog: a SIGSTOPped stackspy would
 * stall its tracees). */
int ptrace_watchdog_start(void);
/* Its pid, -1 when none. */
pid_t ptrace_watchdog_pid(void);

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

/* A /proc/PID/stat (or /proc/PID/task/TID/stat) line: the one parser.  The
 * name may hold spaces and parentheses: the fields follow the last ')'. */
struct proc_stat {
	const char *comm;         /* into the line, comm_len bytes */
	size_t comm_len;
	char state;               /* field 3: R, S, D, T, t, Z, X ... */
	int ppid;                 /* 4 */
	unsigned long flags;      /* 9: PF_* (PF_KTHREAD 0x00200000) */
	unsigned long long utime, stime, cutime, cstime;  /* 14-17, clock ticks */
	unsigned long long start_time;  /* 22: clock ticks since boot */
};
/* Returns 0, or -EINVAL when line is not a stat line (fields past the
 * state that are missing are left 0). */
int procfs_stat_parse(const char *line, struct proc_stat *out);

/* The value of the "Key:" line of /proc/PID/status (tid > 0: of the
 * thread's own /proc/PID/task/TID/status) as text: what follows the colon
 * and its blanks, up to the end of the line, into val (len bytes,
 * NUL-terminated, cut to fit).  The one reader of status files; the caller
 * parses the text as its field is written (decimal, CapEff's hex, the
 * several numbers of Uid: or NSpid:).  Returns 0, -ENOENT when there is no
 * such line, or the negative errno of the read (-ESRCH: no such process). */
int procfs_status_text(pid_t pid, pid_t tid, const char *key, char *val, size_t len);

/* Read /proc/PID/task/TID/stat state letter and comm.  Returns 0 or -errno. */
int ptrace_thread_info(pid_t pid, pid_t tid, char *state, char *name, size_t namelen);

/* ptrace_thread_info() of thread tid, taskfd being the open directory
 * /proc/PID/task of its process: for many threads, cheaper than the whole
 * path each time (bench/dump-parked.sh). */
int ptrace_thread_info_at(int taskfd, pid_t tid, char *state, char *name, size_t namelen);

/* The comm of process PID (/proc/PID/comm without its newline) into buf;
 * "" on failure.  Returns 0 or a negative errno. */
int ptrace_read_comm(pid_t pid, char *buf, size_t len);

/* --- Threads that cannot stop (procfs.c; dump, record --idle) --------- */

/* The next process created by a followed target since the last call (a
 * registered target, running, with followed set and parent its creator),
 * or NULL.  Call it between samples, not while iterating targets. */
struct ptrace_target *ptrace_target_next_new(void);

/* /proc/PID/task/TID/syscall of a thread that is blocked (not stopped). */
struct task_syscall {
	bool running;             /* "running": on a CPU, nothing to read */
	int64_t nr;               /* system call number, -1 blocked outside one
				     (e.g. a page fault) */
	uint64_t args[6];         /* its arguments (nargs of them: 6 or 0) */
	int nargs;
	uint64_t sp, pc;          /* user stack pointer and pc */
};

/* Read it.  Returns 0, -EAGAIN (running), -ESRCH, -EACCES, -EINVAL. */
int ptrace_read_syscall(pid_t pid, pid_t tid, struct task_syscall *out);

/* Sample a blocked thread without stopping it: registers from
 * /proc/.../syscall (sp, pc, and on x86-64 and aarch64 the argument
 * registers; every other register reads as 0: unknown, so an unwind that
 * needs one stops there), and the user stack from sp copied with
 * process_vm_readv (window bytes, cut at stack_end), *sc the syscall line.
 * Returns 0, -EAGAIN when the thread is running or moved during the copy,
 * or another negative errno. */
int ptrace_snapshot_blocked(pid_t pid, pid_t tid, size_t window, stack_end_fn stack_end,
			    void *ctx, struct stack_snapshot *out, struct task_syscall *sc);

/* One frame of /proc/PID/task/TID/stack, "[<ffffffff8108c0a1>]
 * kernel_clone+0xb1/0x3a0": its address (0 unless kptr_restrict shows
 * it), the function and the offset into it. */
struct kernel_frame {
	uint64_t addr;
	char function[128];
	uint64_t offset;
};
/* The kernel stack of thread tid (root only), innermost first, at most max
 * frames into out.  Returns how many, or a negative errno. */
int ptrace_kernel_stack(pid_t pid, pid_t tid, struct kernel_frame *out, int max);

/* /proc/PID/task/TID/wchan: the kernel function the thread sleeps in, ""
 * when none or hidden.  Returns 0 or a negative errno. */
int ptrace_read_wchan(pid_t pid, pid_t tid, char *buf, size_t len);

/* len bytes at addr in process (or thread) pid, process_vm_readv: no stop
 * needed.  Returns 0, -EFAULT (short), or a negative errno. */
int ptrace_read_memory(pid_t pid, uint64_t addr, void *buf, size_t len);

/* --- The process tree (proctree.c) ---------------------------------- */

/* The child processes of process pid (forked by any of its threads), or
 * all its descendants, children before grandchildren.  *out is malloc'd.
 * Returns the count, or a negative errno (-ESRCH: pid is gone). */
int ptrace_children(pid_t pid, pid_t **out);
int ptrace_descendants(pid_t pid, pid_t **out);

/* The thread group (process) of thread tid.  Returns 0 or -ESRCH. */
int ptrace_thread_tgid(pid_t tid, pid_t *tgid);

#endif
