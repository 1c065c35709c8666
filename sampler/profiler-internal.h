/* sampler/profiler-internal.h - the pieces of the sampling loop behind
 * `record` and `top` (sampler/profiler.h has its public face), shared by
 * the files of the profiler and by tests/unit-profiler.c; not for the
 * commands.
 *
 *   profiler.c    start, stop, free, accessors
 *   launch.c      getting the targets: attach to PIDs or launch a command
 *   ticks.c       the tick timer: deadlines, jitter, missed ticks, the loop
 *   sample.c      one tick of one process: choose, stop, hand over
 *   unwinder.c    the queue to the unwinder (its own thread for record),
 *                 which unwinds, names and adds
 *   oncpu.c       the on-CPU rule: does a stopped sample count as CPU time,
 *                 and for how many ticks of its thread's CPU time
 *   oncpu-hold.c  on-CPU: a holder thread per CPU takes it at the tick
 *   threads.c     the per-process thread table
 *   task-stat.c   /proc/PID/task/TID/ files: opening, the stat line
 *   frames.c      frame ids of an address (names, modules, inlines)
 *   stats.c       counters, the pause histogram, the summary
 *
 * Two threads share one struct profiler (on-CPU, the holders of
 * oncpu-hold.c share only their struct oncpu_holds, by atomics).  The tracer is the thread that
 * calls profiler_start, profiler_run (or top's profiler_tick),
 * profiler_stop and profiler_free: every ptrace call, the ticks, the
 * thread tables; it alone touches p->tr (struct tracer_state) and the
 * proc_state and thread_state of every process.  The unwinder's thread
 * (unwinder_main, from profiler_unwind_in_background) runs the queue's
 * jobs: it alone touches p->uw_own (struct unwinder_own) and, in
 * unwinder.c, its unwind_procs and the job it runs.  When that thread
 * could not be started (or before it is), the tracer runs the same jobs
 * inline (unwinder_drain between ticks, push when the queue is full,
 * unwinder_finish) and is the unwinder meanwhile, never both at once.
 * What both touch stays in struct profiler, each field with its lock
 * (stacks_lock, counts_lock, unwinder.c's u->lock) or its hand-over
 * (set before the unwinder starts; freed after it is joined).
 *
 * One sample, from the tick to its stack's count:
 *   1. tick        profiler_run waits for p->tr.ticks' deadline (on-CPU,
 *                  a holder takes each CPU the targets ran on at the
 *                  same deadline: oncpu_hold_arm); tick() (ticks.c) runs
 *                  profiler_sample_process for each process (sample.c)
 *   2. census/look thread_census (threads.c) reads which threads ran;
 *                  look_at -> choose_thread reads the thread's schedstat
 *                  and state (thread_schedstat, thread_state_now); --idle
 *                  may reuse its last stack (idle_reuse), defer it, or
 *                  read a thread in D without a stop (blocked.c)
 *   3. batch       batch_add: what the tracer knew (struct sample_pick in
 *                  p->tr.batch_pick); on-CPU, the interrupt goes at once
 *                  (ptrace_interrupt_early; take_ready collects stops)
 *   4. stop copy   flush_batch -> ptrace_sample_threads: registers, one
 *                  stack copy into p->tr.snaps[i], resume; a stop after
 *                  the deadline comes back later through late_sample
 *   5. verdict     finish_thread -> finish_sample: on-CPU, oncpu_verdict
 *                  and oncpu_cpu_claim (oncpu.c); a drop is counted; a
 *                  counted one weighs oncpu_weight ticks
 *   6. queue       finish_sample -> unwinder_push_sample (struct
 *                  sample_record): push swaps the snapshot into a ring
 *                  slot under u->lock; the tick's end (unwinder_hold)
 *                  wakes the unwinder's thread
 *   7. unwinder    run_queue -> run_job -> run_sample (unwinder.c):
 *                  profiler_walk into p->uw_own.frames, then
 *                  profiler_frame_ids_of (frames.c) into p->uw_own.ids
 *   8. collapse    add_stack: collapse_add on p->stacks under
 *                  stacks_lock (and top's hook), the count under
 *                  counts_lock; --idle's keep_last goes back to the
 *                  tracer (post_last, unwinder_take_lasts)
 *
 * Races (fields both threads touch without a lock; issue 35), all from
 * output code the unwinder's thread runs as a JOB_CALL: cmd-record.c's
 * checkpoints and rescue take profiler_stats_snapshot, which reads
 * p->stats, p->pauses, p->stopped and p->tr.ticks.start_ns while the
 * tracer counts into p->stats and p->pauses, sets stopped and moves
 * start_ns (profiler_job_stop): reads of counters being written, never
 * two writers.  (procs[0] and nprocs, which the same jobs read, are
 * under stacks_lock: the tracer moves the array when it adopts a
 * process.)
 */
#ifndef STACKSPY_PROFILER_INTERNAL_H
#define STACKSPY_PROFILER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "base/base.h"
#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "sampler/options.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

/* --idle: how long a thread may take to stop (a dump waits longer:
 * DUMP_STOP_TIMEOUT_MS). */
#define RECORD_STOP_TIMEOUT_MS 50
/* On-CPU: a thread on a CPU takes its stop within tens of microseconds;
 * the tick waits this long (or half a period, if shorter) and goes on.
 * A thread still not stopped keeps its interrupt pending and is sampled
 * when it stops (SAMPLE_LATE): one whose CPU the tick took stops
 * only when the scheduler gives it one back, with its registers of the
 * tick, and counts; one that was waiting is dropped by the rule.  Waiting
 * for those inside the tick (2 ms) made ticks overrun their period on a
 * loaded host; giving up on them for good (500 us) lost the samples of
 * CPU-bound threads. */
