/* sampler/signals.c - handlers only set a flag; the command loop sees it,
 * detaches every tracee, then re-raises (strace's interrupt()/cleanup()). */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler/sampler.h"

volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
}

void
signals_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking call returns EINTR and the loop looks at
	 * the flag. */
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* Output to a closed pipe is an error we report, not a death with
	 * tracees attached. */
	signal(SIGPIPE, SIG_IGN);
}

void
signals_reraise(void)
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
