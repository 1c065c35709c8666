/* sampler/sampler.h - the command layer: options, commands, output, and
 * the only code allowed to exit (after detaching every tracee). */
#ifndef STACKSPY_SAMPLER_H
#define STACKSPY_SAMPLER_H

#include <signal.h>
#include <stdbool.h>
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
/* error_msg, detach every registered tracee, exit(EXIT_FATAL). */
void error_msg_and_die(const char *fmt, ...) ATTR_PRINTF(1, 2) __attribute__((noreturn));
/* error_msg and "Try 'stackspy CMD --help' ...", exit(EXIT_USAGE). */
void error_msg_and_help(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3)
	__attribute__((noreturn));

/* Targets that die() and signals must detach.  At most a few at once. */
void cleanup_register(struct ptrace_target *t);
void cleanup_unregister(struct ptrace_target *t);
/* Detach everything registered.  Safe to call more than once. */
void cleanup_detach_all(void);

/* ---- signals.c ----------------------------------------------------------- */

/* The signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that asked us to stop, 0
 * while none has.  Handlers only set it. */
extern volatile sig_atomic_t stop_signal;
void signals_install(void);
/* After cleanup: die of the same signal, as an interrupted program should. */
void signals_reraise(void) __attribute__((noreturn));

/* ---- options shared by the commands ----------------------------------------- */

/* Parse "123" or "1,2,3" into a malloc'd array.  Returns the count or -1. */
int parse_pid_list(const char *s, pid_t **out);
/* Parse a decimal in [min, max].  Returns 0 or -1. */
int parse_long(const char *s, long min, long max, long *out);

/* ---- commands -------------------------------------------------------------------- */

int cmd_dump(int argc, char **argv);

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

/* Print one process.  Names through unwind_symbolize(t, ..., sym_flags).
 * Returns 0 or -errno (write error). */
int output_dump(FILE *out, enum output_format f, const struct dump_process *p,
		struct unwind_target *t, unsigned sym_flags);

#endif