#define ONCPU_STOP_TIMEOUT_US 300
/* At most this many threads keep their stat and schedstat open between
 * ticks (fewer when RLIMIT_NOFILE is low; never fewer than a batch needs);
 * the others open, read and close them each time. */
#define FD_CACHE_MAX      4096
/* Threads stopped together in one ptrace_sample_many call: bounds the
 * stack copies held at once (SAMPLE_BATCH x STACK_WINDOW_BYTES). */
#define SAMPLE_BATCH      32
/* On-CPU: a thread interrupted as soon as it is seen running
 * (ptrace_interrupt_early) would wait in its stop while the tick looks
 * at the threads after it, 1-4 us each: the stops that are there are
 * taken (ptrace_sample_ready) before the next look once the oldest
 * interrupt not taken is this old, and again this often.  Without it,
 * 16 running threads paused 1.3-1.6x as long as with their interrupts
 * sent together after the looks. */
#define EARLY_WAIT_NS     10000u
/* Real-time priority for at most this much of a tick (or a quarter of the
 * period, if shorter): the wait for the tick, the stops, the hand-over
 * (and, without the unwinder's own thread, as much of the unwinding as
 * fits) (sample.c). */
#define TICK_RT_BUDGET_NS 2000000u
/* Samples waiting for the unwinder: past this many, the next are dropped
 * (counted) rather than waited for (unwinder.c).  Each holds a stack copy
 * (up to STACK_WINDOW_BYTES) while it waits. */
#define UNWIND_QUEUE_SAMPLES 1024
/* The end of a tick wakes the unwinder's thread for this many samples
 * waiting, or for jobs that waited this long (unwinder.c, kick_tick). */
#define UNWIND_WAKE_SAMPLES 32
#define UNWIND_WAKE_NS (10 * NS_PER_MS)
/* At the end, how long the unwinder may go without finishing one of the
 * samples still queued before the output is written without them (said
 * in the summary). */
#define UNWIND_FINISH_MS  5000u
/* UNWIND_FINISH_MS, or a test's shorter bound (STACKSPY_TEST_FINISH_MS,
 * unwinder.c). */
unsigned unwinder_finish_ms(void);
/* The unwinder's nice value (its thread only; unwinder.c). */
#define UNWIND_NICE       (-10)
/* A thread that has not run for this many ticks is cold: not read while
 * its process's CPU time says that no cold thread ran (threads.c). */
#define HOT_TICKS         16u
/* A full rescan of /proc/PID/task at least this often (sample.c). */
#define RESCAN_NS         (100 * NS_PER_MS)
/* ... or, with many threads, this much per thread (sample.c). */
#define RESCAN_NS_PER_THREAD (100 * NS_PER_US)
/* On-CPU without a scheduled-in count: CPU time a stop costs the stopped
 * thread (entering and leaving the stop), which does not make it "ran
 * since its last stop". */
#define ONCPU_CPU_SLACK_NS 50000u
/* On-CPU: a thread whose CPU the tick took began to wait at most this long
 * before the tick's first clock read. */
#define ONCPU_TOOK_CPU_NS 50000u
/* On-CPU: a thread whose CPU the tracer took for the tick left it when the
 * tracer came: the scheduler's account of both (se.exec_start) is one
 * instant, give or take this (sample.c, tick_took_cpu).  Measured: 173 of
 * 383 readings of nginx workers waiting on the tracer's CPU were that
 * instant to the nanosecond; of the others, 104 had left their CPU (into
 * epoll_wait) within 50 us of it, and counted, nearly doubled the samples
 * in epoll_wait. */
#define ONCPU_TOOK_EXEC_NS 1000u
/* On-CPU: CPUs (by number) whose samples of one tick are checked against
 * each other (oncpu_cpu_claim); a sample on a CPU past these is not. */
#define ONCPU_CPU_SLOTS 1024
/* On-CPU holders (oncpu-hold.c): their real-time priority (the tracer's
 * is one more), the longest they keep a CPU for a tick (and at most a
 * hundredth of the period), how long the tracer waits at a tick's start
 * for those still to take their CPUs, and the most CPUs held. */
#define ONCPU_HOLD_PRIO 1
#define ONCPU_HOLD_MAX_NS (200 * NS_PER_US)
#define ONCPU_HOLD_ARRIVE_NS (30 * NS_PER_US)
#define ONCPU_HOLD_MAX_CPUS 256
/* ... and the highest rate with holders (a hold every millisecond costs
 * the threads more than the ptrace stop does). */
#define ONCPU_HOLD_MAX_HZ 250
/* ... and how long a CPU is held after a target's thread was last seen
 * running there. */
#define ONCPU_HOLD_WANT_TICKS 64u
/* On-CPU: a counted stop stands for at most this many ticks of its
 * thread's CPU time (oncpu_weight); CPU time beyond is lost. */
#define ONCPU_WEIGHT_MAX 16u
/* Pause histogram: 1 us buckets up to 10 ms, then 100 us buckets up to
 * 1 s; the last bucket holds the rest. */
#define PAUSE_FINE_US     10000u
#define PAUSE_BUCKETS     (PAUSE_FINE_US + 9900u + 1u)
/* --idle: a sleeping thread whose CPU time moved less than this since its
 * last sample has not really run: our own stop costs it 15-30 us of CPU
 * (measured with schedstat around one sample). */
