/* sampler/sampler.h - the command layer: options, commands, output, and
 * the only code allowed to exit (after detaching every tracee). */
#ifndef STACKSPY_SAMPLER_H
#define STACKSPY_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ptrace/procfs.h"
#include "ptrace/sample.h"
#include "unwind/unwind.h"

#define EXIT_PARTIAL 1
#define EXIT_FATAL   2
#define EXIT_USAGE   64

#define ATTR_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- error.c: one family of printers, each message one write(2) -------- */

/* "stackspy: <msg>" */
void error_msg(const char *fmt, ...) ATTR_PRINTF(1, 2);
/* "stackspy: <msg>: strerror(-err)" */
void perror_msg(int err, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* "stackspy: hint: <msg>" */
void hint_msg(const char *fmt, ...) ATTR_PRINTF(1, 2);
/* error_msg, ptrace_detach_all(), exit(EXIT_FATAL). */
void error_msg_and_die(const char *fmt, ...) ATTR_PRINTF(1, 2) __attribute__((noreturn));
/* error_msg and "Try 'stackspy CMD --help' ...", ptrace_detach_all(),
 * exit(EXIT_USAGE). */
void error_msg_and_help(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3)
	__attribute__((noreturn));

/* After every target is detached and before unwinding and writing: if
 * some thread is still seized (a detach gave up on it: uninterruptible
 * sleep), the rest of the command runs in a forked child while this
 * process stays the tracer, lets the thread go the moment it stops, and
 * then exits as the child did.  A slow reader of the output never keeps a
 * thread of the target stopped. */
void cleanup_release_before_output(void);

/* restore (top's endwin) runs before any message above is written, so a
 * message never lands on a curses screen; NULL removes it. */
void cleanup_set_terminal(void (*restore)(void));
/* The one status line (record's progress), rewritten in place with "\r";
 * every message above erases it first.  Below the messages so that the
 * printers depend on nothing of the sampler. */
void status_line_show(const char *text);
void status_line_clear(void);
/* Lines for a person at a terminal: on when standard error is a terminal
 * and not quiet (--quiet); info_msg is "stackspy: <msg>" when on. */
void info_init(bool quiet);
bool info_on(void);
void info_msg(const char *fmt, ...) ATTR_PRINTF(1, 2);

/* ---- signals.c ----------------------------------------------------------- */

/* The signal that asked us to stop (any whose default action would end
 * stackspy: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, real-time
 * signals, ...), 0 while none has.  Handlers only set it. */
extern volatile sig_atomic_t stop_signal;
/* A job-control stop (SIGTSTP, SIGTTIN, SIGTTOU) that came while tracees
 * were held: the loop detaches everything, then calls signals_job_stop(). */
extern volatile sig_atomic_t job_stop_signal;
void signals_install(void);
/* If a job-control stop is pending, stop now (nothing may be traced any
 * more) and return true once continued (SIGCONT); false if none was. */
bool signals_job_stop(void);
/* After cleanup: die of the same signal, as an interrupted program should. */
void signals_reraise(void) __attribute__((noreturn));
/* "SIGTERM", "SIGRTMIN+3", "signal 99": a static string (not reentrant
 * for the last two). */
const char *signal_name(int sig);

/* ---- feedback.c: lines for a person at a terminal --------------------------- */

struct profiler;
struct profiler_config;

/* After profiler_start: the start line (what is sampled, how many
 * processes and threads, the rate, how to stop: Ctrl-C, or after duration
 * seconds), and the CPU times the busy-children hint starts from. */
void feedback_start(struct profiler *p, const struct profiler_config *cfg, double duration);
/* The same without the line (top: the screen says it). */
void feedback_sampling_started(struct profiler *p);
/* Will progress lines be shown?  Not when a command started here shares
 * the terminal (its lines would cut ours). */
bool feedback_progress_wanted(const struct profiler_config *cfg);
/* The progress line (elapsed, samples, achieved rate, errors), rewritten
 * in place: call it about once a second. */
void feedback_progress(struct profiler *p, double duration);
/* "wrote FILE (how_to_open)". */
void feedback_wrote(const char *path, const char *how_to_open);
/* When sampling ends, before a command started here is ended: the CPU time
 * the targets' children used meanwhile. */
void feedback_sampling_ended(struct profiler *p);
/* After the summary: hints where the result is empty (nothing on-CPU:
 * --idle) or odd (the children did the work: --subprocesses). */
void feedback_hints(struct profiler *p, const struct profiler_config *cfg);

/* ---- options shared by the commands ----------------------------------------- */

/* Defaults and bounds every command has. */
#define DEFAULT_MAX_DEPTH  256            /* --max-depth: frames per stack */
#define MAX_MAX_DEPTH      4096           /* --max-depth N at most (dump: 0
					     is no limit) */
