/* ptrace/clock.c - the clocks in nanoseconds (clock.h). */
#include "config.h"

#include "ptrace/clock.h"

uint64_t
monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_to_ns(&ts);
}

uint64_t
realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return timespec_to_ns(&ts);
}

struct timespec
realtime_deadline(uint64_t ns)
{
	return ns_to_timespec(realtime_ns() + ns);
}