#define IDLE_CPU_SLACK_NS 100000u
/* What a stop costs before one was measured (idle_may_stop, sample.c). */
#define IDLE_STOP_COST_NS 100000u
/* With --inline, one physical frame can be several: the function holding
 * the code, then the functions inlined into it at ip (frames.c). */
#define MAX_INLINE_PER_FRAME 8

/* The pause of every stopped thread-sample (stats.c), for the mean, the
 * p99 and the maximum of the summary. */
struct pause_hist {
	uint32_t *buckets;        /* PAUSE_BUCKETS of them */
	uint64_t n, sum_ns, max_ns;
};

/* Tick deadlines (ticks.c): deadline k is start + k * period, plus a
 * jitter that does not accumulate. */
struct tick_clock {
	uint64_t start_ns;
	uint64_t period_ns;
	uint64_t next_index;      /* k of the next deadline */
	uint64_t rng;             /* xorshift state of the jitter, never 0 */
	uint64_t deadline_ns;     /* the last one drawn: the next tick */
};

/* What the tracer knew of a thread when it chose it for a stop, read
 * before the interrupt (sample.c, choose_thread).  The on-CPU rule judges
 * the stop against it (oncpu.c); a stop that comes after the tick's
 * deadline keeps it until then (thread_state.late). */
struct sample_pick {
	uint64_t tick_ns;              /* the tick the stop stands for */
	struct task_schedstat before;  /* its schedstat */
	char state;                    /* its /proc state letter */
	int tick_cpu;                  /* the tick took its CPU: 1, not: 0,
					  cannot be told (no sched file): -1 */
	int cpu;                       /* the CPU its stat line named, -1 */
	unsigned tick_no;              /* the tick's number */
};

struct thread_state {
	pid_t tid;
	int stat_fd;              /* both -1 unless the descriptor cache */
	int schedstat_fd;         /* holds them (threads.c) */
	uint64_t last_cpu_ns;
	uint64_t stop_cpu_ns;     /* on-CPU: CPU time read inside its last stop */
	uint64_t counted_cpu_ns;  /* on-CPU: CPU time its counted samples stand
				     for, up to (oncpu_weight); its first
				     reading's until the first */
	bool counted_set;
	struct sample_pick late;  /* on-CPU: the pick whose stop is pending
				     past its tick's deadline (SAMPLE_LATE);
				     late.tick_ns 0 if none */
	int state_cpu;            /* the CPU its last stat line named (where
				     it runs or waits), -1 if none */
	uint32_t *last_ids;       /* --idle: the stack reused while it sleeps */
	size_t last_n;            /* (the unwinder's, unwinder_take_lasts) */
	bool awaiting_last;       /* its last sample is not unwound yet */
	uint32_t last_seq;        /* which: p->tr.keep_seq when it was handed over */
	bool last_ran;            /* it was running (R) then: not to be reused */
	uint32_t prev_owed;       /* ticks owed to an earlier sample, prev_seq, */
	uint32_t prev_seq;        /* ... still being unwound when it was
				     stopped again */
	uint32_t owed;            /* ticks whose stack is that of its next
				     sample (deferred: --idle, a tick over
				     its budget) or of the one being unwound */
	uint64_t owed_cpu_ns;     /* deferred: its CPU time then, */
	uint64_t owed_slices;     /* ... and its scheduled-in count */
	uint32_t root_id;         /* "comm-PID/TID" */
	char name[64];            /* its comm as last read (root_id's) */
	struct task_schedstat asleep;  /* its schedstat when /proc last said it
				     was not running (on-CPU), or when its
				     stack was last reused (--idle); slices
				     0: not since it was stopped, or no
				     count */
	unsigned seen_tick;
	unsigned looked_tick;     /* --idle: the last tick that accounted for
				     it (the ones since are put off) */
	uint64_t looked_cpu_ns, looked_slices;  /* --idle: its schedstat as
				     that look knew it (idle_catch_up) */
	/* What its last schedstat read said (threads.c, thread_schedstat):
	 * cpu_seen is in its process's cpu_seen_sum; slices_seen 0 when it
	 * was never read (or has no count). */
	uint64_t cpu_seen, slices_seen;
	unsigned hot_tick;        /* the last tick it was found to have run */
	unsigned census_tick;     /* census (its schedstat) was read at the */
	struct task_schedstat census;  /* start of this tick (thread_census) */
	bool dead;                /* its stat file says it exited: the tid may
				     come back as a new thread */
};

