/* tests/unit-detach.c - the ptrace rules at the detach, without chance:
 * a real child, seized by ptrace/ (ptrace_target_attach), put in the stop
 * each rule is about while nothing polls, then let go by
 * ptrace_target_detach.  Each case checks what the child sees after.
 *
 *   signal     the child is in a signal-delivery-stop when the detach
 *              comes: the detach hands the signal back (its handler runs)
 *   queued     three real-time signals queued while it is in that stop:
 *              all of them are handled after the detach
 *   group      the child is kill -STOPped while seized: after the detach it
 *              is still stopped (state T), untraced, and SIGCONT wakes it
 *
 * In a flood of signals (tests/promise-signals-record.test) a thread is in
 * a signal-delivery-stop at the moment of the detach only by chance; here
 * always.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/ptrace.h"
#include "tests/check.h"

static int report_fd = -1;

static void
on_signal(int sig)
{
	char c = (char)('a' + (sig == SIGUSR1 ? 0 : sig - SIGRTMIN + 1));
	if (write(report_fd, &c, 1) < 0)
		_exit(3);
}

/* A child that reports each signal it handles on the pipe, and waits. */
static pid_t
start_child(int *rfd)
{
	int p[2];
	if (pipe(p) < 0) {
		perror("pipe");
		exit(99);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(99);
	}
	if (pid == 0) {
		close(p[0]);
		report_fd = p[1];
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGUSR1, &sa, NULL);
		for (int s = SIGRTMIN; s < SIGRTMIN + 3; s++)
			sigaction(s, &sa, NULL);
		if (write(report_fd, "r", 1) < 0)
			_exit(3);
		for (;;)
			pause();
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

/* Up to len bytes from fd within ms milliseconds.  Returns how many. */
static size_t
read_for(int fd, char *buf, size_t len, int ms)
{
	size_t got = 0;
	while (got < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, ms) <= 0)
			break;
		ssize_t r = read(fd, buf + got, len - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/* The state letter of pid and its TracerPid. */
static char
state_of(pid_t pid, long *tracer)
{
	char path[64], buf[2048];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	const char *s = strstr(buf, "\nState:\t");
	const char *t = strstr(buf, "\nTracerPid:\t");
	*tracer = t ? strtol(t + 12, NULL, 10) : -1;
	return s ? s[8] : '?';
}

/* Wait until pid's state is want (up to 2 s). */
static bool
wait_state(pid_t pid, char want)
{
	long tracer;
	for (int i = 0; i < 400; i++) {
		if (state_of(pid, &tracer) == want)
			return true;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	return false;
}

static void
end_child(pid_t pid, int fd)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
}

static struct ptrace_target *
attach(pid_t pid)
{
	int err = 0;
	struct ptrace_target *t = ptrace_target_attach(pid, 0, &err);
	CHECK(t != NULL, "attach: %s", strerror(-err));
	return t;
}

static void
test_signal(bool queued)
{
	int fd;
	char buf[8];
	pid_t pid = start_child(&fd);
	CHECK(read_for(fd, buf, 1, 2000) == 1 && buf[0] == 'r');
	struct ptrace_target *t = attach(pid);
	if (!t) {
		end_child(pid, fd);
		return;
	}
	/* Nobody polls: the child stops for the signal and waits (t). */
	if (queued) {
		union sigval v = { 0 };
		for (int s = SIGRTMIN; s < SIGRTMIN + 3; s++)
			CHECK(sigqueue(pid, s, v) == 0);
	} else {
		CHECK(kill(pid, SIGUSR1) == 0);
	}
	CHECK(wait_state(pid, 't'), "the child did not stop for its signal");
	ptrace_target_detach(t);
	ptrace_target_release(t);
	size_t want = queued ? 3 : 1;
	size_t got = read_for(fd, buf, want, 2000);
	CHECK(got == want, "%s: %zu of %zu signals handled after the detach",
	      queued ? "queued" : "signal", got, want);
	long tracer;
	char st = state_of(pid, &tracer);
	CHECK(tracer == 0 && st != 't' && st != 'T', "after the detach: state %c, tracer %ld", st,
	      tracer);
	end_child(pid, fd);
}

static void
test_group_stop(void)
{
	int fd;
	char buf[8];
	pid_t pid = start_child(&fd);
	CHECK(read_for(fd, buf, 1, 2000) == 1);
	struct ptrace_target *t = attach(pid);
	if (!t) {
		end_child(pid, fd);
		return;
	}
	CHECK(kill(pid, SIGSTOP) == 0);
	/* Seized, the group-stop waits for us (t) until it is answered. */
	CHECK(wait_state(pid, 't'), "the child did not stop");
	ptrace_target_detach(t);
	ptrace_target_release(t);
	long tracer;
	CHECK(wait_state(pid, 'T'), "after the detach the child is not in its job-control stop");
	CHECK(state_of(pid, &tracer) == 'T' && tracer == 0);
	/* Still a stop SIGCONT ends: the child handles the next signal. */
	CHECK(kill(pid, SIGCONT) == 0);
	CHECK(wait_state(pid, 'S'), "SIGCONT did not end the stop");
	CHECK(kill(pid, SIGUSR1) == 0);
	CHECK(read_for(fd, buf, 1, 2000) == 1, "the continued child handles no signal");
	end_child(pid, fd);
}

int
main(void)
{
	test_signal(false);
	test_signal(true);
	test_group_stop();
	return check_exit_status("unit-detach");
}
