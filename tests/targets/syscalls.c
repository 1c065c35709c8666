/*
 * syscalls.c: a process that spends its CPU time in system calls, for the
 * on-CPU tests and benches (tests/record-syscall.test, bench/oncpu-syscall.sh).
 *
 *   sc-reader   read_zero_blocks -> read(): 1 MiB blocks of /dev/zero in a
 *               loop (nearly all of its CPU time is system time)
 *   sc-spinner  spin: user-space arithmetic and nothing else
 *   sc-sleeper  nap: clock_nanosleep 2 ms, a few hundred ns of work (asleep
 *               nearly all of the time: no on-CPU sample is its due)
 *
 * With -S instead, a server and its client on a pipe pair, as a web server
 * and a load generator on one host: sc-client (pinned to CPU 0) writes a
 * request and reads the reply; sc-server (pinned to CPU 1) reads it,
 * computes for a few microseconds (serve) and writes the reply.  A tracer
 * that wakes on CPU 0 preempts the client, and the server runs dry and
 * blocks just after the tick (issue 33: nginx under ab).
 *
 * The tests read each thread's CPU time from /proc/PID/task/TID/schedstat
 * and compare it with the samples an on-CPU profile kept.
 *
 * Usage: syscalls [-B|-S]   (-B: burn one CPU, as sleepwork -B; -S: above)
 * Prints "thread NAME TID" for each thread, then "ready".
 */
#include "target.h"

#include <fcntl.h>

#define BLOCK (1024 * 1024)

static volatile unsigned long sink;
static volatile pid_t tids[3];
static int req[2], rep[2];

NOINLINE void read_zero_blocks(int fd, char *buf);
NOINLINE void spin(void);
NOINLINE void nap(void);
NOINLINE void serve(void);
NOINLINE void ask(void);

NOINLINE void
read_zero_blocks(int fd, char *buf)
{
	for (;;) {
		ssize_t n = read(fd, buf, BLOCK);
		BARRIER();
		if (n < 0 && errno != EINTR)
			target_die("read(/dev/zero)");
		sink += (unsigned long) buf[n > 0 ? n - 1 : 0];
	}
}

NOINLINE void
spin(void)
{
	unsigned long x = 1;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		BARRIER();
		sink = x;
	}
}

NOINLINE void
nap(void)
{
	struct timespec ts = { 0, 2000000L };

	for (;;) {
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		BARRIER();
		sink++;
	}
}

/* Run the calling thread on CPU cpu only, when there is one. */
static void
pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	(void) sched_setaffinity(0, sizeof(set), &set);
}

NOINLINE void
serve(void)
{
	char c;

	for (;;) {
		if (read(req[0], &c, 1) != 1)
			target_die("read(request)");
		for (int i = 0; i < 3000; i++) {
			sink = sink * 6364136223846793005UL + 1442695040888963407UL;
			BARRIER();
		}
		if (write(rep[1], &c, 1) != 1)
			target_die("write(reply)");
	}
}

NOINLINE void
ask(void)
{
	char c = 'q';

	for (;;) {
		if (write(req[1], &c, 1) != 1 || read(rep[0], &c, 1) != 1)
			target_die("client");
		BARRIER();
	}
}

static void *
server_main(void *arg)
{
	target_register("sc-server", &tids[0]);
	pin(1);
	serve();
	return arg;
}

static void *
client_main(void *arg)
{
	target_register("sc-client", &tids[1]);
	pin(0);
	ask();
	return arg;
}

static void *
reader_main(void *arg)
{
	static char buf[BLOCK];
	int fd;

	target_register("sc-reader", &tids[0]);
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		target_die("open(/dev/zero)");
	read_zero_blocks(fd, buf);
	return arg;
}

static void *
spinner_main(void *arg)
{
	target_register("sc-spinner", &tids[1]);
	spin();
	return arg;
}

static void *
sleeper_main(void *arg)
{
	target_register("sc-sleeper", &tids[2]);
	nap();
	return arg;
}

int
main(int argc, char **argv)
{
	static const char *const names[3] = { "sc-reader", "sc-spinner", "sc-sleeper" };
	void *(*const mains[3])(void *) = { reader_main, spinner_main, sleeper_main };
	static const char *const pair[2] = { "sc-server", "sc-client" };
	void *(*const pair_mains[2])(void *) = { server_main, client_main };
	char buf[256];
	int n = 3;

	target_init();
	if (argc > 1 && strcmp(argv[1], "-B") == 0)
		spin();
	if (argc > 1 && strcmp(argv[1], "-S") == 0) {
		if (pipe(req) < 0 || pipe(rep) < 0)
			target_die("pipe");
		n = 2;
	}
	pthread_setname_np(pthread_self(), "syscalls");
	printf("thread syscalls %d\n", (int) target_gettid());
	for (int i = 0; i < n; i++) {
		pthread_t th;

		errno = pthread_create(&th, NULL, n == 3 ? mains[i] : pair_mains[i], NULL);
		if (errno)
			target_die("pthread_create");
		printf("thread %s %d\n", n == 3 ? names[i] : pair[i],
		       (int) target_wait_tid(&tids[i]));
	}
	printf("ready\n");
	for (;;) {
		ssize_t r = read(0, buf, sizeof buf - 1);

		if (!target_command(buf, sizeof buf, r))
			break;
	}
	return 0;
}