struct proc_state {
	pid_t pid;
	char comm[64];
	struct ptrace_target *pt;       /* owned by ptrace/ until released */
	bool attached;
	bool exited;
	struct unwind_target *ut;      /* the tracer's: stack ends of the
					  copies (the unwinder has its own) */
	struct thread_state *threads;  /* [0, tn), in no order (threads.c) */
	size_t tcap, tn;
	struct base_index tindex;      /* tid -> position in threads */
	uint32_t root_id;         /* "comm-PID" when several processes */
	nlink_t task_nlink;       /* /proc/PID/task's link count at the last
				     rescan (sample.c) */
	uint64_t rescan_ns;       /* ... and when it was */
	bool followed;            /* --subprocesses: a child found or created
				     after the start; its state is freed when
				     it exits (hundreds come and go in a
				     build) */
	/* Threads that have not run are not read (threads.c, "Cold
	 * threads"): the process's CPU time (its clock) less the sum of what
	 * each thread's last read said is the CPU time of the threads not
	 * read since, and did not move if cpu_base did not. */
	uint64_t cpu_seen_sum;
	uint64_t cpu_base;        /* valid when cpu_base_ok */
	bool cpu_base_ok;
	bool cpu_now_ok;          /* its clock read at this tick's census */
	uint64_t cpu_last_ns;     /* ... and the last census's clock (0: none
				     yet; stats.target_cpu_ns) */
	int cpu_clock_ok;         /* 0 not tried, 1 cpu_clock reads, -1 not */
	clockid_t cpu_clock;
	pid_t *hot;               /* the threads that ran lately */
	size_t nhot, hot_cap;
	size_t idle_cursor;       /* --idle: where the next tick's look at
				     its threads starts (sample.c), */
	uint64_t look_cost_ns;    /* --idle: a look at one thread, averaged */
	pid_t *prio;              /* --idle: the hot ones, looked at first */
	size_t prio_cap;
	unsigned census_every;    /* --idle: the census every this many */
	unsigned census_next;     /* ticks, the next one at this tick */
	bool map_pending;         /* its memory map is to be read (found
				     while recording, or empty: in an
				     exec): at its next tick, never waited
				     for (sample.c); not sampled until
				     then */
	/* STACKSPY_DEBUG=1: what its ticks did with it (ticks.c, sample.c), printed
	 * a line a process at the end (stats.c): a process without a
	 * stack says where it was passed over. */
	struct {
		uint32_t ticks;           /* ticks that came to it */
		uint32_t map_pending;     /* ... that left its map pending */
		uint32_t looks;           /* threads looked at */
		uint32_t chosen;          /* ... chosen for a stop */
		uint32_t taken;           /* ... whose stop gave a sample */
		uint32_t reused;          /* ... whose last stack stood again */
		uint32_t deferred;        /* ... put off (--idle's budget) */
		uint32_t late;            /* ... whose stop of a tick before
					     was still pending */
	} dbg;
};

/* The unwinder's side of one process (unwinder.c; p->procs' index). */
struct unwind_proc {
	struct unwind_target *ut;
	unsigned ut_generation;
	pid_t pid;
	struct base_map names;     /* lookup address -> frame id (or, with
					  --inline, index in seq): names are the
					  slow part of a sample; most IPs repeat */
};

struct unwinder;

/* The tracer thread's own: only the thread that runs the ticks touches
 * these (ticks.c, sample.c, threads.c, oncpu.c, blocked.c, launch.c and
 * profiler.c's start, stop and free), never the unwinder's thread.  The
 * one exception is marked where it is (ticks.start_ns). */
struct oncpu_holds;

struct tracer_state {
	struct oncpu_holds *holds;  /* on-CPU: one holder per CPU (oncpu-hold.c) */
	bool holds_tried;
	int timer_fd;
	int epoll_fd;             /* timer_fd + ptrace_event_fd(): profiler_fd() */
	/* Also read by profiler_stats (stats.c): ticks.start_ns, which
	 * profiler_job_stop moves, is read without a lock when a checkpoint
	 * or the rescue (cmd-record.c) runs on the unwinder's thread. */
	struct tick_clock ticks;
	unsigned tick_no;
	unsigned idle_stops;      /* --idle: stops chosen this tick, */
	size_t idle_room;         /* ... at most this many (sample.c) */
	uint64_t stop_cost_ns;    /* a stop's wall time in a batch, averaged */
	uint32_t keep_seq;        /* --idle: samples handed over to be kept */
	uint64_t stop_wait_ns;    /* this tick's time in its batches' stops
				     (sample.c; reset by ticks.c) */
	bool tick_spread;         /* --idle: this tick's look goes round */
	uint64_t tick_tail_ns;    /* the last tick's time after its look at
				     the threads, its stops left out */
	uint64_t tick_other_ns;   /* the last tick's time not spent in its
				     stops (ticks.c; idle_may_stop) */
	bool final_pass;          /* profiler_take_deferred is running */
	uint64_t ticks_end_ns;    /* when the ticks ended, if before the stop */
	/* One tick's batch (sample.c): the threads chosen, their schedstat
	 * before the interrupt, their snapshots and results. */
	struct tracee *batch_th[SAMPLE_BATCH];
	struct ptrace_target *batch_pt[SAMPLE_BATCH];  /* whose thread */
	void *batch_ctx[SAMPLE_BATCH];                 /* its unwind target */
	size_t batch_proc[SAMPLE_BATCH];               /* index in procs */
	struct thread_state *batch_ts[SAMPLE_BATCH];
	struct sample_pick batch_pick[SAMPLE_BATCH];
	/* --kernel: the kernel stack of a sleeping thread, read before its
	 * interrupt (afterwards it shows the ptrace stop), outermost first. */
	uint32_t batch_kids[SAMPLE_BATCH][MAX_KERNEL_FRAMES];
	uint8_t batch_nk[SAMPLE_BATCH];
	struct stack_snapshot snaps[SAMPLE_BATCH];  /* a snapshot goes to the
						       queue by a swap of
						       buffers (unwinder.c) */
	int results[SAMPLE_BATCH];
	struct stack_snapshot blocked_snap;  /* a thread in D (blocked.c) */
	size_t nbatch;
	uint64_t batch_early_ns;  /* the batch's oldest early interrupt not
				     taken, or when it last looked for them;
				     0 if none */
	uint64_t tick_ns;         /* when the tick being run began */
	int tick_cpu;             /* the CPU the tracer woke on for it (-1:
				     unknown): a thread it took the CPU of
				     waits there (sample.c, tick_took_cpu) */
	bool tick_exec_read;      /* tick_exec_ns read since the tracer last
				     took a CPU */
	uint64_t tick_exec_ns;    /* the tracer's se.exec_start then, 0 if
				     unknown */
	uint64_t tick_exec_first; /* ... when it first took one this tick */
	/* On-CPU: the last two ticks (tick_no + 1) each CPU had a sample
	 * counted for (oncpu_cpu_claim). */
	unsigned cpu_counted[ONCPU_CPU_SLOTS][2];
	const struct arch *arch;  /* the host's (live targets), NULL if unknown */
	bool python;              /* some target runs CPython: the stops read
				     its frames (profiler_sample_setup) */
	pid_t child;              /* launch mode */
	int child_status;
	size_t nattached;
	/* The threads whose /proc descriptors are open, oldest first (a
	 * ring; threads.c): at most fd_cap of them, whatever the number of
	 * threads, so that RLIMIT_NOFILE is never the limit. */
	struct fd_owner {
		uint32_t proc;        /* index in procs */
		pid_t tid;
	} fd_ring[FD_CACHE_MAX];
	size_t fd_head, fd_n, fd_cap;
};

