/* ptrace/wait.c - waiting for tracees and answering their stops.
 *
 * Tracee stops are announced to the tracer with SIGCHLD: we keep SIGCHLD
 * blocked and read it from a signalfd, so a wait can have a timeout
 * without timers or signal handlers.  Each wait status is classified
 * once (trace_stop_of, ptrace-internal.h), and ptrace_tracee_resume answers
 * every kind the one way the ptrace rules (DESIGN.md) want: a signal is
 * handed on, a group-stop is kept with PTRACE_LISTEN.
 *
 * A wait for one known stop (ptrace_tracee_wait_until) is a blocking waitpid
 * instead, which the kernel ends at that stop: the SIGCHLD path costs a
 * signal, a poll wakeup and two more system calls a stop, a tenth of a
 * dump's time (bench/dump-parked.sh).  Its deadline is a timer of the
 * waiting thread's own that sends it SIGURG, whose handler does nothing
 * and is installed without SA_RESTART, so that the waitpid returns EINTR.
 * SIGURG is ignored by default: one from outside costs a spurious EINTR,
 * nothing else (every blocking call of ours retries or ends on EINTR).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/clock.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"
#include "ptrace/watchdog.h"

static int sigchld_fd = -1;
/* Set when a SIGCHLD from some other tracee than the one waited for was
 * read, or may have been (SIGCHLDs coalesce): ptrace_target_poll must look. */
static bool other_stop_pending;

int
ptrace_sigchld_setup(void)
{
	if (sigchld_fd >= 0)
		return 0;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	sigchld_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return sigchld_fd < 0 ? -errno : 0;
}

int
ptrace_event_fd(void)
{
	return sigchld_fd;
}

bool
ptrace_sigchld_drain(void)
{
	struct signalfd_siginfo si[8];
	bool pending = other_stop_pending;
	ssize_t n;
	other_stop_pending = false;
	/* A read that does not fill the buffer has emptied the queue. */
	while (sigchld_fd >= 0 && (n = read(sigchld_fd, si, sizeof(si))) > 0) {
		pending = true;
		if (n < (ssize_t)sizeof(si))
			break;
	}
	return pending;
}

/* The deadline timer of ptrace_tracee_wait_until: made by the first thread that
 * waits so, and used by that thread only (it is the one the timer
 * signals). */
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static bool wake_ok;
static timer_t wake_timer;
static pid_t wake_tid;

static void
on_wake(int sig)
{
	(void)sig;
}

static void
wake_setup(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGURG, &sa, NULL) < 0)
		return;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGURG;
	wake_tid = (pid_t)syscall(SYS_gettid);
	sev._sigev_un._tid = wake_tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &wake_timer) < 0)
		return;
	sigset_t urg;
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	wake_ok = pthread_sigmask(SIG_UNBLOCK, &urg, NULL) == 0;
}

bool
ptrace_tracee_wait_blocking_ok(void)
{
	pthread_once(&wake_once, wake_setup);
	return wake_ok && (pid_t)syscall(SYS_gettid) == wake_tid;
}

/* Arm the timer for deadline_ns (0: disarm).  It fires again every
 * WAKE_REPEAT_NS after that: a firing that lands between the arming and
 * the waitpid (a loaded host, a deadline a few microseconds away) is
 * handled before the wait begins and interrupts nothing, and the wait
 * would otherwise last until the thread stops, for a thread in D never. */
#define WAKE_REPEAT_NS (NS_PER_MS / 2)

static void
wake_arm(uint64_t deadline_ns)
{
	struct itimerspec its;
	memset(&its, 0, sizeof(its));
	if (deadline_ns) {
		its.it_value = ns_to_timespec(deadline_ns);
		its.it_interval = ns_to_timespec(WAKE_REPEAT_NS);
	}
	timer_settime(wake_timer, TIMER_ABSTIME, &its, NULL);
}

/* STACKSPY_TEST_LATE_WAIT=1 (tests/dump-dstate.test only): every
 * blocking wait begins just after its deadline, as on a host that
 * preempts us between the arming and the waitpid: the first firing is
 * spent before the wait, which only the repeat then ends. */
static bool
test_late_wait(void)
{
	static int late = -1;
	if (late < 0) {
		const char *e = getenv("STACKSPY_TEST_LATE_WAIT");
		late = e && *e == '1';
	}
	return late;
}

/* The timer is left armed when a wait ends (a disarming there would be
 * one more system call while the thread that stopped waits for its copy):
 * the next wait arms it anew, ptrace_tracee_wait_until_end disarms it.  A firing
 * in between runs the empty handler: nothing of ours blocks meanwhile. */
