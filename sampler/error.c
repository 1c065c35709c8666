/* sampler/error.c - every line stackspy writes to standard error: error
 * printers (strace's error_prints.c is the model), the terminal-only
 * lines (sampler_info_msg) and the one status line rewritten in place; and the
 * exit path.  Nothing exits while a tracee may be
 * stopped: die() detaches every tracee first (ptrace_detach_all). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "ptrace/ptrace.h"
#include "sampler/error.h"

static void (*terminal_restore)(void);
/* Columns of the status line on the screen now (0: none shown). */
static size_t status_len;

void
sampler_cleanup_set_terminal(void (*restore)(void))
{
	terminal_restore = restore;
}

void
sampler_status_line_show(const char *text)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "\r%s", text);
	if (n < 1)
		return;
	size_t len = (size_t)n < sizeof(line) ? (size_t)n - 1 : sizeof(line) - 2;
	/* Blanks over what is left of a longer line before. */
	while (len < status_len && len + 2 < sizeof(line))
		line[++len] = ' ';
	if (write(STDERR_FILENO, line, len + 1) < 0)
		return;  /* the terminal is gone */
	status_len = len;
}

void
sampler_status_line_clear(void)
{
	if (!status_len)
		return;
	char buf[256];
	size_t n = status_len < sizeof(buf) - 2 ? status_len : sizeof(buf) - 2;
	buf[0] = '\r';
	memset(buf + 1, ' ', n);
	buf[n + 1] = '\r';
	status_len = 0;
	if (write(STDERR_FILENO, buf, n + 2) < 0) {
		/* the terminal is gone */
	}
}

/* Format "stackspy: <prefix><msg><suffix>\n" and write it at once, so that
 * messages from several processes never interleave mid-line.  Whatever
 * the message holds (a target's comm, a tracer's name, a file name) is
 * made safe for the terminal here, for every message at once
 * (collapse_text_escape; tests/security-terminal.test). */
static void
vprint(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
	char buf[2048], safe[4 * sizeof(buf)];
	if (terminal_restore)
		terminal_restore();
	sampler_status_line_clear();
	int n = snprintf(buf, sizeof(buf), "stackspy: %s", prefix);
	if (n < 0)
		return;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (m < 0)
		return;
	size_t len = strlen(buf);
	snprintf(buf + len, sizeof(buf) - len, "%s", suffix);
	len = collapse_text_escape(safe, sizeof(safe) - 1, buf);
	safe[len++] = '\n';
	if (write(STDERR_FILENO, safe, len) < 0) {
		/* nowhere left to report it */
	}
}

void
error_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint("", "", fmt, ap);
	va_end(ap);
}

void
perror_msg(int err, const char *fmt, ...)
{
	char suffix[256];
	snprintf(suffix, sizeof(suffix), ": %s", strerror(err < 0 ? -err : err));
	va_list ap;
	va_start(ap, fmt);
	vprint("", suffix, fmt, ap);
	va_end(ap);
}

void
sampler_hint_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint("hint: ", "", fmt, ap);
	va_end(ap);
}

void
error_msg_and_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint("", "", fmt, ap);
	va_end(ap);
	ptrace_detach_all();
	exit(EXIT_FATAL);
}

void
error_msg_and_help(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprint("", "", fmt, ap);
	va_end(ap);
	sampler_usage_exit(cmd);
}

void
sampler_usage_exit(const char *cmd)
{
	fprintf(stderr, "Try 'stackspy%s%s --help' for more information.\n",
		cmd ? " " : "", cmd ? cmd : "");
	ptrace_detach_all();
	exit(EXIT_USAGE);
}

/* A lingering thread usually stops within a few milliseconds of leaving
 * its sleep: wait that long before going to the trouble of a fork. */
#define LINGER_GRACE_MS 100
/* How often the tracer half looks whether the writer is done. */
#define LINGER_POLL_MS 10

void
sampler_cleanup_release_before_output(void)
{
	if (ptrace_release_lingering(LINGER_GRACE_MS) == 0)
		return;
	fflush(NULL);
	pid_t writer = fork();
	if (writer < 0)
		return;  /* write anyway: the kernel lets them go when we exit */
	if (writer == 0) {
		ptrace_forget_after_fork();
		return;
	}
	/* The tracer half: nothing of the output is ours; a reader must see
	 * end-of-file when the writer is done, not when we are. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	int st;
	if (ptrace_linger_until_exit(writer, LINGER_POLL_MS, &st) < 0)
		_exit(EXIT_FATAL);
	/* Threads still in their sleep are released by the kernel as we
	 * exit. */
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		raise(WTERMSIG(st));
		_exit(128 + WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_FATAL);
}

static bool stdout_closed;

void
sampler_stdio_reserve(void)
{
	/* A closed 0, 1 or 2 would be the next file stackspy opens (a
	 * signalfd, the output's temporary, a /proc file), and the output or
	 * the messages would go there. */
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int nd = open("/dev/null", fd ? O_WRONLY : O_RDONLY);
		if (nd >= 0 && nd != fd) {
			dup2(nd, fd);
			close(nd);
		}
		if (fd == STDOUT_FILENO)
			stdout_closed = true;
	}
}

bool
sampler_stdio_stdout_closed(void)
{
	return stdout_closed;
}

static bool info;

void
sampler_info_init(bool quiet)
{
	info = !quiet && isatty(STDERR_FILENO);
}

bool
sampler_info_on(void)
{
	return info;
}

void
sampler_info_msg(const char *fmt, ...)
{
	if (!info)
		return;
	va_list ap;
	va_start(ap, fmt);
	vprint("", "", fmt, ap);
	va_end(ap);
}

bool
sampler_debug(void)
{
	static int on = -1;
	if (on < 0) {
		const char *e = getenv("STACKSPY_DEBUG");
		on = e && *e && *e != '0';
	}
	return on;
}
