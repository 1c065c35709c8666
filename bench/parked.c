/*
 * parked: a process with many threads that all sleep in a known chain,
 *
 *	park_thread -> park_outer -> park_inner -> pthread_cond_wait
 *
 * the worst case for `stackspy dump` (every thread must be interrupted and
 * read) with nothing else going on, so timings measure stackspy alone.
 *
 * Prints its PID on stdout once every thread is parked, then waits to be
 * killed. If stdin is a pipe or socket it also exits when stdin reaches EOF,
 * so a script that dies cannot leak it (`coproc bench/parked`). Other stdins
 * are ignored: a background job's stdin is /dev/null, which would end it at
 * once, and reading a terminal from the background would stop it.
 *
 * parked --floor PID: the serial floor of a dump of PID, what
 * bench/dump-parked.sh holds `stackspy dump` against: for each thread of
 * /proc/PID/task in turn, PTRACE_SEIZE, PTRACE_INTERRUPT, waitpid for the
 * stop, PTRACE_GETREGSET NT_PRSTATUS, one 16 KiB process_vm_readv from SP,
 * PTRACE_DETACH, and nothing else (no unwinding, no output).  Prints
 * "floor: N threads in X ms".  parked --floor-ahead PID: the same calls,
 * the next thread seized and interrupted as soon as a stop is seen (its
 * way into the stop overlaps the copy before): the best a pipelined
 * tracer can do with them.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <elf.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Thread stacks are mostly untouched; a small size lets -n 10000 fit in the
 * address space limits of CI machines. */
#define PARKED_STACK_SIZE (256 * 1024)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parked_cond = PTHREAD_COND_INITIALIZER;	/* never signalled */
static pthread_cond_t count_cond = PTHREAD_COND_INITIALIZER;
static long nparked;

/* The loop after the wait keeps these from being tail calls, so both
 * frames stay on the stack. */
__attribute__((noinline)) static void park_inner(void)
{
	for (;;)
		pthread_cond_wait(&parked_cond, &lock);
}

__attribute__((noinline)) static void park_outer(void)
{
	pthread_mutex_lock(&lock);
	nparked++;
	pthread_cond_signal(&count_cond);
	park_inner();
	pthread_mutex_unlock(&lock);	/* not reached */
}

/* --wake MS: the threads are counted as parked, then each sets its name
 * and sleeps MS, for ever, as a large pool's idle workers poll
 * (bench/record-threads.sh -m wakers). */
static long wake_ms;

__attribute__((noinline)) static void wake_sleep(void)
{
	usleep((useconds_t)wake_ms * 1000u);
	__asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline)) static void wake_loop(long i)
{
	char name[16];
	for (;;) {
		snprintf(name, sizeof(name), "w-%ld", i);
		pthread_setname_np(pthread_self(), name);
		wake_sleep();
	}
}

static void *park_thread(void *arg)
{
	if (wake_ms) {
		pthread_mutex_lock(&lock);
		nparked++;
		pthread_cond_signal(&count_cond);
		pthread_mutex_unlock(&lock);
		wake_loop((long)(intptr_t)arg);
	}
	park_outer();
	return arg;
}

/* --busy: threads that compute forever in busy_thread -> busy_outer ->
 * busy_inner (the known chain an on-CPU profile must find). */
static volatile unsigned long busy_sink;

__attribute__((noinline)) static void busy_inner(void)
{
	for (unsigned i = 0; i < 100000; i++)
		busy_sink += i;
}

__attribute__((noinline)) static void busy_outer(void)
{
	for (;;) {
		busy_inner();
		__asm__ volatile("" ::: "memory");
	}
}

static void *busy_thread(void *arg)
{
	busy_outer();
	return arg;
}

/* Start n busy threads; nonzero (said) on failure. */
static int start_busy(long n, pthread_attr_t *attr)
{
	for (long i = 0; i < n; i++) {
		pthread_t t;
		int err = pthread_create(&t, attr, busy_thread, NULL);

		if (err) {
			fprintf(stderr, "parked: starting busy thread %ld: %s\n", i + 1,
				strerror(err));
			return 1;
		}
	}
	return 0;
}

