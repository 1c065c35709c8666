/* sampler/signals.c - handlers only set a flag; the command loop sees it,
 * detaches every tracee, then re-raises (strace's interrupt()/cleanup()).
 *
 * Every signal whose default action would end stackspy ends it this way:
 * dying of it with tracees attached would lose the output (the kernel
 * still lets the tracees go).  The job-control stops (Ctrl-Z: SIGTSTP,
 * SIGTTIN, SIGTTOU) are taken when nothing is traced, or else after the
 * loop has detached (sampler_signals_job_stop): a stopped tracer would park every
 * signal sent to its tracees. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/ptrace.h"
#include "sampler/signals.h"

volatile sig_atomic_t stop_signal;
volatile sig_atomic_t job_stop_signal;

static void
on_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
}

/* Stop now, the default way (so that the shell sees a job stopped by this
 * signal); returns once continued. */
static void
stop_now(int sig)
{
	int saved = errno;
	struct sigaction dfl, old;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, &old);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	sigaction(sig, &old, NULL);
	errno = saved;
}

static void
on_job_stop(int sig)
{
	if (ptrace_held_count() == 0)
		stop_now(sig);  /* nothing of anyone's waits on us */
	else if (!job_stop_signal)
		job_stop_signal = sig;
}

/* Signals whose default action terminates (or dumps core). */
static const int terminating[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
	SIGVTALRM, SIGPROF, SIGIO, SIGXCPU, SIGXFSZ,
#ifdef SIGPWR
	SIGPWR,
#endif
#ifdef SIGSTKFLT
	SIGSTKFLT,
#endif
};

void
sampler_signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking call returns EINTR and the loop looks at
	 * the flag. */
	for (size_t i = 0; i < sizeof(terminating) / sizeof(terminating[0]); i++)
		sigaction(terminating[i], &sa, NULL);
	/* Real-time signals terminate by default too; SIGRTMIN is above
	 * those the C library keeps for itself. */
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaction(sig, &sa, NULL);
	sa.sa_handler = on_job_stop;
	sigaction(SIGTSTP, &sa, NULL);
	sigaction(SIGTTIN, &sa, NULL);
	sigaction(SIGTTOU, &sa, NULL);
	/* Output to a closed pipe is an error we report, not a death with
	 * tracees attached. */
	signal(SIGPIPE, SIG_IGN);
}

bool
sampler_signals_job_stop(void)
{
	int sig = job_stop_signal;
	if (!sig)
		return false;
	job_stop_signal = 0;
	stop_now(sig);
	return true;
}

void
sampler_signals_reraise(void)
{
	int sig = stop_signal ? stop_signal : SIGTERM;
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

const char *
sampler_signal_name(int sig)
{
	static const char *const names[] = {
		[SIGHUP] = "SIGHUP", [SIGINT] = "SIGINT", [SIGQUIT] = "SIGQUIT",
		[SIGILL] = "SIGILL", [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
		[SIGBUS] = "SIGBUS", [SIGFPE] = "SIGFPE", [SIGKILL] = "SIGKILL",
		[SIGUSR1] = "SIGUSR1", [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
		[SIGPIPE] = "SIGPIPE", [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
		[SIGCHLD] = "SIGCHLD", [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
		[SIGTSTP] = "SIGTSTP", [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
		[SIGURG] = "SIGURG", [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
		[SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
		[SIGIO] = "SIGIO", [SIGSYS] = "SIGSYS",
#ifdef SIGSTKFLT
		[SIGSTKFLT] = "SIGSTKFLT",
#endif
#ifdef SIGPWR
		[SIGPWR] = "SIGPWR",
#endif
	};
	static char buf[32];
	if (sig > 0 && (size_t)sig < sizeof(names) / sizeof(names[0]) && names[sig])
		return names[sig];
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, sizeof(buf), "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}
