/* sampler/sampler.h - the command layer: options, commands, output, and
 * the only code allowed to exit (after detaching every tracee). */
#ifndef STACKSPY_SAMPLER_H
#define STACKSPY_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "ptrace/ptrace.h"
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

/* restore (top's endwin) runs before any message above is written, so a
 * message never lands on a curses screen; NULL removes it. */
void cleanup_set_terminal(void (*restore)(void));

/* ---- signals.c ----------------------------------------------------------- */

/* The signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that asked us to stop, 0
 * while none has.  Handlers only set it. */
extern volatile sig_atomic_t stop_signal;
void signals_install(void);
/* After cleanup: die of the same signal, as an interrupted program should. */
void signals_reraise(void) __attribute__((noreturn));

/* ---- options shared by the commands ----------------------------------------- */

/* At most this many processes at once (-p A,B,...). */
#define MAX_PIDS 64

/* Parse "123" or "1,2,3" (at most MAX_PIDS) into a malloc'd array.
 * Returns the count, -E2BIG (too many) or -1. */
int parse_pid_list(const char *s, pid_t **out);
/* The same for command cmd's option: exits with a usage error on bad
 * input, so the count is always positive. */
int parse_pids_or_die(const char *cmd, const char *arg, pid_t **out);
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
};

/* Why a thread-sample failed, for the summary. */
enum profiler_error {
	PROF_ERR_TIMEOUT,         /* did not stop in time */
	PROF_ERR_PTRACE,          /* another ptrace/read failure */
	PROF_ERR_NOSTACK,         /* sampled, but no frame could be unwound */
	PROF_ERR_MAX,
};

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
	uint64_t errors[PROF_ERR_MAX];
	uint64_t dropped[ONCPU_DROP_MAX];  /* stopped, not counted as on-CPU */
	uint64_t skipped;         /* on-CPU: did not stop by the tick's deadline
				     (the tick went on without it) */
	uint64_t late;            /* ... of which stopped later and were
				     sampled then (and judged by the rule) */
	size_t threads_seen;
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

/* Run ticks until `seconds` (0: no limit) have passed, stop_signal is set,
 * or every target has exited. */
void profiler_run(struct profiler *p, double seconds);

/* Detach from everything (idempotent; called by profiler_free too). */
void profiler_stop(struct profiler *p);
void profiler_free(struct profiler *p);

/* The aggregated stacks, owned by p. */
struct collapse *profiler_stacks(const struct profiler *p);
/* Counters so far (pause figures computed on call). */
const struct profiler_stats *profiler_stats(struct profiler *p);
/* Launch mode: the command's wait status once it exited, else -1. */
int profiler_command_status(const struct profiler *p);
/* How many of the processes asked for were attached. */
size_t profiler_attached_count(const struct profiler *p);
/* PID of the first process (launch mode: the command's), for titles. */
pid_t profiler_pid(const struct profiler *p);
/* Comm of the first process (for titles). */
const char *profiler_comm(const struct profiler *p);

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
};

/* Samples like profiler_run(p, duration) (0: until a signal or the
 * command's exit), and sends each po->every seconds of samples to po->url
 * from a thread of its own; the last, partial interval too.  Prints what
 * was sent and dropped.  Returns 0 or -errno (nothing to sample with). */
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

/* getopt_long's ':' (missing argument) or '?' (unknown option) for command
 * cmd: the usage error, exit 64. */
void option_error_and_help(const char *cmd, int c, char **argv) __attribute__((noreturn));
/* A usage error unless engine e can be used here. */
void check_engine_or_help(const char *cmd, enum unwind_engine e);
/* record and top: -p PID[,PID...] or -- COMMAND (argv[optind..]), exactly
 * one of them, into cfg; `what` completes "nothing to ..." when neither. */
void parse_target_or_help(const char *cmd, const char *what, const char *pid_arg,
			  int argc, char **argv, struct profiler_config *cfg);

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
	const char *error;        /* why it could not be sampled, or NULL */
	double pause_us;
	struct unwind_frame *frames;
	int nframes;
	enum unwind_stop stop;
	bool sampled;
};

struct dump_process {
	pid_t pid;
	char comm[64];
	enum unwind_engine engine;
	struct dump_thread *threads;
	size_t nthreads;
};

/* In output_dump's sym_flags, above the UNWIND_SYM_* bits: add source
 * file:line and the inlined frames (dump --source, unwind_source()). */
#define OUTPUT_SOURCE 0x10000

/* Print one process.  Names through unwind_symbolize(t, ..., sym_flags).
 * Returns 0 or -errno (write error). */
int output_dump(FILE *out, enum output_format f, const struct dump_process *p,
		struct unwind_target *t, unsigned sym_flags);

#endif
