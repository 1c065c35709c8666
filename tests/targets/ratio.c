/*
 * ratio.c: a CPU-bound workload with known proportions, for the record
 * tests (tests/record-*.test) and benchmarks (bench/record-*.sh).
 *
 * Each worker thread loops forever: work_heavy() then work_light(), the
 * same arithmetic loop (a dependent multiply-add chain, no memory traffic,
 * no system calls) run RATIO_HEAVY and RATIO_LIGHT times as many
 * iterations, so an on-CPU profiler must find the two functions' self
 * time in the ratio 3:1 -- no matter how fast the machine is or how busy.
 * At start the main thread measures that ratio on its own CPU clock and
 * prints it ("calibration heavy/light R cpu/wall C"): C near 1 shows the
 * work is CPU-bound, and the tests compare against R, not against 3.
 *
 * Usage: ratio [-w WORKERS] [-l LATE_MS] [-s SECONDS] [-x] [-p] [-y]
 *   -w N     N worker threads "r-work-I" (default 1)
 *   -l MS    MS ms after "ready", start one more worker "r-late" and print
 *            "thread r-late TID" (threads created mid-run)
 *   -s S     exit(0) after S seconds, printing "run cpu/wall C" (the
 *            process's CPU time per second of its life) first (launch mode: the command ends the
 *            recording); without it the main thread serves stdin as in
 *            target.h and exits at end of file
 *   -x       the main thread works too, instead of sleeping (a process
 *            with a single thread)
 *   -f N     a pre-fork server: also N worker processes "r-proc-I" (the
 *            work in their one thread; prints "process r-proc-I PID"),
 *            forked before "ready" (tests/record-subprocesses.test)
 *   -c MS    after "ready", fork a short-lived child "r-child" every MS ms
 *            that works about 2 ms and exits (with -s; children that
 *            come and go while sampled); -c 0: fork without a pause (the
 *            master is nearly always inside fork)
 *   -m MB    touch MB megabytes first, so that each fork takes long
 *            copying the page tables (a detach meets a fork in progress)
 *   -p       the workers run one loop, work_path, reached through two
 *            callers with the same frame, path_heavy (3 units) and
 *            path_light (1 unit): the same pc at the same sp, with
 *            different return addresses on the stack
 *            (tests/record-memo.test)
 *   -y       duty-cycle the workers: about 5 ms of the work, then 15 ms
 *            asleep in nanosleep (called from work_forever), a quarter of
 *            a CPU each, for tests that need the workers' stacks but do
 *            not measure shares or CPU time (the leaf of a thread sampled
 *            on its way into or out of the sleep is not work_heavy/light)
 *
 * Prints "thread NAME TID" for each thread, then "ready".  The workers
 * never sleep (but with -y), so tests must not use wait_ready/wait_asleep
 * on it.
 */
#include "target.h"

#include <sys/wait.h>

#define RATIO_HEAVY 3
#define RATIO_LIGHT 1
#define RATIO_UNIT  20000  /* iterations: ~50 us per unit on a 2 GHz core */
#define MAX_WORKERS 64

/* The chains' results go here, so the loops cannot be dropped. */
static volatile unsigned long sink;
static volatile pid_t tids[MAX_WORKERS + 1];
static volatile int go_late;

unsigned long work_heavy(unsigned long x);
unsigned long work_light(unsigned long x);
void *worker(void *arg);

