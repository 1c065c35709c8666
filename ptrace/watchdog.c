/* ptrace/watchdog.c - a process of our own that ends a stopped tracer.
 *
 * A tracee that gets a signal waits in a signal-delivery-stop until its
 * tracer hands the signal on.  A tracer that is itself stopped (kill -STOP
 * cannot be caught) would leave every such thread of the target parked in
 * 't', undelivered, for as long as it stays stopped.  The kernel releases
 * PTRACE_SEIZEd tracees when their tracer dies, running, with their
 * signals: so a small child of stackspy watches /proc/TRACER/stat and
 * SIGKILLs the tracer once it has been in job-control stop ('T') for
 * longer than the bound while it holds tracees.  The price: the output of
 * a stackspy killed this way is lost (its samples were only in memory).
 *
 * A tracer stopped by a debugger (gdb -p, state 't') is stopped as well.
 *
 * A tracer that runs but makes no progress (a deadlock, a loop that never
 * ends: bugs, but the target must not pay for them) is the same harm: it
 * promises, before each wait and after each event it handles, to be back
 * within a known time (ptrace_watchdog_alive), and the watchdog kills it
 * once it is WATCHDOG_STUCK_MS late while it holds tracees.
 * Before killing, the watchdog says why on the tracer's stderr.  A tracer
 * that runs but is stuck is first asked, through the shared page, to write
 * what it has (its unwinding thread does, ptrace_watchdog_rescue_wanted):
 * the watchdog gives it WATCHDOG_RESCUE_MS; a stopped one cannot.
 *
 * The tracer tells the watchdog whether it holds tracees, and by when it
 * will be back, through one shared anonymous page.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/watchdog.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* Written by the tracer, read by the watchdog. */
struct watchdog_page {
	volatile int busy;        /* tracees held (targets, lingering threads) */
	volatile uint64_t back_by_ns; /* ptrace_clock_monotonic_ns the tracer promised to
				     be back by (0: no promise yet) */
	/* Written by the watchdog: 1 when the tracer should write its output
	 * now, before it is killed; the tracer sets 2 once it did. */
	volatile int rescue;
};

static struct watchdog_page *page;
static pid_t watchdog_pid = -1;

/* How often the watchdog looks: a tenth of the bound, so the stall is at
 * most the bound plus one look. */
#define WATCH_INTERVAL_MS (WATCHDOG_BOUND_MS / 10)

/* The tracer's time on a CPU so far (ns; /proc/PID/schedstat), 0 if
 * unknown: a tracer seen stopped twice has been stopped all along only if
 * it has not run in between (under strace -f it is in 't' at each of its
 * system calls, and runs between them). */
static uint64_t
proc_runtime(pid_t pid)
{
	char path[64], buf[128];
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if (ptrace_procfs_read(path, buf, sizeof(buf)) < 0)
		return 0;
	return strtoull(buf, NULL, 10);
}


/* A running tracer that is stuck: ask it to write what it has, and wait
 * for that (or for its exit) at most WATCHDOG_RESCUE_MS. */
static void
ask_rescue(pid_t tracer)
{
	page->rescue = 1;
	const struct timespec step = ns_to_timespec(10 * NS_PER_MS);
	for (int waited = 0; waited < WATCHDOG_RESCUE_MS; waited += 10) {
		nanosleep(&step, NULL);
		if (page->rescue == 2 || getppid() != tracer)
			return;
	}
}

/* Say on the tracer's stderr (reopened through /proc: we hold none of
 * its descriptors) why it is killed, then kill it. */
