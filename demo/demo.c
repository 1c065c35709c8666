/*
 * stackspy-demo: the workload of the README's quick start,
 *
 *	./stackspy dump $(demo/stackspy-demo --daemon)
 *
 * Every thread sits in a known call chain, so what stackspy shows can be
 * checked by eye:
 *
 *	worker-1, worker-2  worker_main -> crunch -> compute_primes  (3/4)
 *	                    worker_main -> crunch -> hash_block      (1/4)
 *	waiter              waiter_main -> wait_for_job -> pthread_cond_wait
 *	reader              io_loop -> read_request -> read
 *	sleeper             sleeper_main -> take_nap -> nanosleep
 *	stackspy-demo       main -> wait_for_exit -> sigtimedwait
 *
 * The 3:1 split is by wall-clock time, which is what a sampler sees.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* noipa also stops gcc from cloning a function into compute_primes.constprop.0:
 * these names are what users look for in the output. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
# define DEMO_NOINLINE __attribute__((noipa))
#else
# define DEMO_NOINLINE __attribute__((noinline))
#endif

#define SLICE_NS 1000000ull	/* hash_block's share of one crunch() round */
#define DAEMON_SECONDS 60	/* a forgotten --daemon must not run forever */

struct thread_slot {
	const char *name;
	void *(*fn)(void *);
	bool blocks;		/* readiness waits until it is asleep */
	pthread_t thread;
	pid_t tid;
};

static atomic_bool stopping;
static pthread_mutex_t job_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_cond = PTHREAD_COND_INITIALIZER;
static int job_pipe[2] = { -1, -1 };
static pthread_barrier_t started;
static volatile unsigned long sink;	/* keeps the work from being optimized out */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Names the thread and waits for the others, so readiness means all named. */
static void thread_started(struct thread_slot *slot)
{
#ifdef HAVE_PTHREAD_SETNAME_NP
	pthread_setname_np(pthread_self(), slot->name);
#else
	prctl(PR_SET_NAME, slot->name);
#endif
	slot->tid = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
}

DEMO_NOINLINE static unsigned long compute_primes(uint64_t budget_ns)
{
	uint64_t deadline = now_ns() + budget_ns;
	unsigned long found = 0;

	for (unsigned long n = 3;; n += 2) {
		bool prime = true;

		for (unsigned long d = 3; d * d <= n; d += 2)
			if (n % d == 0) {
				prime = false;
				break;
			}
		found += prime;
		if ((n & 31) == 1 && now_ns() >= deadline)
			return found;
	}
}

DEMO_NOINLINE static unsigned long hash_block(uint64_t budget_ns)
{
	uint64_t deadline = now_ns() + budget_ns;
	uint64_t h = 0xcbf29ce484222325u;
	unsigned char block[4096];

	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (unsigned char)(i * 7);
	do {
		for (size_t i = 0; i < sizeof(block); i++)
			h = (h ^ block[i]) * 0x100000001b3u;
	} while (now_ns() < deadline);
	return (unsigned long)h;
}

/* The sum after each call keeps gcc from turning them into tail calls,
 * which would drop crunch from the stacks. */
DEMO_NOINLINE static unsigned long crunch(void)
{
	unsigned long r = compute_primes(3 * SLICE_NS);

	r += hash_block(SLICE_NS);
	return r;
}

static void *worker_main(void *arg)
{
	thread_started(arg);
	while (!atomic_load(&stopping))
		sink += crunch();
	return NULL;
}

/* Returns false once the demo is stopping; nobody ever posts a job. */
DEMO_NOINLINE static bool wait_for_job(void)
{
	bool stop;

	pthread_mutex_lock(&job_lock);
	while (!(stop = atomic_load(&stopping)))
		pthread_cond_wait(&job_cond, &job_lock);
	pthread_mutex_unlock(&job_lock);
	return !stop;
}

static void *waiter_main(void *arg)
{
	thread_started(arg);
	while (wait_for_job())
		sink++;
	return NULL;
}

