/* sampler/profiler.h - the profiler: the sampling loop behind record and
 * top (attach or launch, ticks, samples, the unwinder, the stacks, the
 * statistics and the summary).  Defined in sampler/profiler.c and the
 * files listed in sampler/profiler-internal.h (launch.c, ticks.c,
 * sample.c, unwinder.c, oncpu.c, frames.c, stats.c), and pprof-out.c.
 *
 * For the commands (record, top, and dump for the on-CPU test and the
 * target's inputs report), options.c (struct profiler_config),
 * feedback.c and push.c; the profiler's own pieces share
 * sampler/profiler-internal.h.
 */
#ifndef STACKSPY_SAMPLER_PROFILER_H
#define STACKSPY_SAMPLER_PROFILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

struct collapse;

struct profiler_config {
	pid_t *pids;              /* attach mode: these processes */
	int npids;
	char **argv;              /* launch mode: run this command (NULL-terminated) */
	double rate_hz;           /* ticks per second */
	bool threads;             /* a root frame per thread: comm-PID/TID */
	bool idle;                /* wall-clock: sleeping threads too */
	enum unwind_engine engine;
	int max_depth;
	unsigned sym_flags;       /* UNWIND_SYM_* */
	bool inline_frames;       /* expand inlined functions (libdw): name_[i] */
	bool subprocesses;        /* --subprocesses: the targets' child
				     processes too, existing and new, each
				     with its comm-PID root */
	bool kernel;              /* --kernel (with --idle): the kernel stacks
				     of sleeping threads, name_[k] on top */
	bool keep_running;        /* launch mode: the command outlives the
				     recording (profiler_end_command) */
};

/* Why a thread-sample failed, for the summary. */
enum profiler_error {
	PROF_ERR_TIMEOUT,         /* did not stop in time */
	PROF_ERR_PTRACE,          /* another ptrace/read failure */
	PROF_ERR_NOSTACK,         /* sampled, but no frame could be unwound */
	PROF_ERR_PROCFS,          /* a /proc file of the thread could not be
				     opened (e.g. EMFILE): not sampled */
	PROF_ERR_MAX,
};

/* Did the stop cut a blocking system call short (a syscall number and a
 * -ERESTART* or -EINTR return in the registers)?  Then the thread was
 * asleep when it was interrupted (oncpu.c). */
struct arch;
struct stack_snapshot;
bool oncpu_cut_syscall(const struct arch *a, const struct stack_snapshot *snap);

/* Why a stopped thread-sample was not counted as on-CPU time (oncpu.c). */
enum oncpu_drop {
	ONCPU_DROP_ASLEEP,        /* the stop cut a blocking system call short */
	ONCPU_DROP_WAITING,       /* it had to be scheduled in to take the stop:
				     runnable, waiting for a CPU */
	ONCPU_DROP_IDLE,          /* (no scheduled-in count) its CPU time had
				     not moved since its last stop */
	ONCPU_DROP_MAX,
};

struct profiler_stats {
	uint64_t ticks;           /* ticks run */
	uint64_t missed_ticks;    /* deadlines that passed while a tick overran */
	uint64_t held_ticks;      /* on-CPU: ticks a holder held a CPU at,
				     summed over the CPUs (oncpu-hold.c) */
	uint64_t samples;         /* stacks added (stopped + reused) */
	uint64_t stopped;         /* thread-samples that stopped a thread */
	uint64_t reused;          /* --idle: stacks reused, thread not stopped */
	uint64_t unstopped;       /* --idle: threads in D read without a stop */
	uint64_t errors[PROF_ERR_MAX];
	uint64_t dropped[ONCPU_DROP_MAX];  /* stopped, not counted as on-CPU */
	uint64_t skipped;         /* on-CPU: did not stop by the tick's deadline
				     (the tick went on without it) */
	uint64_t late;            /* ... of which stopped later and were
				     sampled then (and judged by the rule) */
	uint64_t deferred;        /* --idle: stops put off to a later tick, */
	uint64_t oncpu_between;   /* on-CPU: ticks of CPU time between counted
				     stops that they carry (oncpu_weight) */
	uint64_t oncpu_lost_ns;   /* ... and CPU time beyond what they carry */
	uint64_t deferred_lost;   /* ... lost: the thread ran before its stop,
				     or the recording ended first */
	uint64_t queue_dropped;   /* taken, but dropped: the unwinder was
				     UNWIND_QUEUE_SAMPLES behind */
	uint64_t not_unwound;     /* still queued when the unwinder's time
				     at the end ran out (not in the output) */
	size_t threads_seen;
	size_t processes_seen;    /* processes sampled (with --subprocesses,
				     those found and created too) */
	size_t processes_followed;  /* --subprocesses: created while we
				     recorded */
	uint64_t target_cpu_ns;   /* the targets' CPU time between their
				     first and last tick (their process
				     clocks: utime + stime) */
	uint64_t tracer_vcsw;     /* the tracer thread's context switches in */
	uint64_t tracer_ivcsw;    /* profiler_run (voluntary, involuntary) */
	double elapsed_s;         /* since the first tick */
	double pause_mean_us;     /* per stopped thread-sample */
	double pause_p99_us;
	double pause_max_us;
};

