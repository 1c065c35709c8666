/*
 * bench/fixed-work.c - a fixed amount of CPU work that reports how long it
 * took, for bench/record-overhead.sh (the slowdown a profiler causes).
 *
 *   bench/fixed-work [UNITS]    (default 2000 units of ~1 ms)
 *
 * One thread, no system calls while it works: a dependent multiply-add
 * chain through two functions (3:1, like tests/targets/ratio.c) so that
 * the stacks are real.  Prints "wall S cpu S" (seconds, CLOCK_MONOTONIC
 * and CLOCK_PROCESS_CPUTIME_ID).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 250000L

static volatile unsigned long sink;

unsigned long fw_heavy(unsigned long x);
unsigned long fw_light(unsigned long x);

__attribute__((noinline)) unsigned long
fw_heavy(unsigned long x)
{
	for (long i = 0; i < 3 * UNIT / 4; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	__asm__ __volatile__("" ::: "memory");
	return x;
}

__attribute__((noinline)) unsigned long
fw_light(unsigned long x)
{
	for (long i = 0; i < UNIT / 4; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	__asm__ __volatile__("" ::: "memory");
	return x;
}

static double
clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 2000;
	unsigned long x = 1;
	double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

	for (long u = 0; u < units; u++)
		x = fw_light(fw_heavy(x));
	sink = x;
	printf("wall %.4f cpu %.4f\n", clock_s(CLOCK_MONOTONIC) - w0,
	       clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
