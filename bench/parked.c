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
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static void *park_thread(void *arg)
{
	park_outer();
	return arg;
}

static void usage(FILE *out)
{
	fputs("Usage: parked [-n N]\n"
	      "Start N threads (default 1000) parked in\n"
	      "park_outer -> park_inner -> pthread_cond_wait, print the PID once\n"
	      "all are parked, and wait until killed or until stdin, if a pipe\n"
	      "or socket, reaches EOF.\n"
	      "\n"
	      "  -n, --threads N  number of parked threads\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	long nthreads = 1000;
	pthread_attr_t attr;
	char *end;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "n:h", longopts, NULL)) != -1) {
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
		case 'h':
			usage(stdout);
			return 0;
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
	for (long i = 0; i < nthreads; i++) {
		pthread_t t;

		err = pthread_create(&t, &attr, park_thread, NULL);
		if (err) {
			fprintf(stderr, "parked: starting thread %ld of %ld: %s\n",
				i + 1, nthreads, strerror(err));
			if (err == EAGAIN)
				fputs("parked: hint: see ulimit -u and /proc/sys/kernel/threads-max\n", stderr);
			return 1;
		}
	}
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