#define FLOOR_COPY (16 * 1024)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wait for the interrupt's stop of tid.  Returns 0 or -1. */
static int floor_wait(pid_t tid)
{
	int st;

	for (;;) {
		if (waitpid(tid, &st, __WALL) < 0)
			return -1;
		if (!WIFSTOPPED(st))
			return -1;
		if ((st >> 16) != 0)
			return 0;
		/* A signal on its way in: hand it on, wait for our stop. */
		ptrace(PTRACE_CONT, tid, 0L, (long)WSTOPSIG(st));
	}
}

/* Registers, one copy, detach: the stopped tid's part.  Returns 0 or -1. */
static int floor_take(pid_t tid, unsigned char *buf)
{
	unsigned char regs[512];
	struct iovec iov = { .iov_base = regs, .iov_len = sizeof(regs) };

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) == 0) {
		uint64_t sp = 0;
#if defined(__x86_64__)
		sp = ((struct user_regs_struct *)regs)->rsp;
#elif defined(__aarch64__)
		sp = ((struct user_regs_struct *)regs)->sp;
#endif
		struct iovec local = { .iov_base = buf, .iov_len = FLOOR_COPY };
		struct iovec remote[FLOOR_COPY / 4096 + 1];
		size_t n = 0;
		uint64_t a = sp, end = sp + FLOOR_COPY;
		while (sp && a < end) {
			uint64_t next = (a & ~(uint64_t)4095) + 4096;
			if (next > end)
				next = end;
			remote[n].iov_base = (void *)(uintptr_t)a;
			remote[n++].iov_len = (size_t)(next - a);
			a = next;
		}
		if (n)
			process_vm_readv(tid, &local, 1, remote, n, 0);
	}
	return ptrace(PTRACE_DETACH, tid, 0L, 0L) < 0 ? -1 : 0;
}

/* One thread, as a serial dump must handle it at least.  Returns 0 or -1. */
static int floor_thread(pid_t tid, unsigned char *buf)
{
	if (ptrace(PTRACE_SEIZE, tid, 0L, 0L) < 0 || ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0 ||
	    floor_wait(tid) < 0)
		return -1;
	return floor_take(tid, buf);
}

/* --floor-ahead: the same calls, the next thread seized and interrupted
 * as soon as a stop is seen, before the copy (what a pipelined tracer can
 * do at best: the thread's way into its stop overlaps the copy before).
 * tids[0, n); returns how many failed. */
static size_t floor_ahead(const pid_t *tids, size_t n, unsigned char *buf)
{
	size_t failed = 0;
	bool ok = n && ptrace(PTRACE_SEIZE, tids[0], 0L, 0L) == 0 &&
		  ptrace(PTRACE_INTERRUPT, tids[0], 0L, 0L) == 0;

	for (size_t i = 0; i < n; i++) {
		bool stopped = ok && floor_wait(tids[i]) == 0;
		ok = i + 1 < n && ptrace(PTRACE_SEIZE, tids[i + 1], 0L, 0L) == 0 &&
		     ptrace(PTRACE_INTERRUPT, tids[i + 1], 0L, 0L) == 0;
		if (!stopped || floor_take(tids[i], buf) < 0)
			failed++;
	}
	return failed;
}

static int floor_main(const char *arg, bool ahead)
{
	static unsigned char buf[FLOOR_COPY];
	char path[64];
	pid_t pid = (pid_t)atol(arg);
	size_t n = 0, cap = 0, failed = 0;
	pid_t *tids = NULL;
	struct dirent *de;
	DIR *d;

	uint64_t t0 = now_ns();
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path))) {
		perror(path);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atol(de->d_name);
		if (tid <= 0)
			continue;
		n++;
		if (!ahead) {
			if (floor_thread(tid, buf) < 0)
				failed++;
			continue;
		}
		if (n > cap) {
			cap = cap ? 2 * cap : 1024;
			if (!(tids = realloc(tids, cap * sizeof(*tids)))) {
				perror("parked");
				return 1;
			}
		}
		tids[n - 1] = tid;
	}
	closedir(d);
	if (ahead)
		failed = floor_ahead(tids, n, buf);
	free(tids);
	uint64_t t1 = now_ns();
	printf("floor%s: %zu threads in %.1f ms (%zu failed)\n", ahead ? " (ahead)" : "", n,
	       (double)(t1 - t0) / 1e6, failed);
	return failed ? 1 : 0;
}

