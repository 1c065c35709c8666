/*
 * sleepwork.c: a server-like workload for the on-CPU tests and benches
 * (tests/record-oncpu.test, bench/oncpu-busy.sh): threads that wait and
 * work in short turns.
 *
 * Each worker thread "sw-work-I" loops: clock_nanosleep for SLEEP_US, then
 * compute_heavy() and compute_light(), the same dependent multiply-add
 * chain run 3 and 1 units long (a fixed number of iterations, so the split
 * is 3:1 in CPU time however often the thread is preempted).  An on-CPU
 * profile must find ~all of the workers' samples in the two functions, in
 * that ratio, and none in clock_nanosleep: the threads sleep about half of
 * the time, but sleeping is not CPU time.
 *
 * At start the main thread sizes a unit so that heavy + light take
 * WORK_US of CPU, and measures the heavy/light ratio on its own CPU clock
 * ("calibration heavy/light R unit N"); tests compare against R, not 3.
 *
 * Usage: sleepwork [-w WORKERS] [-s SLEEP_US] [-c WORK_US] [-t SECONDS]
 *        sleepwork -B
 *   -w N     N worker threads (default 2)
 *   -s US    sleep per turn (default 200)
 *   -c US    CPU time per turn, heavy + light (default 200)
 *   -t S     exit(0) after S seconds; without it the main thread serves
 *            stdin as in target.h and exits at end of file
 *   -B       burn: one CPU-bound loop and nothing else (no output), to load
 *            the machine; dies with its parent like every target
 *
 * Prints "calibration ...", "thread NAME TID" for each thread, then
 * "ready".  The workers never stay asleep, so tests must not use
 * wait_ready/wait_asleep on it.
 */
#include "target.h"

#define UNITS_HEAVY 3
#define UNITS_LIGHT 1
#define MAX_WORKERS 64

static volatile unsigned long sink;
static volatile pid_t tids[MAX_WORKERS];
static long unit = 10000;     /* iterations of one unit, set by calibrate() */
static long sleep_us = 200;

unsigned long compute_heavy(unsigned long x);
unsigned long compute_light(unsigned long x);
void *worker(void *arg);

/* The same loop twice (noipa keeps gcc from folding them into one). */
NOINLINE unsigned long
compute_heavy(unsigned long x)
{
	for (long i = 0; i < UNITS_HEAVY * unit; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	BARRIER();
	return x;
}

NOINLINE unsigned long
compute_light(unsigned long x)
{
	for (long i = 0; i < UNITS_LIGHT * unit; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	BARRIER();
	return x;
}

static NOINLINE void
serve_forever(void)
{
	unsigned long x = (unsigned long) target_gettid();
	struct timespec ts = { 0, sleep_us * 1000L };

	for (;;) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		BARRIER();
		x = compute_heavy(x);
		BARRIER();
		x = compute_light(x);
		BARRIER();
		sink = x;
	}
}

NOINLINE void *
worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof name, "sw-work-%ld", (long) arg);
	target_register(name, &tids[(long) arg]);
	serve_forever();
	return arg;
}

static double
clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Size a unit so that heavy + light take work_us of CPU, then time the
 * two on this thread's CPU clock. */
static NOINLINE void
calibrate(long work_us)
{
	double heavy = 0, light = 0, t;
	unsigned long x = 1;
	long saved = unit;

	unit = 100000;
	t = clock_s(CLOCK_THREAD_CPUTIME_ID);
	for (int k = 0; k < 10; k++)
		x = compute_light(x);
	t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
	/* 10 light calls = 10 units = 1e6 iterations took t seconds. */
	unit = t > 0 ? (long) ((double) work_us * 1e-6 / (UNITS_HEAVY + UNITS_LIGHT) /
			       (t / 1e6)) : saved;
	if (unit < 100)
		unit = 100;
	for (int round = 0; round < 5; round++) {
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
		for (int k = 0; k < 40; k++)
			x = compute_heavy(x);
		heavy += clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
		for (int k = 0; k < 40; k++)
			x = compute_light(x);
		light += clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
	}
	sink = x;
	printf("calibration heavy/light %.3f unit %ld turn %.0f us\n", heavy / light,
	       unit, (heavy + light) / 40 / 5 * 1e6);
}

static NOINLINE void
burn(void)
{
	unsigned long x = 1;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		BARRIER();
		sink = x;
	}
}

int
main(int argc, char **argv)
{
	long workers = 2, work_us = 200, seconds = -1;
	int c;
	char buf[256];

	target_init();
	while ((c = getopt(argc, argv, "w:s:c:t:B")) != -1) {
		switch (c) {
		case 'w': workers = atol(optarg); break;
		case 's': sleep_us = atol(optarg); break;
		case 'c': work_us = atol(optarg); break;
		case 't': seconds = atol(optarg); break;
		case 'B': burn(); break;
		default:
			fprintf(stderr, "usage: sleepwork [-w N] [-s US] [-c US] [-t S] | -B\n");
			return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS)
		workers = 2;
	if (sleep_us < 1 || sleep_us > 999999)
		sleep_us = 200;
	if (work_us < 1)
		work_us = 200;
	pthread_setname_np(pthread_self(), "sleepwork");
	calibrate(work_us);
	printf("thread sleepwork %d\n", (int) target_gettid());
	for (long i = 0; i < workers; i++) {
		pthread_t th;

		errno = pthread_create(&th, NULL, worker, (void *) i);
		if (errno)
			target_die("pthread_create");
		printf("thread sw-work-%ld %d\n", i, (int) target_wait_tid(&tids[i]));
	}
	printf("ready\n");
	if (seconds >= 0) {
		target_sleep_ms(seconds * 1000);
		fflush(stdout);
		_exit(0);
	}
	for (;;) {
		ssize_t r = read(0, buf, sizeof buf - 1);
		if (!target_command(buf, sizeof buf, r))
			break;
	}
	return 0;
}