/* The unwinder's scratch: only the thread that unwinds touches these
 * (unwinder.c's run_sample, frames.c).  That is the unwinder's own
 * thread, or, when it could not be started (or before it is), the tracer
 * unwinding inline (unwinder_drain, unwinder_finish, a push that makes
 * room): never both at once.  Allocated by profiler_start before the
 * unwinder's thread starts, freed by profiler_free after unwinder_free. */
struct unwinder_own {
	struct unwind_frame *frames;  /* one walk's frames (cfg.max_depth) */
	uint32_t *ids;            /* one stack's frame ids, root first */
	size_t nids;              /* room in ids */
	uint32_t *seq;            /* --inline: per-address id lists (count,
				     ids...), indexed by unwind_proc.names */
	size_t seq_n, seq_cap;
};

/* The whole of a run of record or top: the tracer's part (tr), the
 * unwinder's (uw_own), and what both threads touch, each field with the
 * rule that makes that safe, or "RACE" where nothing does (see "Races"
 * at the top of this file). */
struct profiler {
	struct tracer_state tr;   /* the tracer thread's */
	struct unwinder_own uw_own;  /* the unwinder's (or the tracer's
					while it unwinds inline) */

	/* ---- shared: read-only once the unwinder's thread runs ---- */
	struct profiler_config cfg;  /* set by profiler_start */
	profiler_hook hook;       /* set before profiler_unwind_in_background
				     (top); the unwinder calls it under
				     stacks_lock; unwinder_finish clears it
				     under stacks_lock (the tracer, its only
				     writer, reads it without: job_roots) */
	void *hook_arg;
	void (*rescue_fn)(struct profiler *, void *);  /* profiler_set_rescue,
							  before the unwinder
							  starts; it calls it */
	void *rescue_arg;
	struct unwinder *uw;      /* set by unwinder_init before the thread
				     starts, cleared by unwinder_free after it
				     is joined; what it points to is
				     unwinder.c's (its own lock, u->lock) */

	/* ---- shared under stacks_lock ---- */
	pthread_mutex_t stacks_lock;
	struct collapse *stacks;  /* interned names and stacks: the unwinder
				     adds, the tracer interns roots and
				     kernel frames, output reads; every use
				     under stacks_lock (before the unwinder
				     starts or after it is joined, the
				     tracer alone) */
	/* Written by the unwinder (frames.c) on a name's first sight, read
	 * by top's screen (the tracer), pprof (either); all under
	 * stacks_lock, freed by profiler_free after unwinder_free. */
	char **frame_modules;     /* frame id -> module path (top's column) */
	uint64_t *frame_offsets;  /* frame id -> module-relative address of its
				     first sight (pprof) */
	char **frame_files;       /* frame id -> --inline's source file, line */
	unsigned *frame_lines;
	size_t nframe_modules;

	/* ---- shared under counts_lock ---- */
	pthread_mutex_t counts_lock;  /* the unwinder's counts: */
	uint64_t uw_samples;      /* stacks added, */
	uint64_t uw_nostack;      /* samples no frame came from (both
				     written by the unwinder, read by
				     profiler_stats) */

	/* ---- the tracer's; what the unwinder's output jobs (checkpoints,
	 * --push intervals, the rescue: JOB_CALL) read of it, procs[0]'s
	 * pid and comm and nprocs (profiler_comm, profiler_multi,
	 * pprof-out.c), they read under stacks_lock, and the tracer moves
	 * the array (profiler_proc_new) and writes a comm
	 * (reopen_after_exec) under it ---- */
	struct proc_state *procs;      /* may move when a process is added
					  (launch.c: profiler_proc_new), never during
					  a tick: keep indices, not pointers,
					  across ticks */
	size_t nprocs, procs_cap;

	/* ---- written by the tracer, read by the unwinder's output jobs
	 * without a lock: RACE ---- */
	/* The counters: the tracer counts (sample.c, threads.c, launch.c,
	 * unwinder.c's push on its behalf); profiler_stats (stats.c) fills
	 * the unwinder's counts and the pause summary into stats, on
	 * whichever thread calls it. */
	struct profiler_stats stats;
	struct pause_hist pauses;  /* added to by the tracer (finish_sample) */
	bool stopped;             /* profiler_stop; read by profiler_stats */
};

/* ---- threads.c ------------------------------------------------------------- */

