/* ptrace/clock.c - CLOCK_MONOTONIC in nanoseconds (clock.h). */
#include "config.h"

#include "ptrace/clock.h"

uint64_t
monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_to_ns(&ts);
}
