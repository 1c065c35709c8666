/* ptrace/sample.h - one sample of a thread: what it captured (struct
 * stack_snapshot) and how it is taken (ptrace_sample_many and the late
 * samples), defined in ptrace/sample.c.
 *
 * For anyone above ptrace/ that samples threads (sampler/) or reads a
 * snapshot (unwind/: the registers and the stack copy); the targets and
 * threads sampled come from ptrace/ptrace.h.
 */
#ifndef STACKSPY_PTRACE_SAMPLE_H
#define STACKSPY_PTRACE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ptrace_target;
struct tracee;

/* Largest NT_PRSTATUS we accept (x86-64 uses 216 bytes, aarch64 272). */
#define TRACE_REGS_MAX 512

/* /proc/TID/schedstat: CPU time, time spent waiting for a CPU, and how
 * many times the thread was scheduled in; read_ns is when it was read
 * (ptrace_clock_monotonic_ns).  All zero when unknown. */
struct task_schedstat {
	uint64_t cpu_ns;
	uint64_t wait_ns;
	uint64_t slices;
	uint64_t read_ns;
};

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
	unsigned char code[16];   /* the code at the pc, read just after the
				     stop (code_len bytes, 0 when it could
				     not be): what tells a library swapped
				     since from the one there now
				     (unwind_walk) */
	size_t code_len;
	uint64_t pause_ns;        /* time the thread was stopped for this sample */
	bool group_stopped;       /* thread was (and stays) in a job-control stop */
	int schedstat_fd;         /* in, with SAMPLE_SCHEDSTAT: the
				     thread's open schedstat, or -1 */
	uint64_t pac_mask;        /* out: the bits of a return address that
				     are its pointer-authentication code, as
				     the kernel reports them (aarch64's
				     NT_ARM_PAC_MASK insn_mask, read once in
				     the first stop); 0: none or unknown */
	unsigned char *interp;    /* out, with sample_opts.interp_read: what
				     it read during the stop (an
				     interpreter's frames: unwind/python.c),
				     interp_len bytes; owned like stack */
	size_t interp_len, interp_cap;
	struct task_schedstat stop_sched;  /* out: read while it was stopped
				     (the one read inside the stop: its
				     scheduled-in count tells whether the
				     thread had to be scheduled in to stop),
				     zero when not read */
};

/* Free the stack buffer of a snapshot (the struct itself is the caller's). */
void ptrace_snapshot_release(struct stack_snapshot *s);

/* Tells ptrace_sample() where the stack mapping containing SP ends, so the
 * copy is cut there.  Returns 0 when unknown (the copy is then bounded only
 * by the window and by the first unreadable page). */
typedef uint64_t (*stack_end_fn)(void *ctx, uint64_t sp);

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
#define SAMPLE_AHEAD_SLOW_US 200
#define SAMPLE_INORDER 0x20 /* with no stagger: the stops are taken in the
				     order of the interrupts, each with a
				     blocking waitpid, not through SIGCHLD
				     (a dump's batches: a tenth faster); only
				     the thread that first sampled so, and a
				     thread stopped after a slow one waits up
				     to SAMPLE_DSTATE_CHECK_US more */

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
	/* With SAMPLE_INORDER: how many threads are interrupted beyond the
	 * one whose stop is being taken, the next one as soon as a stop is
	 * seen, before its copy (its way into its stop overlaps that copy,
	 * and the tracer seldom has to sleep); 0: all at once.  A thread not
	 * stopped SAMPLE_AHEAD_SLOW_US after its interrupt (in D, or short
	 * of a CPU) turns the rest of the batch to all at once. */
	unsigned ahead;
	/* Called during each stop, after the stack copy s, with ctx: writes
	 * at most cap bytes of what else is to be read while the thread is
	 * stopped (an interpreter's frame chain) into buf and returns how
	 * many.  NULL: nothing; interp_window bytes are reserved for it
	 * before any thread is stopped. */
	size_t (*interp_read)(void *ctx, const struct stack_snapshot *s, unsigned char *buf,
			      size_t cap);
	size_t interp_window;
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
 * (ptrace_snapshot_release).  results[i] is 0, -ESRCH (the thread is gone),
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

/* Interrupt th now, ahead of the ptrace_sample_threads batch it is then
 * given to (which takes its stop and counts its deadline and pause from
 * now): a thread seen running is stopped a few microseconds after it was
 * seen, not after the looks at every other thread of the tick.  Those
 * took 12-65 us on a loaded host, long enough for a thread seen running
 * to end its turn of work, and for one seen asleep to begin the next:
 * an on-CPU profile lost the first 20-50 us of every turn
 * (tests/record-oncpu.test: compute_heavy 0.66-0.72 of 0.75).  Whether or
 * not the interrupt went, th must be in the next batch (an error is
 * reported there).  out, the snapshot the batch will take its stop into,
 * gets room for window bytes first: nothing is allocated while the
 * thread waits in its stop.  0 or -errno. */
int ptrace_interrupt_early(struct tracee *th, struct stack_snapshot *out, size_t window);

/* Of the n threads (as for ptrace_sample_threads), take the stops of
 * those interrupted early that are there now, without waiting: their
 * registers and stack copy into outs[i], results[i] as the batch gives
 * them, and they run again.  The batch they are then given to keeps
 * those and does not stop them again; the others it stops as usual.
 * An early-interrupted thread otherwise waits in its stop while the
 * tracer looks at the threads after it (1-4 us each).  Returns how many
 * were taken. */
size_t ptrace_sample_ready(struct ptrace_target *const *targets, void *const *ctxs,
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

/* Keep the tracer at the lowest real-time priority (SCHED_FIFO 1) between
 * ptrace_hold_realtime(true) and (false), not only while a thread is
 * stopped for it.  The profiler holds it while it waits for a tick and
 * samples it, so that the instant of a sample does not depend on when a
 * busy host gives the tracer a CPU; it lets go to unwind.  Without
 * CAP_SYS_NICE, or when stackspy already runs real-time, nothing
 * changes. */
void ptrace_hold_realtime(bool hold);
/* Is the caller real-time now (held or in a sample)?  False without
 * CAP_SYS_NICE. */
bool ptrace_realtime_on(void);
/* The real-time priority of the above (1 unless set; a held priority
 * moves at once). */
void ptrace_realtime_priority(int prio);

#endif