/* The same loop twice (noipa keeps gcc from folding them into one). */
NOINLINE unsigned long
work_heavy(unsigned long x)
{
	for (long i = 0; i < RATIO_HEAVY * RATIO_UNIT; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	BARRIER();
	return x;
}

NOINLINE unsigned long
work_light(unsigned long x)
{
	for (long i = 0; i < RATIO_LIGHT * RATIO_UNIT; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	BARRIER();
	return x;
}

unsigned long work_path(unsigned long x, long units);
unsigned long path_heavy(unsigned long x);
unsigned long path_light(unsigned long x);
static int by_paths;
static int duty;


NOINLINE unsigned long
work_path(unsigned long x, long units)
{
	for (long i = 0; i < units * RATIO_UNIT; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	BARRIER();
	return x;
}

NOINLINE unsigned long
path_heavy(unsigned long x)
{
	x = work_path(x, RATIO_HEAVY);
	BARRIER();
	return x;
}

NOINLINE unsigned long
path_light(unsigned long x)
{
	x = work_path(x, RATIO_LIGHT);
	BARRIER();
	return x;
}

static NOINLINE void
work_forever(void)
{
	unsigned long x = (unsigned long) target_gettid();
	struct target_duty d = { 5, 15, 0 };

	for (;;) {
		if (by_paths) {
			x = path_heavy(x);
			BARRIER();
			x = path_light(x);
		} else {
			x = work_heavy(x);
			BARRIER();
			x = work_light(x);
		}
		BARRIER();
		sink = x;
		if (duty)
			target_duty(&d);
	}
}

NOINLINE void *
worker(void *arg)
{
	long i = (long) arg;
	char name[16];

	if (i == MAX_WORKERS)
		snprintf(name, sizeof name, "r-late");
	else
		snprintf(name, sizeof name, "r-work-%ld", i);
	target_register(name, &tids[i]);
	work_forever();
	return arg;
}

static double
clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Heavy and light, each timed on this thread's CPU clock over ~0.1 s. */
static NOINLINE void
calibrate(void)
{
	double heavy = 0, light = 0, w0, c0, t;
	unsigned long x = 1;

	w0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	for (int round = 0; round < 5; round++) {
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
		for (int k = 0; k < 60; k++)
			x = work_heavy(x);
		heavy += clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
		t = clock_s(CLOCK_THREAD_CPUTIME_ID);
		for (int k = 0; k < 60; k++)
			x = work_light(x);
		light += clock_s(CLOCK_THREAD_CPUTIME_ID) - t;
	}
	sink = x;
	printf("calibration heavy/light %.3f cpu/wall %.2f\n", heavy / light,
	       (clock_s(CLOCK_THREAD_CPUTIME_ID) - c0) /
	       (clock_s(CLOCK_MONOTONIC) - w0));
}

/* A worker process: the same work in its only thread.  It dies with
 * the master (target_init's PR_SET_PDEATHSIG in the child too). */
static pid_t
fork_worker(const char *name)
{
	pid_t pid = fork();

	if (pid < 0)
		target_die("fork");
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
			_exit(1);
		prctl(PR_SET_NAME, name);
		work_forever();
	}
	return pid;
}

/* A child that works about 2 ms (40 units of ~50 us) and exits. */
static void
fork_short_child(void)
{
	pid_t pid = fork();

	if (pid < 0)
		target_die("fork");
	if (pid == 0) {
		unsigned long x = (unsigned long) getpid();

		prctl(PR_SET_NAME, "r-child");
		for (int k = 0; k < 10; k++) {
			x = work_heavy(x);
			x = work_light(x);
		}
		sink = x;
		_exit(0);
	}
}

static void
start_worker(long i)
{
	pthread_t th;

	errno = pthread_create(&th, NULL, worker, (void *) i);
	if (errno)
		target_die("pthread_create");
	if (i == MAX_WORKERS)
		printf("thread r-late %d\n", (int) target_wait_tid(&tids[i]));
	else
		printf("thread r-work-%ld %d\n", i,
		       (int) target_wait_tid(&tids[i]));
}

int
main(int argc, char **argv)
{
	long workers = 1, late_ms = -1, seconds = -1, procs = 0, churn_ms = -1, mb = 0;
	int main_works = 0, c;
	double t0;
	char buf[256];
	double start = clock_s(CLOCK_MONOTONIC);

	target_init();
	pthread_setname_np(pthread_self(), "ratio");
	while ((c = getopt(argc, argv, "w:l:s:xf:c:m:py")) != -1) {
		switch (c) {
		case 'w': workers = atol(optarg); break;
		case 'l': late_ms = atol(optarg); break;
		case 's': seconds = atol(optarg); break;
		case 'x': main_works = 1; break;
		case 'f': procs = atol(optarg); break;
		case 'c': churn_ms = atol(optarg); break;
		case 'm': mb = atol(optarg); break;
		case 'p': by_paths = 1; break;
		case 'y': duty = 1; break;
		default:
			fprintf(stderr, "usage: ratio [-w N] [-l MS] [-s S] [-x] [-f N] [-c MS] [-m MB] [-p] [-y]\n");
			return 2;
		}
	}
	if (workers < 0 || workers > MAX_WORKERS)
		workers = 1;
	if (mb > 0) {
		char *mem = malloc((size_t) mb << 20);

		if (!mem)
			target_die("malloc");
		memset(mem, 1, (size_t) mb << 20);
	}
	calibrate();
	printf("thread ratio %d\n", (int) target_gettid());
	for (long i = 0; i < workers; i++)
		start_worker(i);
	for (long i = 0; i < procs && i < MAX_WORKERS; i++) {
		char name[16];

		snprintf(name, sizeof name, "r-proc-%ld", i);
		printf("process %s %d\n", name, (int) fork_worker(name));
	}
	if (churn_ms >= 0 && seconds < 0) {
		fprintf(stderr, "ratio: -c needs -s\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	t0 = clock_s(CLOCK_MONOTONIC);
	if (main_works) {
		if (late_ms >= 0 || seconds >= 0) {
			fprintf(stderr, "ratio: -x goes alone\n");
			return 2;
		}
		work_forever();
	}
	if (late_ms >= 0) {
		target_sleep_ms(late_ms);
		start_worker(MAX_WORKERS);
	}
	if (seconds >= 0) {
		double left = (double) seconds - (clock_s(CLOCK_MONOTONIC) - t0);

		while (churn_ms >= 0 && left > 0) {
			fork_short_child();
			if (churn_ms > 0)
				target_sleep_ms(churn_ms);
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			left = (double) seconds - (clock_s(CLOCK_MONOTONIC) - t0);
		}
		if (left > 0)
			target_sleep_ms((long) (left * 1000));
		/* The CPU the process had per second of its life: what an
		 * on-CPU profiler of the whole run can find (a busy host
		 * gives it less than its threads would use). */
		printf("run cpu/wall %.2f\n", clock_s(CLOCK_PROCESS_CPUTIME_ID) /
		       (clock_s(CLOCK_MONOTONIC) - start));
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