#define STACK_WINDOW_BYTES (64 * 1024)    /* of stack copied per sample */
/* --max-depth 0 (dump): no limit; more frames than an 8 MiB stack of
 * 16-byte frames holds.  The walk is linear in frames (dump-deep.test:
 * 10,000). */
#define NO_DEPTH_LIMIT     (1 << 20)
#define DEFAULT_RATE       99.0           /* --rate of record and top */
#define MAX_RATE           10000.0
/* Kernel frames kept per stack (--kernel, D threads): the kernel prints at
 * most 64 in /proc/TID/stack, most stacks have 10 to 20. */
#define MAX_KERNEL_FRAMES  64

/* --engine ARG for command cmd: the engine, or a usage error (exit 64). */
enum unwind_engine engine_or_help(const char *cmd, const char *arg);
/* --max-depth ARG for command cmd: 1 to MAX_MAX_DEPTH, and 0 (returned as
 * is) when zero_ok; else a usage error (exit 64). */
int max_depth_or_help(const char *cmd, const char *arg, bool zero_ok);

/* Append the PIDs of s ("123" or "1,2,3"; no limit) to the malloc'd
 * array *pids of *npids, leaving out those already there.  Returns 0,
 * -EINVAL (not a PID list), -ENOMEM or -E2BIG. */
int pid_list_append(const char *s, pid_t **pids, int *npids);
/* The same for command cmd: a usage error (exit 64, "invalid PID: 's'")
 * on bad input. */
void pid_list_append_or_die(const char *cmd, const char *s, pid_t **pids, int *npids);
/* Is a non-option argument meant as PIDs (it starts with a digit)? */
bool looks_like_pids(const char *s);
/* Parse a decimal in [min, max].  Returns 0 or -1. */
int parse_long(const char *s, long min, long max, long *out);
/* Parse a floating-point number in [min, max] (DBL_MIN as min: above 0;
 * underflow is an error).  Returns 0 or -1. */
int parse_double(const char *s, double min, double max, double *out);

/* ---- the profiler: the sampling loop behind record and top ------------------ */
/* (profiler.c and the files listed in profiler-internal.h) */

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
	uint64_t queue_dropped;   /* taken, but dropped: the unwinder was
				     UNWIND_QUEUE_SAMPLES behind */
	uint64_t not_unwound;     /* still queued when the unwinder's time
				     at the end ran out (not in the output) */
	size_t threads_seen;
	size_t processes_seen;    /* processes sampled (with --subprocesses,
				     those found and created too) */
	size_t processes_followed;  /* --subprocesses: created while we
				     recorded */
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

/* Ctrl-Z while recording: detach every target, stop (signals_job_stop),
 * and once continued attach to each again; a target that ended (or whose
 * pid is another process's now) or cannot be attached is reported and
 * marked exited.  The stopped time is not recording time. */
void profiler_job_stop(struct profiler *p);

/* Detach from everything, then wait (UNWIND_FINISH_MS at most) for the
 * samples still queued to be unwound (idempotent; called by profiler_free
 * too). */
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
/* Counters so far (pause figures computed on call). */
const struct profiler_stats *profiler_stats(struct profiler *p);
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
char *command_status_text(int st, char *buf, size_t len);
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

/* push.c: record --push. */
struct push_options {
	const char *url;          /* base URL of Pyroscope (or its /ingest) */
	unsigned every;           /* seconds per profile sent */
	const char *app;          /* the name's application part; NULL: the
				     process's name */
	const char **labels;      /* KEY=VALUE, checked */
	size_t nlabels;
	const char *auth_file;    /* --push-auth-file: "USER:PASSWORD" inside;
				     NULL: $STACKSPY_PUSH_AUTH, if set */
	char *url_copy;           /* url when it was copied out of argv (to
				     wipe the credentials it held there) */
	char *userpwd;            /* what push_load_auth() found, or NULL */
};