void thread_state_release(struct thread_state *ts);
/* The state of thread th, created (with its root frame) on first sight or
 * when its tid was recycled; NULL when out of memory. */
struct thread_state *thread_state_get(struct profiler *p, struct proc_state *ps,
				      const struct tracee *th);
/* Room for n more threads, so that no thread_state_get of this tick moves
 * the table (the batch holds pointers into it).  Returns 0 or -ENOMEM. */
int thread_table_reserve(struct proc_state *ps, size_t n);
/* Drop the states of threads not seen in this tick.  Pointers to the
 * states kept are stale afterwards (they move into the holes). */
void thread_table_sweep(struct proc_state *ps, unsigned tick);
/* Release every state and the table's memory; ps's table is empty and
 * usable afterwards. */
void thread_table_free(struct proc_state *ps);
/* The state of thread tid, NULL if it has none. */
struct thread_state *thread_state_find(struct proc_state *ps, pid_t tid);
/* State letter of the thread now, from its stat file; 0 if gone (or
 * unreadable: counted as PROF_ERR_PROCFS); ts->state_cpu the CPU the
 * same line names.  The name in the same line
 * renames the thread (and its --threads root).  Afterwards ts's stat_fd
 * and schedstat_fd are open, until the next thread_state_now of another
 * thread may close them (the cache holds more than SAMPLE_BATCH). */
char thread_state_now(struct profiler *p, struct proc_state *ps, struct thread_state *ts);
/* Read ts's schedstat into *out (opening it if its descriptor is not
 * cached) and note what it says: a thread whose CPU time or scheduled-in
 * count moved is hot.  Returns 0, or a negative errno with *out zeroed. */
int thread_schedstat(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
		     struct task_schedstat *out);
/* ts ran (or was found running) at this tick. */
void thread_mark_hot(const struct profiler *p, struct thread_state *ts);
/* Whether ts has not run for HOT_TICKS ticks (and was read before). */
bool thread_is_cold(const struct profiler *p, const struct thread_state *ts);
/* The start of a process's tick: its CPU time, then the schedstat of each
 * thread that ran lately (ts->census).  Returns true when no other thread
 * of the process can have run since it was last read: then they need not
 * be read this tick. */
bool thread_census(struct profiler *p, struct proc_state *ps);
/* The end of a process's tick, every thread looked at: hot lists the
 * threads that ran lately (for the next census). */
void thread_census_end(struct profiler *p, struct proc_state *ps, bool looked_at_all);
/* Add ts to the next census if it is hot. */
void thread_census_keep(struct profiler *p, struct proc_state *ps, const struct thread_state *ts);
/* Before the first tick: every thread of ps read twice, the ones that
 * ran between the readings hot, and the census's base taken. */
void thread_first_look(struct profiler *p, struct proc_state *ps);

/* ---- task-stat.c ----------------------------------------------------------- */

/* Opens /proc/PID/task/TID/name read-only; returns the fd or -errno. */
int profiler_task_file_open(pid_t pid, pid_t tid, const char *name);
/* The fields of a stat line that we use: returns the state letter, or 0
 * if line is not a stat line; *comm and *comm_len give the name between
 * the parentheses (*comm NULL when there is none); *cpu (if cpu is not
 * NULL) the CPU it runs or waits on, -1 when the line does not say. */
char profiler_task_stat_parse(const char *line, const char **comm, size_t *comm_len, int *cpu);

/* ---- frames.c -------------------------------------------------------------- */

/* collapse_intern on p->stacks, under its lock (any thread). */
int profiler_intern(struct profiler *p, const char *name);
/* The frame ids of the physical frame at ip into out, root first: one,
 * or with --inline up to MAX_INLINE_PER_FRAME.  Returns how many. */
size_t profiler_frame_ids_of(struct profiler *p, struct unwind_proc *up,
			     const struct unwind_frame *frames, int k, uint32_t *out);
size_t profiler_frame_ids(struct profiler *p, struct unwind_proc *up, uint64_t ip, bool caller,
		 uint32_t *out);

/* ---- sample.c -------------------------------------------------------------- */

/* After attaching (and after an exec): late samples of ps's threads
 * (SAMPLE_LATE) come to the profiler.  Returns 0 or -ENOMEM. */
int profiler_sample_setup(struct profiler *p, struct proc_state *ps);
/* ps's memory map without waiting (an adopted process, an exec): read
 * once; on success ps->ut is the new map (the old one freed, late stops
 * and the unwinder told).  An empty map of a live process (in an exec)
 * sets ps->map_pending and keeps the old map; its next tick reads again.
 * Otherwise (gone, unreadable) the old map, if any, stays and
 * map_pending is clear. */
void profiler_proc_map_refresh(struct profiler *p, struct proc_state *ps);
/* One tick of one process: every thread it has now. */
void profiler_sample_process(struct profiler *p, struct proc_state *ps, uint64_t now);
/* After every process of the tick was given to profiler_sample_process:
 * stop the threads chosen, of all processes, against one deadline, then
 * unwind; then the processes whose threads are all gone are ended.
 * Returns whether one is alive. */
bool profiler_sample_finish(struct profiler *p);
/* The stops of every attached target waiting since the last look (a
 * signal to a thread, an exec) handled; false when no target is left. */
bool profiler_poll_targets(struct profiler *p);

/* --idle: the stacks unwound since the last call go to their threads
 * (sample.c). */
void profiler_take_lasts(struct profiler *p);

/* ---- unwinder.c ------------------------------------------------------------ */

