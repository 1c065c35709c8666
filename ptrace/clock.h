/* ptrace/clock.h - the one clock of stackspy and its units.
 *
 * CLOCK_MONOTONIC in nanoseconds: pauses, ticks, deadlines and reload
 * intervals are all measured with it.  CLOCK_REALTIME only where the
 * outside world wants it: the wall-clock times of a profile, and the
 * deadlines of pthread_cond_timedwait and pthread_timedjoin_np.  The
 * lowest file of ptrace/ (it calls nothing of stackspy); every other
 * module may use it.
 */
#ifndef STACKSPY_PTRACE_CLOCK_H
#define STACKSPY_PTRACE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define NS_PER_US  1000ull
#define NS_PER_MS  1000000ull
#define NS_PER_SEC 1000000000ull
#define US_PER_MS  1000ull
#define MS_PER_SEC 1000ull

uint64_t ptrace_clock_monotonic_ns(void);
/* CLOCK_REALTIME in nanoseconds since the epoch. */
uint64_t ptrace_clock_realtime_ns(void);
/* The CLOCK_REALTIME time ns from now: the deadline of a wait of at most ns
 * by pthread_cond_timedwait (condition variables of default attributes)
 * or pthread_timedjoin_np, which take that clock. */
struct timespec ptrace_clock_realtime_deadline(uint64_t ns);

/* ns as a struct timespec (a duration, or a time of a clock). */
static inline struct timespec
ns_to_timespec(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / NS_PER_SEC), (long)(ns % NS_PER_SEC) };
}

static inline uint64_t
timespec_to_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NS_PER_SEC + (uint64_t)ts->tv_nsec;
}

/* Whole milliseconds from now to deadline (both ptrace_clock_monotonic_ns), rounded up;
 * 0 once it has passed. */
static inline int
ms_until(uint64_t deadline, uint64_t now)
{
	return now >= deadline ? 0 : (int)((deadline - now + NS_PER_MS - 1) / NS_PER_MS);
}

#endif