static bool wake_armed;

int
ptrace_tracee_wait_until(pid_t tid, int *status, uint64_t deadline_ns)
{
	for (bool blocking = false;; blocking = true) {
		pid_t r = waitpid(tid, status, __WALL | (blocking ? 0 : WNOHANG));
		if (r == tid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		/* Not stopped yet: block till it is or the deadline passes. */
		if (ptrace_clock_monotonic_ns() >= deadline_ns)
			return 0;
		if (!blocking) {
			ptrace_watchdog_alive(deadline_ns);
			wake_armed = deadline_ns != UINT64_MAX;
			wake_arm(wake_armed ? deadline_ns : 0);
			while (test_late_wait() && wake_armed &&
			       ptrace_clock_monotonic_ns() < deadline_ns + NS_PER_MS / 10)
				;
		}
	}
}

void
ptrace_tracee_wait_until_end(void)
{
	if (wake_armed)
		wake_arm(0);  /* a firing already due lands now, harmlessly */
	wake_armed = false;
}

int
ptrace_tracee_wait(pid_t tid, int *status, int timeout_ms)
{
	uint64_t deadline = timeout_ms < 0 ? 0 :
			    ptrace_clock_monotonic_ns() + (uint64_t)timeout_ms * NS_PER_MS;
	for (;;) {
		pid_t r = waitpid(tid, status, WNOHANG | __WALL);
		if (r == tid)
			return 1;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r < 0)
			continue;
		struct timespec ts, *tsp = NULL;
		if (timeout_ms >= 0) {
			uint64_t now = ptrace_clock_monotonic_ns();
			if (now >= deadline)
				return 0;
			ts = ns_to_timespec(deadline - now);
			tsp = &ts;
		}
		struct pollfd pfd = { .fd = sigchld_fd, .events = POLLIN };
		ptrace_watchdog_alive(tsp ? deadline : UINT64_MAX);
		int pr = ppoll(&pfd, 1, tsp, NULL);
		if (pr > 0) {
			struct signalfd_siginfo si;
			/* SIGCHLDs coalesce: the one we read may stand for
			 * another tracee's stop too, so the next poll must look
			 * whatever pid it names. */
			while (read(sigchld_fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				other_stop_pending = true;
		}
	}
}

bool
ptrace_tracee_sleep(uint64_t wake_ns, pid_t expected)
{
	struct timespec ts, *tsp = NULL;
	if (wake_ns != UINT64_MAX) {
		uint64_t now = ptrace_clock_monotonic_ns();
		ts = ns_to_timespec(wake_ns > now ? wake_ns - now : 0);
		tsp = &ts;
	}
	struct pollfd pfd = { .fd = sigchld_fd, .events = POLLIN };
	bool other = false;
	ptrace_watchdog_alive(wake_ns);
	if (ppoll(&pfd, 1, tsp, NULL) > 0) {
		/* Several at a time: a read that does not fill the buffer
		 * has emptied the queue, and no read ends in EAGAIN. */
		struct signalfd_siginfo si[8];
		ssize_t r;
		do {
			r = read(sigchld_fd, si, sizeof(si));
			for (ssize_t k = 0; r > 0 && k < r / (ssize_t)sizeof(si[0]); k++) {
				other_stop_pending = true;
				if ((pid_t)si[k].ssi_pid != expected)
					other = true;
			}
		} while (r == (ssize_t)sizeof(si));
	}
	return other;
}

int
ptrace_tracee_resume(struct tracee *th, int st)
{
	long r;
	switch (trace_stop_of(st)) {
	case TRACE_GONE:
		th->state = TRACEE_GONE;
		return -ESRCH;
	case TRACE_SIGNAL:
		/* signal-delivery-stop: deliver the signal as if we were not here. */
		r = ptrace(PTRACE_CONT, th->tid, 0L, trace_signal(st));
		th->state = TRACEE_RUNNING;
		break;
	case TRACE_GROUP_STOP:
		/* Stay stopped, but let SIGCONT end the stop as it would without us. */
		r = ptrace(PTRACE_LISTEN, th->tid, 0L, 0L);
		th->state = TRACEE_LISTENING;
		break;
	default:
		r = ptrace(PTRACE_CONT, th->tid, 0L, 0L);
		th->state = TRACEE_RUNNING;
		break;
	}
	if (r < 0) {
		if (errno == ESRCH)
			th->state = TRACEE_GONE;
		return -errno;
	}
	return 0;
}