/* The queue, empty, its thread not started.  Returns 0 or -ENOMEM. */
int unwinder_init(struct profiler *p);
/* One sample as the tracer hands it to the unwinder, whichever way it
 * was taken: a tick's stop, a stop after the tick's deadline, a thread in
 * D read without a stop (blocked.c). */
struct sample_record {
	const struct proc_state *ps;
	const struct thread_state *ts;  /* its stack's roots are taken at the
					   hand-over */
	uint64_t sampled_ns;            /* the tick it stands for */
	const uint32_t *kids;           /* kernel frames, outermost first */
	size_t nk;
	uint32_t weight;                /* the ticks it stands for */
	bool keep_last;                 /* --idle: the stack comes back to
					   ts (unwinder_take_lasts) as sample
					   p->tr.keep_seq, counted here once it
					   is in */
	struct stack_snapshot *snap;    /* goes by swapping *snap with a
					   free one of the queue's (no
					   copy) */
};
/* Hand over sample r.  Returns 0, -ENOSPC when dropped (the unwinder is
 * behind; counted; *r->snap is left as it was), or -ENOMEM. */
int unwinder_push_sample(struct profiler *p, const struct sample_record *r);
/* How many more samples the unwinder's queue takes now. */
size_t unwinder_room(struct profiler *p);
/* --idle: a stack of ts (ids, n of them: its last, or an earlier one
 * back from being unwound) counted count more times, with the tick's
 * others (queued by unwinder_flush_reuse).  Returns 0 or -ENOMEM. */
int unwinder_push_reuse(struct profiler *p, const struct proc_state *ps,
			const struct thread_state *ts, const uint32_t *ids, size_t n,
			uint32_t count);
/* The end of a tick: its reused stacks go to the unwinder, in one job. */
void unwinder_flush_reuse(struct profiler *p);
/* on: a tick begins, and the samples it hands over wake the unwinder's
 * thread at its end (off), once, and only if it sleeps and has enough
 * to do (UNWIND_WAKE_SAMPLES, UNWIND_WAKE_NS). */
void unwinder_hold(struct profiler *p, bool on);
/* How many times the tracer woke the unwinder's thread so far. */
uint64_t unwinder_wakes(struct profiler *p);
/* ps's memory map as it is now is what its next samples are unwound on
 * (after its attach, its adoption, its exec). */
void unwinder_push_map(struct profiler *p, const struct proc_state *ps);
/* ps ended: the unwinder frees its side after its last samples. */
void unwinder_push_end(struct profiler *p, const struct proc_state *ps);
/* --idle: a stack unwound for the thread it came from (keep_last). */
struct last_stack {
	uint32_t proc;            /* its process's slot in procs */
	pid_t tid;
	uint32_t seq;             /* the thread's sample it is (keep_seq) */
	uint32_t *ids;            /* NULL when it found no frame */
	size_t n;
};
/* --idle: the stacks unwound since the last call (*n of them), for the
 * tracer to give to their threads (sample.c, idle_take_lasts); the
 * array and the ids not kept are the caller's to free. */
struct last_stack *unwinder_take_lasts(struct profiler *p, size_t *n);
/* Without a thread of its own (it could not be started): is anything
 * queued?  Unwind it now. */
bool unwinder_pending(struct profiler *p);
void unwinder_drain(struct profiler *p);
/* No more jobs: wait for the queued ones while the unwinder finishes one
 * at least every limit_ms.  Returns false when they did not all finish
 * (p->stats.not_unwound says how many; the unwinder is left running). */
bool unwinder_finish(struct profiler *p, unsigned limit_ms);
/* Free the unwinder's side; false (nothing freed) when it was left
 * running: then nothing it uses (the stacks, the frame tables) may be. */
bool unwinder_free(struct profiler *p);
/* The inputs the unwinder skipped (unwinder_report_target_inputs), per process. */
void unwinder_report_inputs(struct profiler *p);

/* ---- blocked.c ------------------------------------------------------------- */

/* --idle: hand over the stack of a thread in D, read without stopping it,
 * with its kernel frames (name_[k]) on top.  Returns false when it could
 * not be read (it runs again). */
bool profiler_blocked_stack(struct profiler *p, struct proc_state *ps, struct thread_state *ts);
/* The kernel stack of thread tid (/proc/TID/stack, root only) as
 * name_[k] frame ids, outermost first, at most room; 0 when unreadable
 * (a running thread has none to show). */
size_t profiler_kernel_frame_ids(struct profiler *p, pid_t pid, pid_t tid, uint32_t *ids, size_t room);

/* ---- oncpu.c --------------------------------------------------------------- */

/* oncpu_cut_syscall: in sampler.h (dump uses it too). */
/* The on-CPU rule for a thread stopped at the tick that began at tick_ns:
 * -1 when the sample counts as on-CPU time, else an enum oncpu_drop.
 * before: its schedstat read just before the interrupt; tick_cpu: the
 * tracer, waking for the tick, or a holder took its CPU (1), did not (0),
 * cannot be told (-1: sample.c, tick_took_cpu);
 * snap->stop_sched the schedstat read inside the stop; last_stop_cpu_ns:
 * CPU time inside its previous stop (0: none). */
int oncpu_verdict(const struct arch *a, const struct stack_snapshot *snap,
		  const struct task_schedstat *before, int tick_cpu, uint64_t tick_ns,
		  uint64_t last_stop_cpu_ns);
/* pick's CPU at its tick: false when a sample of that tick was counted
 * on it already; else it is the CPU's sample now. */