DEMO_NOINLINE static ssize_t read_request(int fd, char *buf, size_t size)
{
	ssize_t n;

	do
		n = read(fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n;
}

/* Ends when stop_workload() closes the write end. */
static void *io_loop(void *arg)
{
	char buf[256];

	thread_started(arg);
	while (read_request(job_pipe[0], buf, sizeof(buf)) > 0)
		sink++;
	return NULL;
}

DEMO_NOINLINE static void take_nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Short naps: the flag is how it learns to stop. */
static void *sleeper_main(void *arg)
{
	thread_started(arg);
	while (!atomic_load(&stopping))
		take_nap(200);
	return NULL;
}

static struct thread_slot slots[] = {
	{ "worker-1", worker_main, false },
	{ "worker-2", worker_main, false },
	{ "waiter", waiter_main, true },
	{ "reader", io_loop, true },
	{ "sleeper", sleeper_main, true },
};
#define NSLOTS (sizeof(slots) / sizeof(slots[0]))

/* Returns true if the thread is in interruptible sleep (state S). */
static bool thread_asleep(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the name may hold spaces and ')' */
	return p && p[1] == ' ' && p[2] == 'S';
}

/*
 * Starts every thread and returns once they are named and the blocking ones
 * are asleep in their chains (or after a second, if the machine is that
 * loaded), so a dump taken at once shows the documented stacks.
 */
static int start_workload(void)
{
	int err;

	if (pipe2(job_pipe, O_CLOEXEC) < 0)
		return -errno;
	pthread_barrier_init(&started, NULL, NSLOTS + 1);
	for (size_t i = 0; i < NSLOTS; i++) {
		err = pthread_create(&slots[i].thread, NULL, slots[i].fn, &slots[i]);
		if (err)
			return -err;	/* main exits; the started threads go with it */
	}
	pthread_barrier_wait(&started);
	for (int tries = 0; tries < 1000; tries++) {
		bool all = true;

		for (size_t i = 0; i < NSLOTS; i++)
			if (slots[i].blocks && !thread_asleep(slots[i].tid))
				all = false;
		if (all)
			break;
		take_nap(1);
	}
	return 0;
}

static void stop_workload(void)
{
	pthread_mutex_lock(&job_lock);
	atomic_store(&stopping, true);
	pthread_cond_broadcast(&job_cond);
	pthread_mutex_unlock(&job_lock);
	close(job_pipe[1]);
	for (size_t i = 0; i < NSLOTS; i++)
		pthread_join(slots[i].thread, NULL);
	close(job_pipe[0]);
}

/* Returns the signal that ended the wait, or 0 after seconds (0: never). */
DEMO_NOINLINE static int wait_for_exit(const sigset_t *set, unsigned seconds)
{
	uint64_t end = now_ns() + seconds * 1000000000ull;

	for (;;) {
		uint64_t now = now_ns(), left_ns = end - now;
		struct timespec left;
		int sig;

		if (!seconds)
			left_ns = 3600 * 1000000000ull;	/* same frames as with a limit */
		else if (now >= end)
			return 0;
		left.tv_sec = (time_t)(left_ns / 1000000000u);
		left.tv_nsec = (long)(left_ns % 1000000000u);
		/* EINTR also comes from a tracer's PTRACE_INTERRUPT */
		sig = sigtimedwait(set, NULL, &left);
		if (sig > 0)
			return sig;
	}
}

static void usage(FILE *out)
{
	fputs("Usage: stackspy-demo [--seconds N] [--daemon]\n"
	      "A multi-threaded workload with known stacks to try stackspy on.\n"
	      "\n"
	      "  -s, --seconds N  exit after N seconds (default: run until\n"
	      "                   SIGTERM or SIGINT; with --daemon, 60)\n"
	      "  -d, --daemon     run in the background; print its PID once\n"
	      "                   all threads are started, then exit\n"
	      "  -h, --help       show this help\n"
	      "\n"
	      "Exit status: 0 success, 1 failure, 64 usage error.\n", out);
}

/* Returns -1 to go on, or the status main exits with at once. */
static int parse_options(int argc, char **argv, long *seconds, bool *daemonize)
{
	static const struct option longopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int opt;

	*seconds = -1;
	*daemonize = false;
	while ((opt = getopt_long(argc, argv, "s:dh", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			errno = 0;
			*seconds = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || *seconds <= 0 ||
			    *seconds > 100000000) {
				fprintf(stderr, "stackspy-demo: invalid --seconds argument: '%s'\n", optarg);
				goto bad;
			}
			break;
		case 'd':
			*daemonize = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "stackspy-demo: unexpected argument: '%s'\n", argv[optind]);
		goto bad;
	}
	if (*seconds < 0)
		*seconds = *daemonize ? DAEMON_SECONDS : 0;
	return -1;
bad:
	fputs("Try 'stackspy-demo --help'.\n", stderr);
	return 64;
}

/*
 * Forks. In the parent, waits for the child's readiness byte on *ready_fd,
 * prints the child's PID and returns the exit status (never -1). In the
 * child, starts a new session and returns -1 with *ready_fd to write to.
 */
static int daemonize_and_wait(int *ready_fd)
{
	int ready[2];
	ssize_t n;
	pid_t pid;
	char c;

	/* If the child dies before it is ready, the parent reads EOF. */
	if (pipe2(ready, O_CLOEXEC) < 0) {
		perror("stackspy-demo: pipe");
		return 1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("stackspy-demo: fork");
		return 1;
	}
	if (pid == 0) {
		close(ready[0]);
		*ready_fd = ready[1];
		setsid();
		if (chdir("/") < 0)
			perror("stackspy-demo: chdir /");
		return -1;
	}
	close(ready[1]);
	do
		n = read(ready[0], &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		waitpid(pid, NULL, 0);
		fputs("stackspy-demo: the background process failed to start\n", stderr);
		return 1;
	}
	printf("%d\n", (int)pid);
	return fflush(stdout) ? 1 : 0;
}

/* Detaches from the terminal, then tells the parent the workload runs: in
 * that order, so $(stackspy-demo --daemon) sees EOF once the parent exits. */
static int report_ready(int ready_fd)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		perror("stackspy-demo: /dev/null");
		return -1;
	}
	if (fd > 2)
		close(fd);
	if (write(ready_fd, "", 1) != 1)
		return -1;
	close(ready_fd);
	return 0;
}

int main(int argc, char **argv)
{
	int status, err, ready_fd = -1;
	bool daemonize;
	long seconds;
	sigset_t set;

	status = parse_options(argc, argv, &seconds, &daemonize);
	if (status >= 0)
		return status;
	if (daemonize) {
		status = daemonize_and_wait(&ready_fd);
		if (status >= 0)
			return status;
	}

	/* Blocked everywhere (threads inherit the mask), so only main's
	 * sigtimedwait takes them: no handler runs inside the workload. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	err = start_workload();
	if (err < 0) {
		fprintf(stderr, "stackspy-demo: starting threads: %s\n", strerror(-err));
		return 1;
	}
	if (daemonize) {
		if (report_ready(ready_fd) < 0)
			return 1;
	} else {
		fprintf(stderr, "stackspy-demo: running as PID %d; try: stackspy dump %d\n",
			(int)getpid(), (int)getpid());
	}

	wait_for_exit(&set, (unsigned)seconds);
	stop_workload();
	return 0;
}