struct profiler;

/* Attach to cfg->pids (every thread) or launch cfg->argv and follow it from
 * its first instruction.  Errors are reported here (stderr).  Returns 0
 * with *out set, or a negative errno; attach mode succeeds when at least
 * one process could be attached. */
int profiler_start(const struct profiler_config *cfg, struct profiler **out);

/* A descriptor that becomes readable when the next tick is due (poll it,
 * then call profiler_tick). */
int profiler_fd(const struct profiler *p);

/* Run the tick that is due: sample every thread of every process, unwind,
 * aggregate; then arm the next deadline.  Returns 1 while some target is
 * alive, 0 when all have exited. */
int profiler_tick(struct profiler *p);

/* Collect tracee stops (signals to hand on, late stops) without sampling:
 * for a caller that is not ticking (top, paused).  Cheap. */
void profiler_poll_events(struct profiler *p);

/* Threads of the targets that could not be traced (another tracer holds
 * them; each was reported when first seen at attach): the output lacks
 * them, exit status 1. */
size_t profiler_refused_threads(const struct profiler *p);

/* Run ticks until `seconds` (0: no limit) have passed, stop_signal is set,
 * or every target has exited.  A job-control stop (job_stop_signal) is
 * taken on the way (profiler_job_stop). */
void profiler_run(struct profiler *p, double seconds);

/* Ctrl-Z while recording: detach every target, stop (sampler_signals_job_stop),
 * and once continued attach to each again; a target that ended (or whose
 * pid is another process's now) or cannot be attached is reported and
 * marked exited.  The stopped time is not recording time. */
void profiler_job_stop(struct profiler *p);

/* Detach from everything, then wait (UNWIND_FINISH_MS at most) for the
 * samples still queued to be unwound (idempotent; called by profiler_free
 * too). */
/* --idle, at the end of a recording: the threads whose first stop was put
 * off (more threads than a tick can stop) are stopped now, each sample
 * standing for the ticks it was put off, so that the profile has every
 * thread.  Ends early at a stop signal. */
void profiler_take_deferred(struct profiler *p);
void profiler_stop(struct profiler *p);
void profiler_free(struct profiler *p);

/* Unwind on a thread of its own, so that the tracer thread only traces
 * (record, top; a hook then runs on that thread, under the stacks' lock).
 * Returns 0 or a negative errno (then it unwinds between ticks). */
int profiler_unwind_in_background(struct profiler *p);

/* The aggregated stacks, owned by p.  While the unwinder may run (before
 * profiler_stop), read them only between profiler_stacks_lock and
 * profiler_stacks_unlock. */
struct collapse *profiler_stacks(const struct profiler *p);
void profiler_stacks_lock(struct profiler *p);
void profiler_stacks_unlock(struct profiler *p);
/* fn(p, arg) where the stacks are made, once every sample taken so far
 * is in them (the unwinder's thread, or between ticks): a checkpoint, an
 * interval of --push, without the tracer doing it.  Runs before
 * profiler_stop returns, unless the unwinder's time ran out.  Returns 0
 * or -ENOMEM. */
int profiler_call_in_unwinder(struct profiler *p, void (*fn)(struct profiler *, void *),
			      void *arg);
/* fn(p, arg) on the unwinder's thread if the watchdog is about to kill a
 * stuck tracer (ptrace_watchdog_rescue_wanted): the output so far goes
 * out first.  Set before profiler_unwind_in_background. */
void profiler_set_rescue(struct profiler *p, void (*fn)(struct profiler *, void *), void *arg);
/* Counters so far (pause figures computed on call), on the tracer's
 * thread. */
const struct profiler_stats *profiler_stats(struct profiler *p);
/* The same into out, without writing p's: for output on the unwinder's
 * thread (checkpoints, --push, the rescue). */
void profiler_stats_snapshot(struct profiler *p, struct profiler_stats *out);
/* Launch mode: the command's wait status once it exited, else -1. */
int profiler_command_status(const struct profiler *p);

/* How long a command started here has to exit after SIGTERM at the end
 * of its recording, before SIGKILL. */
