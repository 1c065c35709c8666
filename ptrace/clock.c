/* ptrace/clock.c - the clocks in nanoseconds (clock.h). */
#include "config.h"

#include "ptrace/clock.h"

uint64_t
ptrace_clock_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_to_ns(&ts);
}

uint64_t
ptrace_clock_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return timespec_to_ns(&ts);
}

struct timespec
ptrace_clock_realtime_deadline(uint64_t ns)
{
	return ns_to_timespec(ptrace_clock_realtime_ns() + ns);
}