/* push.c: the basic-auth credentials into po->userpwd (malloc'd, or NULL
 * for none): the first line of po->auth_file, else $STACKSPY_PUSH_AUTH;
 * never the command line, where every user reads them (ps).  Called
 * before attaching.  Returns 0 or -errno after saying why. */
int push_load_auth(struct push_options *po);

/* Samples like profiler_run(p, duration) (0: until a signal or the
 * command's exit), and sends each po->every seconds of samples to po->url
 * from a thread of its own; the last, partial interval too, once the
 * targets are let go (profiler_stop: nothing of them waits on the
 * server).  Prints what was sent and dropped.  Returns 0, 1 when profiles
 * were dropped (exit status 1: partial), or -errno (nothing to sample
 * with). */
int push_record(struct profiler *p, const struct profiler_config *cfg,
		const struct push_options *po, double duration);

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

/* Print the end-of-run summary on stderr. */
void profiler_print_summary(struct profiler *p, const struct profiler_config *cfg);

/* The long options that mean the same in dump, record and top (their
 * codes; a command's own begin at OPT_COMMAND_FIRST), and what parsing
 * them needs to remember. */
enum common_option {
	OPT_NO_DEMANGLE = 256,
	OPT_NO_DEBUGINFOD,
	OPT_SUBPROCESSES,
	OPT_IDLE,
	OPT_KERNEL,
	OPT_KEEP_RUNNING,
	OPT_COMMAND_FIRST,
};
struct common_options {
	const char *cmd;          /* "dump", "record", "top": in messages */
	bool depth_zero_ok;       /* --max-depth 0 is no limit (dump) */
	bool pid_given;           /* a -p list was given */
};
/* Defaults of the shared settings in cfg. */
void common_options_init(struct profiler_config *cfg);
/* Option c (argument arg) if it is a shared one: -p, -r, -e, -m and the
 * OPT_* above, into cfg (a bad argument is a usage error, exit 64, with
 * the same words in every command).  Returns whether it was. */
bool common_option(struct common_options *co, int c, const char *arg,
		   struct profiler_config *cfg);
/* A usage error naming option opt unless libdw was built in (--source,
 * --inline). */
void need_libdw_or_help(const char *cmd, const char *opt);
/* getopt_long's ':' (missing argument) or '?' (unknown option) for command
 * cmd: the usage error, exit 64. */
void option_error_and_help(const char *cmd, int c, char **argv) __attribute__((noreturn));
/* A usage error unless engine e can be used here. */
void check_engine_or_help(const char *cmd, enum unwind_engine e);
/* getopt_long for record and top, whose targets are PIDs (-p lists, and
 * arguments that look like PIDs, which options may follow) or a command
 * (after "--", or from the first argument that is neither an option nor
 * PIDs).  PID arguments are appended to cfg->pids (bad ones: usage
 * error).  Returns the option, or -1 with optind at the command (or
 * argc). */
struct option;
int target_getopt(const char *cmd, int argc, char **argv, const char *optstring,
		  const struct option *longopts, struct profiler_config *cfg);
/* After target_getopt: argv[optind..] is the command; exactly one of PIDs
 * and a command, else a usage error; `what` completes "nothing to ...". */
void parse_target_or_help(const char *cmd, const char *what, int argc, char **argv,
			  struct profiler_config *cfg);
/* After parse_target_or_help: --keep-running needs a command. */
void keep_running_or_help(const char *cmd, const struct profiler_config *cfg);

/* ---- commands -------------------------------------------------------------------- */

