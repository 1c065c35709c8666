/* sampler/signals.h - the signals that ask stackspy to stop or to step
 * aside (job control): handlers only set a flag the loops check.  Defined
 * in sampler/signals.c.
 *
 * For the commands and the sampling loop of sampler/.
 */
#ifndef STACKSPY_SAMPLER_SIGNALS_H
#define STACKSPY_SAMPLER_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* The signal that asked us to stop (any whose default action would end
 * stackspy: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, real-time
 * signals, ...), 0 while none has.  Handlers only set it. */
extern volatile sig_atomic_t stop_signal;
/* A job-control stop (SIGTSTP, SIGTTIN, SIGTTOU) that came while tracees
 * were held: the loop detaches everything, then calls sampler_signals_job_stop(). */
extern volatile sig_atomic_t job_stop_signal;
void sampler_signals_install(void);
/* If a job-control stop is pending, stop now (nothing may be traced any
 * more) and return true once continued (SIGCONT); false if none was. */
bool sampler_signals_job_stop(void);
/* After cleanup: die of the same signal, as an interrupted program should. */
void sampler_signals_reraise(void) __attribute__((noreturn));
/* "SIGTERM", "SIGRTMIN+3", "signal 99": a static string (not reentrant
 * for the last two). */
const char *sampler_signal_name(int sig);

#endif