static void __attribute__((noreturn))
end_tracer(pid_t tracer, const char *why, bool rescue)
{
	char path[64], msg[320];
	if (rescue)
		ask_rescue(tracer);
	if (getppid() != tracer)
		_exit(0);  /* gone meanwhile: the kernel let its tracees go */
	snprintf(path, sizeof(path), "/proc/%d/fd/2", (int)tracer);
	/* O_APPEND: a log file stderr goes to keeps what it holds. */
	int fd = open(path, O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		int n = snprintf(msg, sizeof(msg),
				 "stackspy-watch: stackspy (pid %d) %s while it held "
				 "threads of its targets: killed, so that the kernel "
				 "lets them run; %s\n", (int)tracer, why,
				 page->rescue == 2 ? "it wrote what it had first" :
				 "its output is lost, but for its last checkpoint if one was written");
		if (n > 0) {
			ssize_t w = write(fd, msg, (size_t)n);
			(void)w;  /* nothing to do if it cannot be said */
		}
		close(fd);
	}
	kill(tracer, SIGKILL);
	_exit(0);
}

static void __attribute__((noreturn))
watchdog_main(pid_t tracer)
{
	/* Out of the terminal's process group, so that Ctrl-Z or a kill of
	 * the job does not stop the one that must notice the stop; dies with
	 * the tracer. */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != tracer)
		_exit(0);
	prctl(PR_SET_NAME, "stackspy-watch");
	/* Hold none of the tracer's descriptors: a pipe reader must see
	 * end-of-file when the tracer is done. */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd <= 2; fd++) {
		if (null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	/* With a limit of a million descriptors, closing one by one takes a
	 * while: close_range when the kernel has it. */
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
#endif
	{
		long maxfd = sysconf(_SC_OPEN_MAX);
		for (int fd = 3; fd < (maxfd > 0 && maxfd < 65536 ? maxfd : 65536); fd++)
			close(fd);
	}
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	uint64_t stopped_since = 0, ran = 0;
	const struct timespec tick = ns_to_timespec(WATCH_INTERVAL_MS * NS_PER_MS);
	for (;;) {
		nanosleep(&tick, NULL);
		if (getppid() != tracer)
			_exit(0);
		char s = 0;
		if (ptrace_thread_info(tracer, tracer, &s, NULL, 0) < 0)
			_exit(0);
		if (page->busy <= 0) {
			stopped_since = 0;
			continue;
		}
		uint64_t now = ptrace_clock_monotonic_ns();
		if (s != 'T' && s != 't') {
			stopped_since = 0;
			uint64_t by = page->back_by_ns;
			if (by && now > by &&
			    now - by >= (uint64_t)WATCHDOG_STUCK_MS * NS_PER_MS)
				end_tracer(tracer, "made no progress for "
					   STRINGIFY(WATCHDOG_STUCK_MS) " ms", true);
			continue;
		}
		/* Stopped (kill -STOP, Ctrl-Z not caught, a debugger). */
		uint64_t rt = proc_runtime(tracer);
		if (!stopped_since || (rt && rt != ran)) {
			stopped_since = now;
			ran = rt;
		} else if (now - stopped_since >= (uint64_t)WATCHDOG_BOUND_MS * NS_PER_MS)
			end_tracer(tracer, s == 'T' ? "was stopped" : "was stopped by a debugger",
				   false);
	}
}

int
ptrace_watchdog_start(void)
{
	if (watchdog_pid > 0)
		return 0;
	if (!page) {
		void *m = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
		page = m;
	}
	pid_t tracer = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		watchdog_main(tracer);
	watchdog_pid = pid;
	return 0;
}

pid_t
ptrace_watchdog_pid(void)
{
	return watchdog_pid;
}

bool
ptrace_watchdog_rescue_wanted(void)
{
	return page && page->rescue == 1;
}

void
ptrace_watchdog_rescued(void)
{
	if (page)
		page->rescue = 2;
}

void
ptrace_watchdog_alive(uint64_t wake_ns)
{
	if (!page)
		return;
	uint64_t now = ptrace_clock_monotonic_ns();
	page->back_by_ns = wake_ns == UINT64_MAX ? UINT64_MAX : wake_ns > now ? wake_ns : now;
}

void
ptrace_watchdog_set_busy(int n)
{
	if (page)
		page->busy = n;
}

void
ptrace_watchdog_forget(void)
{
	watchdog_pid = -1;
	page = NULL;  /* the parent's mapping stays; a new one for ours */
}