int cmd_dump(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* ---- output.c -------------------------------------------------------------------- */

enum output_format { OUTPUT_TEXT, OUTPUT_JSON };

/* One thread's dump, as printed. */
struct dump_thread {
	pid_t tid;
	char name[64];
	char state;
	bool need_info;           /* seized without reading its name and state
				     (ATTACH_NO_PROCINFO): read after
				     its sample, '?' and "" until then */
	const char *error;        /* why it could not be sampled, or NULL */
	double pause_us;
	struct unwind_frame *frames;
	int nframes;
	enum unwind_stop stop;
	bool sampled;
	/* A thread blocked where it cannot stop (D) is read
	 * without stopping it (ptrace_snapshot_blocked); its kernel stack
	 * (also for every thread with dump --kernel) and wchan. */
	bool unstopped;
	char wchan[64];           /* "" when unknown */
	struct kernel_frame *kframes;  /* kernel frames, innermost first */
	int nkframes;
	bool in_syscall;          /* blocked in system call syscall_nr ... */
	int64_t syscall_nr;
	uint64_t syscall_arg0;    /* ... whose first argument was this */
	uint64_t sample_sp;       /* where the registers of its stop do not
				     say its system call (not x86-64): its sp
				     then, to recognise the call in /proc
				     (sampler/locks.c); 0 otherwise */
	/* What it waits for (sampler/locks.c): a mutex, rwlock or condition
	 * variable at wait_addr (0: nothing known), held by wait_owner (0:
	 * unknown or not a mutex). */
	const char *wait_kind;    /* "mutex", "rwlock", "cond", or NULL */
	uint64_t wait_addr;
	pid_t wait_owner;
	char wait_symbol[128];    /* the object's symbol when it is a global */
};

struct dump_process {
	pid_t pid;
	char comm[64];
	enum unwind_engine engine;
	struct dump_thread *threads;
	size_t nthreads;
	pid_t only_tid;           /* a TID was given where a PID was expected */
	size_t nunstopped;        /* threads read without stopping them */
	/* Deadlock cycles (sampler/locks.c): cycles[k] lists ncycle[k] thread
	 * indices, each waiting for a mutex the next one holds. */
	size_t **cycles;
	size_t *ncycle;
	size_t ncycles;
};

/* sampler/locks.c: for each thread blocked in a futex wait under
 * pthread_mutex_lock & co., fill its wait_* fields (the mutex and its owner
 * read from the target's memory); then find the wait-for cycles. */
void dump_find_locks(struct dump_process *p, struct unwind_target *t);
void dump_free_locks(struct dump_process *p);

/* dump --group: print each distinct stack once (sampler/output.c). */
#define OUTPUT_GROUP 0x20000

/* In output_dump's sym_flags, above the UNWIND_SYM_* bits: add source
 * file:line and the inlined frames (dump --source, unwind_source()). */
#define OUTPUT_SOURCE 0x10000

/* Print one process.  Names through unwind_symbolize(t, ..., sym_flags).
 * Returns 0 or -errno (write error). */
int output_dump(FILE *out, enum output_format f, const struct dump_process *p,
		struct unwind_target *t, unsigned sym_flags);

/* unwinder.c: what stackspy left out of the files the target controls (its
 * perf map over its caps or refused, module paths over the cap), as
 * warnings on stderr; said once, at the end (record's summary, after a
 * dump). */
void report_target_inputs(const struct unwind_target *ut, pid_t pid);

/* ---- out-file.c: an output file that is complete or absent ------------------ */

/* -o FILE: written to a temporary file in FILE's directory (unnamed with
 * O_TMPFILE where possible, else ".FILE.XXXXXX"), renamed over FILE by
 * out_file_commit: a stackspy killed before that leaves FILE as it was.  A
 * FILE that exists and is a FIFO, a terminal or /dev/null is written in
 * place.  The path is walked by stackspy itself: another user's symlink or
 * file in a shared sticky directory, block devices and other character
 * devices are refused; a file replaced keeps its owner and mode
 * (sampler/out-file.c).  Without a path: stdout. */
struct out_file {
	FILE *f;                  /* write here */
	char *path;               /* as given; NULL: stdout */
	int dfd;                  /* O_PATH fd of the directory FILE is in */
	char *base;               /* FILE's name in it (symlinks resolved) */
	char *tmp;                /* the temporary's name in dfd, while it has one */
	bool in_place;            /* not a regular file: no temporary */
};

/* Create the temporary (or open the special file, or take stdout).  Done
 * before attaching: a path that cannot be written costs the target
 * nothing.  Returns 0 or -errno (of is then empty); -EPERM for a path
 * refused by the rules above, with the reason in why (whylen bytes; why
 * may be NULL). */
int out_file_open(struct out_file *of, const char *path, char *why, size_t whylen);
/* Flush, close and rename over the final name.  Returns 0 or -errno (a
 * write error: the temporary is removed, FILE left as it was).  of is
 * empty afterwards in both cases. */
int out_file_commit(struct out_file *of);
/* Give up: remove the temporary, FILE left as it was.  Idempotent. */
void out_file_discard(struct out_file *of);

#endif
