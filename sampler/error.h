/* sampler/error.h - every line on standard error and the exit codes: one
 * family of printers (each message one write(2)), the status line, the
 * lines for a person at a terminal, and dying after detaching every
 * tracee.  Defined in sampler/error.c, the lowest file of sampler/ (it
 * calls only ptrace/).
 *
 * For every file of sampler/; the modules below print nothing.
 */
#ifndef STACKSPY_SAMPLER_ERROR_H
#define STACKSPY_SAMPLER_ERROR_H

#include <stdbool.h>

#define EXIT_PARTIAL 1
#define EXIT_FATAL   2
#define EXIT_USAGE   64

#define ATTR_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* ---- error.c: one family of printers, each message one write(2) -------- */

/* "stackspy: <msg>" */
void error_msg(const char *fmt, ...) ATTR_PRINTF(1, 2);
/* "stackspy: <msg>: strerror(-err)" */
void perror_msg(int err, const char *fmt, ...) ATTR_PRINTF(2, 3);
/* STACKSPY_DEBUG=1 (set, not "0"): the debug figures of a record's
 * summary and a dump's phases are written ("stackspy: debug: ..."). */
bool sampler_debug(void);
/* "stackspy: hint: <msg>" */
void sampler_hint_msg(const char *fmt, ...) ATTR_PRINTF(1, 2);
/* error_msg, ptrace_detach_all(), exit(EXIT_FATAL). */
void error_msg_and_die(const char *fmt, ...) ATTR_PRINTF(1, 2) __attribute__((noreturn));
/* error_msg and "Try 'stackspy CMD --help' ...", ptrace_detach_all(),
 * exit(EXIT_USAGE). */
void error_msg_and_help(const char *cmd, const char *fmt, ...) ATTR_PRINTF(2, 3)
	__attribute__((noreturn));
/* The "Try 'stackspy CMD --help' ..." line, ptrace_detach_all(),
 * exit(EXIT_USAGE): after error_msg and sampler_hint_msg lines of a usage error. */
void sampler_usage_exit(const char *cmd) __attribute__((noreturn));

/* After every target is detached and before unwinding and writing: if
 * some thread is still seized (a detach gave up on it: uninterruptible
 * sleep), the rest of the command runs in a forked child while this
 * process stays the tracer, lets the thread go the moment it stops, and
 * then exits as the child did.  A slow reader of the output never keeps a
 * thread of the target stopped. */
void sampler_cleanup_release_before_output(void);

/* restore (top's endwin) runs before any message above is written, so a
 * message never lands on a curses screen; NULL removes it. */
void sampler_cleanup_set_terminal(void (*restore)(void));
/* The one status line (record's progress), rewritten in place with "\r";
 * every message above erases it first.  Below the messages so that the
 * printers depend on nothing of the sampler. */
void sampler_status_line_show(const char *text);
void sampler_status_line_clear(void);
/* At the start of main: a closed standard input, output or error gets
 * /dev/null, so that no file opened later takes its number; whether
 * standard output was closed (stackspy dump PID >&-) is remembered for
 * the commands, which then refuse before attaching. */
void sampler_stdio_reserve(void);
bool sampler_stdio_stdout_closed(void);
/* Lines for a person at a terminal: on when standard error is a terminal
 * and not quiet (--quiet); sampler_info_msg is "stackspy: <msg>" when on. */
void sampler_info_init(bool quiet);
bool sampler_info_on(void);
void sampler_info_msg(const char *fmt, ...) ATTR_PRINTF(1, 2);

#endif