#define COMMAND_GRACE_MS 2000
/* Ended by a signal (Ctrl-C reaches the command's process group too): how
 * long the command may take to die of it before the SIGTERM. */
#define SIGNALLED_GRACE_MS 200

/* Launch mode, after profiler_stop: a command that still runs is ended
 * (SIGTERM, SIGKILL after COMMAND_GRACE_MS; ptrace_child_end) and its
 * status noted, unless cfg->keep_running; what happens is said on stderr.
 * Nothing in attach mode, or when the command has exited.  Returns 1 when
 * it ended the command, 0 otherwise. */
int profiler_end_command(struct profiler *p);
/* Launch mode: "stackspy: CMD (pid N) exited with status 0" (or "was
 * killed by signal SIGTERM", or "keeps running (--keep-running)"). */
void profiler_report_command(const struct profiler *p);
/* "exited with status 3", "was killed by signal SIGTERM" for wait status
 * st, into buf; returns buf. */
char *profiler_command_status_text(int st, char *buf, size_t len);
/* How many of the processes asked for were attached. */
size_t profiler_attached_count(const struct profiler *p);
/* PID of the first process (launch mode: the command's), for titles. */
pid_t profiler_pid(const struct profiler *p);
/* Comm of the first process (for titles). */
const char *profiler_comm(const struct profiler *p);
/* The depth of the thread roots (comm-PID/TID) in the recorded stacks:
 * under the process roots when there are several processes. */
size_t profiler_thread_root_level(const struct profiler *p);
/* The processes asked for (attached or not), and process i's pid and comm
 * ("" before it was attached). */
size_t profiler_process_count(const struct profiler *p);
pid_t profiler_process_pid(const struct profiler *p, size_t i);
const char *profiler_process_comm(const struct profiler *p, size_t i);
/* Did process i, one asked for (not a child followed by --subprocesses),
 * exit while it was sampled? */
bool profiler_process_exited(const struct profiler *p, size_t i);
/* Threads traced now, in every process. */
size_t profiler_thread_count(const struct profiler *p);

/* Called for every sample added (top's model uses it): thread tid of
 * process pid, its name (comm) as of this sample, and the frames, root
 * first, as added to the stacks but without the root frames that
 * --threads and several PIDs add. */
typedef void (*profiler_hook)(void *arg, pid_t pid, pid_t tid, const char *thread_name,
			      const uint32_t *ids, size_t n);
void profiler_set_hook(struct profiler *p, profiler_hook fn, void *arg);

/* Basename of the module frame id was first seen in ("libc.so.6"), owned
 * by p; NULL for root frames and frames without a module. */
const char *profiler_frame_module(const struct profiler *p, uint32_t id);
/* The whole path of that module, and in *offset the module-relative
 * address frame id was first seen at; NULL as above. */
const char *profiler_frame_module_path(const struct profiler *p, uint32_t id,
				       uint64_t *offset);
/* With --inline: the source file and (in *line) line frame id was first
 * seen at, owned by p; NULL when unknown. */
const char *profiler_frame_source(const struct profiler *p, uint32_t id,
				  unsigned *line);


/* pprof-out.c: the profile of p as gzipped profile.proto (-f pprof,
 * --push). base/nbase: the counts already sent (collapse_encode_pprof());
 * start_ns, duration_ns: the interval, Unix time. cfg->threads must have
 * been set (labels come from the thread roots). Returns 0 or -errno. */
int profiler_encode_pprof(struct profiler *p, const struct profiler_config *cfg,
			  const uint64_t *base, size_t nbase, int64_t start_ns,
			  int64_t duration_ns, void **buf, size_t *len);

/* Ticks per second achieved so far (the asked rate minus missed ticks). */
double profiler_stats_rate(const struct profiler_stats *s);
/* Stopped thread-samples the on-CPU rule did not count, all reasons. */
uint64_t profiler_stats_not_oncpu(const struct profiler_stats *s);
/* Thread-samples of --idle's ticks that are in no output: put off and
 * lost, dropped by a full queue, or not unwound in time. */
uint64_t profiler_stats_lost(const struct profiler_stats *s);
/* Whether they outnumber the samples kept: the profile is mostly not
 * there (record's exit status 1, and a warning in the summary). */
bool profiler_stats_mostly_lost(const struct profiler_stats *s);

/* Print the end-of-run summary on stderr. */
void profiler_print_summary(struct profiler *p, const struct profiler_config *cfg);

/* unwinder.c: what stackspy left out of the files the target controls (its
 * perf map over its caps or refused, module paths over the cap), as
 * warnings on stderr; said once, at the end (record's summary, after a
 * dump). */
void unwinder_report_target_inputs(const struct unwind_target *ut, pid_t pid);

#endif
