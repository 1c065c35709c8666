/*
 * stoplag.c: how long a thread running on another CPU goes on after a
 * tracer's PTRACE_INTERRUPT, on this host (tests/record-oncpu.test,
 * README "On-CPU": the cross-CPU stop lag).
 *
 * A child spins on CPU A, writing CLOCK_MONOTONIC to shared memory at every
 * turn of its loop; the parent, on CPU B, seizes it and ROUNDS times
 * interrupts it, waits for the stop, reads the last time the child wrote
 * (it wrote none after it stopped) and lets it go.  That time minus the
 * time of the interrupt is how far the child ran past it: the kernel's
 * signal wake-up reaches a thread on another CPU by an inter-processor
 * interrupt, about a microsecond on bare metal, tens of them in some
 * virtual machines.  An on-CPU sample of such a thread shows where it was
 * that much after the tracer looked.
 *
 * Only the rounds that found the child running count (it wrote after the
 * interrupt): on a loaded host it also waits for its CPU, at nice -20 less
 * often, and an interrupt then stops it where it waits.  Each interrupt
 * comes once the child runs again, as soon as it wrote after its last
 * stop (the parent spins for that, polling every 100 us after a
 * millisecond), and the parent runs at nice -20 too: its wake-ups at the
 * stops do not wait for its CPU.  A fixed 1 ms sleep before each
 * interrupt took 7-12 s of a loaded 2-CPU VM (0.4-1.4 s now; spinning on
 * waitpid(WNOHANG) for the stops as well ran into the 30 s alarm there
 * under two CPU burners and make -j2 check).  The lag came out 1-1.5 us lower
 * without the sleep (medians 20.7-22.9 us against 22.4-24.3 us, A/B on
 * that VM): the interrupt no longer comes from a CPU just woken, as
 * stackspy's ticks do; record-oncpu's LAG_BIAS is that much tighter.
 *
 * Usage: stoplag [ROUNDS]   (default 200)
 * Prints "stoplag median M p90 P us" and exits 0; exits 77 with a reason
 * on a host of one CPU, or where fewer than a tenth of ROUNDS tries in ten
 * found it running; 1 on an error.
 */
#include "target.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#define MAX_ROUNDS 10000

static long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Return once the child wrote a time other than last: it runs in user
 * space again (spinning for it a millisecond, then polling). */
static void
wait_running(volatile long *shared, long last)
{
	long start = now_ns();

	while (shared[0] == last)
		if (now_ns() - start > 1000000)
			usleep(100);
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *) a, y = *(const long *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 200;
	cpu_set_t allowed;
	int cpus[2], n = 0;

	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "stoplag: ROUNDS must be 1-%d\n", MAX_ROUNDS);
		return 1;
	}
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		perror("stoplag: sched_getaffinity");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	if (n < 2) {
		fprintf(stderr, "stoplag: one CPU: no other CPU to interrupt a thread on\n");
		return 77;
	}

	volatile long *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("stoplag: mmap");
		return 1;
	}
	long *lag = calloc((size_t) rounds, sizeof(*lag));
	if (!lag) {
		perror("stoplag: calloc");
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		perror("stoplag: fork");
		return 1;
	}
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);
		pin(cpus[0]);
		setpriority(PRIO_PROCESS, 0, -20);
		for (;;)
			shared[0] = now_ns();
	}
	/* Whatever happens below, the child does not outlive this run. */
	alarm(30);
	int status = 1;
	if (pin(cpus[1]) < 0) {
		perror("stoplag: sched_setaffinity");
		goto out;
	}
	/* The parent's turns too: a round is tens of microseconds of its CPU,
	 * and at nice 0 on a loaded host each wait for that CPU cost more. */
	setpriority(PRIO_PROCESS, 0, -20);
	while (shared[0] == 0)
		usleep(1000);
	if (ptrace(PTRACE_SEIZE, child, 0L, 0L) < 0) {
		perror("stoplag: PTRACE_SEIZE");
		goto out;
	}
	int done = 0;
	long last = 0;
	for (int tries = 0; done < rounds && tries < 10 * rounds; tries++) {
		wait_running(shared, last);
		long t0 = now_ns();
		if (ptrace(PTRACE_INTERRUPT, child, 0L, 0L) < 0) {
			perror("stoplag: PTRACE_INTERRUPT");
			goto out;
		}
		int st;
		if (waitpid(child, &st, __WALL) != child || !WIFSTOPPED(st)) {
			fprintf(stderr, "stoplag: the child did not stop\n");
			goto out;
		}
		last = shared[0];
		long ran = last - t0;
		if (ptrace(PTRACE_CONT, child, 0L, 0L) < 0) {
			perror("stoplag: PTRACE_CONT");
			goto out;
		}
		if (ran > 0)
			lag[done++] = ran;
	}
	if (done < rounds / 10 || done == 0) {
		fprintf(stderr, "stoplag: the child was running at only %d of %d interrupts"
			" (a loaded host)\n", done, 10 * rounds);
		status = 77;
		goto out;
	}
	qsort(lag, (size_t) done, sizeof(*lag), cmp_long);
	long med = lag[done / 2], p90 = lag[done * 9 / 10];
	printf("stoplag median %.1f p90 %.1f us\n", med / 1e3, p90 / 1e3);
	status = 0;
out:
	kill(child, SIGKILL);
	waitpid(child, NULL, __WALL);
	free(lag);
	return status;
}
