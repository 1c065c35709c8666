/* sampler/options.h - the options every command shares: defaults and
 * bounds, the parsers of numbers and PID lists, the long options that mean
 * the same in dump, record and top, and their usage errors.  Defined in
 * sampler/options.c.
 *
 * For the commands (cmd-dump.c, cmd-record.c, cmd-top.c) and the files
 * that use the shared defaults.
 */
#ifndef STACKSPY_SAMPLER_OPTIONS_H
#define STACKSPY_SAMPLER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "unwind/unwind.h"

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
enum unwind_engine sampler_engine_or_help(const char *cmd, const char *arg);
/* --max-depth ARG for command cmd: 1 to MAX_MAX_DEPTH, and 0 (returned as
 * is) when zero_ok; else a usage error (exit 64). */
int sampler_max_depth_or_help(const char *cmd, const char *arg, bool zero_ok);

/* Append the PIDs of s ("123" or "1,2,3"; no limit) to the malloc'd
 * array *pids of *npids, leaving out those already there.  Returns 0,
 * -EINVAL (not a PID list), -ENOMEM or -E2BIG. */
int sampler_pid_list_append(const char *s, pid_t **pids, int *npids);
/* The same for command cmd: a usage error (exit 64, "invalid PID: 's'")
 * on bad input. */
void sampler_pid_list_append_or_die(const char *cmd, const char *s, pid_t **pids, int *npids);
/* The running processes called word (its base name: the comm, or the
 * base name of the executable), stackspy itself left out: their PIDs
 * as a comma list in list (as many as fit in len).  Returns how many. */
int sampler_pids_named(const char *word, char *list, size_t len);
/* The word of words (NULL-terminated) closest to s in edits, if it is
 * close enough to be a typing slip ("did you mean"), else NULL. */
const char *sampler_closest_word(const char *s, const char *const *words);
/* Is a non-option argument meant as PIDs (it starts with a digit)? */
bool sampler_looks_like_pids(const char *s);
/* Parse a decimal in [min, max].  Returns 0 or -1. */
int sampler_parse_long(const char *s, long min, long max, long *out);
/* Parse a floating-point number in [min, max] (DBL_MIN as min: above 0;
 * underflow is an error).  Returns 0 or -1. */
int sampler_parse_double(const char *s, double min, double max, double *out);

/* Parse a time: seconds, or with a unit (500ms, 30s, 2m, 2min, 1h), in
 * [min, max] seconds.  Returns 0 or -1. */
int sampler_parse_seconds(const char *s, double min, double max, double *out);
/* The words of a time argument's usage error. */
#define SECONDS_FORM "seconds, as 30, 0.5, 30s, 500ms, 2m or 1h"

struct profiler_config;

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
	OPT_PYTHON,
	OPT_COMMAND_FIRST,
};
struct common_options {
	const char *cmd;          /* "dump", "record", "top": in messages */
	bool depth_zero_ok;       /* --max-depth 0 is no limit (dump) */
	bool pid_given;           /* a -p list was given */
};
/* Defaults of the shared settings in cfg. */
void sampler_common_options_init(struct profiler_config *cfg);
/* Option c (argument arg) if it is a shared one: -p, -r (and perf's -F),
 * -e, -m, -V (the version: printed, exit 0) and the
 * OPT_* above, into cfg (a bad argument is a usage error, exit 64, with
 * the same words in every command).  Returns whether it was. */
bool sampler_common_option(struct common_options *co, int c, const char *arg,
		   struct profiler_config *cfg);
/* A usage error naming option opt unless libdw was built in (--source,
 * --inline). */
void sampler_need_libdw_or_help(const char *cmd, const char *opt);
/* getopt_long's ':' (missing argument) or '?' (unknown option) for command
 * cmd: the usage error, exit 64; a long option close to one of longopts
 * gets "did you mean". */
struct option;
void sampler_option_error_and_help(const char *cmd, int c, char **argv,
				   const struct option *longopts)
	__attribute__((noreturn));
/* A usage error unless engine e can be used here. */
void sampler_check_engine_or_help(const char *cmd, enum unwind_engine e);
/* getopt_long for record and top, whose targets are PIDs (-p lists, and
 * arguments that look like PIDs, which options may follow) or a command
 * (after "--" only: any other word is a usage error, with the PIDs of the
 * processes of that name when there are some).  PID arguments are appended to cfg->pids (bad ones: usage
 * error).  Returns the option, or -1 with optind at the command (or
 * argc). */
int sampler_target_getopt(const char *cmd, int argc, char **argv, const char *optstring,
		  const struct option *longopts, struct profiler_config *cfg);
/* After sampler_target_getopt: argv[optind..] is the command; exactly one of PIDs
 * and a command, else a usage error; `what` completes "nothing to ...". */
void sampler_parse_target_or_help(const char *cmd, const char *what, int argc, char **argv,
			  struct profiler_config *cfg);
/* After sampler_parse_target_or_help: --keep-running needs a command. */
void sampler_keep_running_or_help(const char *cmd, const struct profiler_config *cfg);

#endif