static void usage(FILE *out)
{
	fputs("Usage: parked [-n N] [-b N | -B N] [-w MS]\n"
	      "Start N threads (default 1000) parked in\n"
	      "park_outer -> park_inner -> pthread_cond_wait, print the PID once\n"
	      "all are parked, and wait until killed or until stdin, if a pipe\n"
	      "or socket, reaches EOF.\n"
	      "\n"
	      "  -n, --threads N  number of parked threads\n"
	      "  -b, --busy N     also N threads computing forever in\n"
	      "                   busy_thread -> busy_outer -> busy_inner\n"
	      "  -B, --busy-first N  the same, started before the parked ones\n"
	      "                   (a tracer looks at them first: the pause of a\n"
	      "                   thread stopped before the looks at many others)\n"
	      "  -w, --wake MS    the N threads instead each set their name and\n"
	      "                   sleep MS (wake_loop -> wake_sleep), for ever\n"
	      "      --floor PID  instead: time the serial floor of a dump of PID\n"
	      "                   (seize, interrupt, wait, regs, 16 KiB copy, detach)\n"
	      "      --floor-ahead PID  the same calls, the next thread seized and\n"
	      "                   interrupted before each copy (a pipelined tracer's best)\n"
	      "  -h, --help       show this help\n"
	      "\n"
	      "Exit status: 0 success, 1 failure, 64 usage error.\n", out);
}

/* Returns once stdin (a pipe or socket) reaches EOF; otherwise never. */
static void wait_until_released(void)
{
	struct stat st;
	char buf[512];
	ssize_t n;

	if (fstat(STDIN_FILENO, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		do
			n = read(STDIN_FILENO, buf, sizeof(buf));
		while (n > 0 || (n < 0 && errno == EINTR));
		return;
	}
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, 'n' },
		{ "busy", required_argument, NULL, 'b' },
		{ "wake", required_argument, NULL, 'w' },
		{ "busy-first", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ "floor", required_argument, NULL, 'F' },
		{ "floor-ahead", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 }
	};
	long nthreads = 1000;
	long nbusy = 0;
	bool busy_first = false;
	pthread_attr_t attr;
	char *end;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "n:b:B:w:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			errno = 0;
			nthreads = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || nthreads < 1 ||
			    nthreads > 1000000) {
				fprintf(stderr, "parked: invalid --threads argument: '%s'\n", optarg);
				goto bad_usage;
			}
			break;
		case 'B':
			busy_first = true;
			/* fall through */
		case 'b':
			errno = 0;
			nbusy = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || nbusy < 0 || nbusy > 1024) {
				fprintf(stderr, "parked: invalid --busy argument: '%s'\n", optarg);
				goto bad_usage;
			}
			break;
		case 'w':
			errno = 0;
			wake_ms = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || wake_ms < 1 || wake_ms > 3600000) {
				fprintf(stderr, "parked: invalid --wake argument: '%s'\n", optarg);
				goto bad_usage;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'F':
			return floor_main(optarg, false);
		case 'A':
			return floor_main(optarg, true);
		default:
			goto bad_usage;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "parked: unexpected argument: '%s'\n", argv[optind]);
		goto bad_usage;
	}

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, PARKED_STACK_SIZE > PTHREAD_STACK_MIN ?
				  PARKED_STACK_SIZE : PTHREAD_STACK_MIN);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (busy_first && start_busy(nbusy, &attr))
		return 1;
	for (long i = 0; i < nthreads; i++) {
		pthread_t t;

		err = pthread_create(&t, &attr, park_thread, (void *)(intptr_t)i);
		if (err) {
			fprintf(stderr, "parked: starting thread %ld of %ld: %s\n",
				i + 1, nthreads, strerror(err));
			if (err == EAGAIN)
				fputs("parked: hint: see ulimit -u and /proc/sys/kernel/threads-max\n", stderr);
			return 1;
		}
	}
	if (!busy_first && start_busy(nbusy, &attr))
		return 1;
	pthread_attr_destroy(&attr);

	/* A thread holds the lock from its count to its wait, and the wait
	 * releases it: once main holds it with the count complete, every
	 * thread is in pthread_cond_wait. */
	pthread_mutex_lock(&lock);
	while (nparked < nthreads)
		pthread_cond_wait(&count_cond, &lock);
	pthread_mutex_unlock(&lock);

	printf("%d\n", (int)getpid());
	if (fflush(stdout))
		return 1;
	wait_until_released();
	return 0;

bad_usage:
	fputs("Try 'parked --help'.\n", stderr);
	return 64;
}