bool oncpu_cpu_claim(struct profiler *p, const struct sample_pick *pick);
/* On-CPU holders (oncpu-hold.c): started for the targets' CPUs (none
 * without real-time priority, or with one CPU); armed for each tick's
 * deadline; released once the tick's looks are done; stopped at the end.
 * oncpu_hold_held: whether a holder took cpu for this tick, and its
 * se.exec_start then. */
int oncpu_hold_start(struct profiler *p);
void oncpu_hold_arm(struct profiler *p, uint64_t deadline_ns, unsigned tick);
/* oncpu_hold_arrivals: at the tick's start, before any interrupt, wait a
 * little (ONCPU_HOLD_ARRIVE_NS in all) for the holders still to come. */
void oncpu_hold_arrivals(struct profiler *p);
void oncpu_hold_release(struct profiler *p);
/* ... or one CPU, once the thread its holder took it from is interrupted. */
void oncpu_hold_release_cpu(struct profiler *p, int cpu);
/* A thread of the targets ran on cpu lately: hold it for a while. */
void oncpu_hold_want(struct profiler *p, int cpu);
bool oncpu_hold_held(struct profiler *p, int cpu, uint64_t *exec_ns);
void oncpu_hold_stop(struct profiler *p);
/* A counted stop that found its thread at the end of a system call (not
 * one it cut short): the call's number.  The thread was in the kernel,
 * in that call, when the tick took its CPU or its interrupt came. */
bool oncpu_stop_syscall(const struct arch *a, const struct stack_snapshot *snap, long *nr);
/* The host's name of system call nr, or NULL. */
const char *oncpu_syscall_name(long nr);
/* How many ticks a counted stop of ts, whose CPU time was cpu_ns before
 * its interrupt, stands for (at least 1); CPU time over ONCPU_WEIGHT_MAX
 * ticks is added to *lost_ns. */
uint32_t oncpu_weight(struct thread_state *ts, uint64_t cpu_ns, uint64_t period_ns,
		      uint64_t *lost_ns);

/* ---- ticks.c --------------------------------------------------------------- */

/* Ticks at rate_hz from now_ns on (deadline 0 is now). */
void ticks_clock_init(struct tick_clock *c, double rate_hz, uint64_t now_ns);
/* The next deadline: base + k * period plus a jitter of up to +-1/2
 * period (so that we cannot run in lock step with a timer of the
 * target); draws the jitter. */
uint64_t ticks_clock_deadline(struct tick_clock *c);
/* After a tick that ended at done_ns: moves to the first deadline still
 * ahead and returns how many it passed (missed ticks). */
uint64_t ticks_clock_advance(struct tick_clock *c, uint64_t done_ns);
/* Arm the timer for the next deadline. */
void ticks_arm(struct profiler *p);

/* ---- launch.c -------------------------------------------------------------- */

/* Say why thread th of pid could not be attached (another tracer), if it
 * could not. */
void profiler_report_refused(pid_t pid, const struct tracee *th);
int profiler_attach_one(struct profiler *p, struct proc_state *ps, pid_t pid);
/* The memory map and files of ps's process (ps->pid, ps->pt set): an empty
 * map while the process lives (it is in an exec) is read again until its
 * exec stop is handled.  NULL with *err when it cannot be read (-ESRCH:
 * gone).  Waits (up to 200 ms): for the launched command only, before the
 * first tick. */
struct unwind_target *profiler_proc_open_map(struct proc_state *ps, int *err);
/* Can a process whose map could not be read still get one (alive, not a
 * zombie)? */
bool profiler_proc_may_map(struct proc_state *ps);
int profiler_launch(struct profiler *p, struct proc_state *ps);
/* The ATTACH_* flags of every target. */
unsigned profiler_attach_flags(const struct profiler *p);
/* A new, zeroed process slot at the end of p->procs (which may move), or
 * NULL when out of memory. */
struct proc_state *profiler_proc_new(struct profiler *p);
/* --subprocesses at the start: the descendants of every target, each
 * attached before its own children are listed, so that none is missed
 * (a child forked after its parent's attach is followed by the kernel). */
void profiler_proc_attach_descendants(struct profiler *p);
/* --subprocesses: take the processes the targets created since the last
 * call (ptrace_target_next_new).  Never while iterating p->procs. */
void profiler_proc_adopt_new(struct profiler *p);
/* A followed process ended: free what it held (maps, names, threads,
 * its ptrace target), keep its slot. */
void profiler_proc_release(struct profiler *p, struct proc_state *ps);
/* The root frame "comm-PID" of ps, after its comm changed (exec). */
void profiler_proc_set_root(struct profiler *p, struct proc_state *ps);

/* Do stacks start with a comm-PID root (several processes, or children
 * followed)? */
static inline bool
profiler_multi(const struct profiler *p)
{
	return p->cfg.subprocesses || p->nprocs > 1;
}

/* ---- stats.c --------------------------------------------------------------- */

/* Returns 0 or -ENOMEM. */
int profiler_pause_hist_init(struct pause_hist *h);
void profiler_pause_hist_release(struct pause_hist *h);
void profiler_pause_hist_add(struct pause_hist *h, uint64_t ns);
/* Mean, 99th percentile and maximum in microseconds, 0 when empty.  The
 * p99 is the upper edge of its bucket, never above the maximum (nor below
 * it in the open-ended last bucket). */
void profiler_pause_hist_summary(const struct pause_hist *h, double *mean_us, double *p99_us,
			double *max_us);

#endif
