/*
 * target.h: what every test target shares.
 *
 * The targets are the processes the integration tests (tests/NAME.test) point
 * stackspy at.  Their call chains must be the same at -O0 and at -O2, so
 * every function of a chain is NOINLINE (gcc's noipa also forbids cloning
 * into foo.constprop.0 and identical-code folding) and is followed by
 * BARRIER() after its call, so no call becomes a tail call.
 *
 * Protocol with tests/init.sh: a target prints "thread NAME TID" for each of
 * its threads, then "ready" once every thread sits in its blocking system
 * call; from then on the main thread reads commands from stdin ("ping" ->
 * "pong N") and exits on end of file.  A target dies with its parent (the
 * test shell), so a killed test leaves nothing behind.
 */
#ifndef STACKSPY_TARGET_H
#define STACKSPY_TARGET_H

#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
# define TARGET_EXTERN_C extern "C"
#else
# define TARGET_EXTERN_C
#endif

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 8
# define NOINLINE __attribute__((noipa, noinline))
#else
# define NOINLINE __attribute__((noinline))
#endif
#define BARRIER() __asm__ __volatile__("" ::: "memory")

/* How long a target waits for its own threads to reach their blocking
   points, and how long it lives at most if nobody kills it. */
#define TARGET_READY_TIMEOUT_MS 20000
#define TARGET_LIFETIME_S 600

static inline void
target_die(const char *what)
{
	fprintf(stderr, "target: %s: %s\n", what, strerror(errno));
	fflush(stdout);
	_exit(3);
}

static inline pid_t
target_gettid(void)
{
	return (pid_t) syscall(SYS_gettid);
}

/* Die with the test shell; and in any case after TARGET_LIFETIME_S. */
static inline void
target_init(void)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		target_die("prctl(PR_SET_PDEATHSIG)");
	if (getppid() == 1)
		_exit(3);
	alarm(TARGET_LIFETIME_S);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static inline void
target_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * A busy loop's duty cycle, for workers whose stacks a test needs but not
 * their CPU share: called after each unit of work, target_duty() sleeps
 * sleep_ms once work_ms have gone by since the last sleep (or the first
 * call).  Start with { WORK_MS, SLEEP_MS, 0 }.
 */
struct target_duty {
	long work_ms, sleep_ms;
	long long next_ns; /* when to sleep next; 0 before the first call */
};

static inline long long
target_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline void
target_duty(struct target_duty *d)
{
	long long now = target_now_ns();

	if (d->next_ns && now < d->next_ns)
		return;
	if (d->next_ns) {
		target_sleep_ms(d->sleep_ms);
		now = target_now_ns();
	}
	d->next_ns = now + d->work_ms * 1000000LL;
}

/*
 * Is thread TID of this process asleep inside system call NR (or any
 * system call when NR < 0)?  /proc/self/task/TID/syscall says "running"
 * unless the thread is blocked; stat's state must be S.
 */
static inline int
target_thread_blocked_in(pid_t tid, long nr)
{
	char path[64], buf[512];
	FILE *f;
	long got;
	int ok;
	char *p;

	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int) tid);
	if (!(f = fopen(path, "r")))
		return 0;
	ok = fscanf(f, "%ld", &got) == 1;
	fclose(f);
	if (!ok || got < 0 || (nr >= 0 && got != nr))
		return 0;

	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int) tid);
	if (!(f = fopen(path, "r")))
		return 0;
	ok = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	if (!ok || !(p = strrchr(buf, ')')))
		return 0;
	return p[1] == ' ' && p[2] == 'S';
}

static inline int
target_is_futex(long nr)
{
#ifdef SYS_futex
	if (nr == SYS_futex)
		return 1;
#endif
#ifdef SYS_futex_time64
	if (nr == SYS_futex_time64)
		return 1;
#endif
	return 0;
}

/* Wait until thread TID blocks in NR (a futex call when NR is -2). */
static inline void
target_wait_blocked(const char *name, pid_t tid, long nr)
{
	int ms;

	for (ms = 0; ms < TARGET_READY_TIMEOUT_MS; ms++) {
		if (nr == -2) {
			char path[64];
			FILE *f;
			long got = -1;

			snprintf(path, sizeof path, "/proc/self/task/%d/syscall",
				 (int) tid);
			if ((f = fopen(path, "r"))) {
				if (fscanf(f, "%ld", &got) != 1)
					got = -1;
				fclose(f);
			}
			if (target_is_futex(got) &&
			    target_thread_blocked_in(tid, got))
				return;
		} else if (target_thread_blocked_in(tid, nr)) {
			return;
		}
		target_sleep_ms(1);
	}
	fprintf(stderr, "target: thread %s (%d) did not block\n", name,
		(int) tid);
	_exit(3);
}

/* Wait until *SLOT (a tid written by the thread itself) is set. */
static inline pid_t
target_wait_tid(volatile pid_t *slot)
{
	int ms;

	for (ms = 0; ms < TARGET_READY_TIMEOUT_MS; ms++) {
		pid_t tid = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (tid)
			return tid;
		target_sleep_ms(1);
	}
	fprintf(stderr, "target: a thread did not start\n");
	_exit(3);
}

/* The TracerPid of the status file open as FD (/proc/PID/status, read
 * afresh at each call), -1 when it cannot be read. */
static inline int
target_tracer_of(int fd)
{
	char buf[4096], *p;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (!(p = strstr(buf, "\nTracerPid:")))
		return -1;
	return atoi(p + 11);
}

static inline void
target_register(const char *name, volatile pid_t *slot)
{
	pthread_setname_np(pthread_self(), name);
	__atomic_store_n(slot, target_gettid(), __ATOMIC_RELEASE);
}

/*
 * One command from stdin; returns 0 at end of file.  A read that fails
 * (EINTR included: no handler here restarts it) is a bug in whoever
 * stopped us, and the tests see it as exit status 3.
 */
static inline int
target_command(char *buf, size_t size, ssize_t n)
{
	static unsigned long pongs;

	if (n < 0)
		target_die("read(stdin)");
	if (n == 0)
		return 0;
	buf[n < (ssize_t) size ? n : (ssize_t) size - 1] = '\0';
	if (strncmp(buf, "ping", 4) == 0)
		printf("pong %lu\n", ++pongs);
	return 1;
}

#endif
