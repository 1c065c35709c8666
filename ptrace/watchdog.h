/* ptrace/watchdog.h - the watchdog: a child process that SIGKILLs a
 * tracer stopped or stuck while it holds tracees, so that the kernel
 * releases them.  Defined in ptrace/watchdog.c.
 *
 * ptrace/ starts it at the first attach and feeds it its own waits; the
 * command layer (sampler/) promises progress from its loops
 * (ptrace_watchdog_alive) and answers a rescue.
 */
#ifndef STACKSPY_PTRACE_WATCHDOG_H
#define STACKSPY_PTRACE_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* How long the tracer may stay in job-control stop (kill -STOP) while it
 * holds tracees before the watchdog SIGKILLs it, so that the kernel
 * releases them (running, their signals delivered).  See watchdog.c. */
#define WATCHDOG_BOUND_MS 100
/* How late a running tracer may be past the time it promised to be back
 * by (ptrace_watchdog_alive) while it holds tracees, before the watchdog
 * SIGKILLs it: a deadlock or an endless loop of ours does not stall the
 * target for longer.  Generous: work that does not yield (a large DWARF
 * read for --source) must not trip it. */
#define WATCHDOG_STUCK_MS 5000
/* How long the watchdog waits for a stuck (running) tracer to write what
 * it has before it kills it. */
#define WATCHDOG_RESCUE_MS 1000

/* The watchdog is about to kill us (stuck while holding tracees): write
 * what we have now, from a thread that is not stuck, then say so with
 * ptrace_watchdog_rescued() (and exit).  Async-signal-safe reads. */
bool ptrace_watchdog_rescue_wanted(void);
void ptrace_watchdog_rescued(void);

/* The tracer's promise to the watchdog: it will be back (handling tracee
 * events) by wake_ns (ptrace_clock_monotonic_ns; a past time such as 0: it is back
 * now; UINT64_MAX: it waits for events with no timeout, which is progress
 * enough).  Called before each wait and
 * after each event loop pass; ptrace/'s own waits call it. */
void ptrace_watchdog_alive(uint64_t wake_ns);

/* Start the watchdog (a child process, out of our process group, that dies
 * with us) once; the first attach or launch does it.  Returns 0 or a
 * negative errno (then there is no watchdog: a SIGSTOPped stackspy would
 * stall its tracees). */
int ptrace_watchdog_start(void);
/* Its pid, -1 when none. */
pid_t ptrace_watchdog_pid(void);

#endif
