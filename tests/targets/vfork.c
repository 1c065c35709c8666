/*
 * vfork.c: threads that cannot stop for a tracer (tests/dump-dstate.test).
 *
 * Usage: vfork [THREADS]   (default 8)
 * Each worker "v-N" calls vfork() (vfork_wait <- worker); its child sleeps
 * and never execs, so the worker waits for it in a killable sleep: state
 * D, and PTRACE_INTERRUPT cannot stop it.  A child dies with the thread
 * that made it (PR_SET_PDEATHSIG), so killing the target kills them all.
 * Prints "thread NAME TID" per thread, then "ready" once every worker is
 * in state D; then answers "ping" on stdin like every target.
 */
#include "target.h"

static volatile pid_t *tids;

int vfork_wait(void);
void *worker(void *arg);

NOINLINE int
vfork_wait(void)
{
	pid_t child = vfork();
	if (child == 0) {
		/* Only system calls here: the parent's stack is ours. */
		struct timespec ts = { TARGET_LIFETIME_S, 0 };
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		nanosleep(&ts, NULL);
		_exit(0);
	}
	BARRIER();
	return child < 0 ? -1 : 0;
}

NOINLINE void *
worker(void *arg)
{
	char name[16];
	long i = (long) arg;

	snprintf(name, sizeof name, "v-%ld", i);
	target_register(name, &tids[i]);
	vfork_wait();
	BARRIER();
	return arg;
}

/* State letter of thread TID of this process, '?' if unknown. */
static char
thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ok;

	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int) tid);
	if (!(f = fopen(path, "r")))
		return '?';
	ok = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	if (!ok || !(p = strrchr(buf, ')')) || p[1] != ' ')
		return '?';
	return p[2];
}

int
main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 8;
	pthread_t thread;
	char buf[256];
	ssize_t r;
	int ms;

	target_init();
	pthread_setname_np(pthread_self(), "vfork");
	printf("thread vfork %d\n", (int) getpid());
	if (!(tids = calloc(n, sizeof *tids)))
		target_die("calloc");
	for (i = 0; i < n; i++) {
		errno = pthread_create(&thread, NULL, worker, (void *) i);
		if (errno)
			target_die("pthread_create");
	}
	for (i = 0; i < n; i++) {
		pid_t tid = target_wait_tid(&tids[i]);
		for (ms = 0; thread_state(tid) != 'D'; ms++) {
			if (ms >= TARGET_READY_TIMEOUT_MS) {
				fprintf(stderr, "target: v-%ld (%d) not in D\n", i, (int) tid);
				_exit(3);
			}
			target_sleep_ms(1);
		}
		printf("thread v-%ld %d\n", i, (int) tid);
	}
	printf("ready\n");
	do
		r = read(0, buf, sizeof buf - 1);
	while (target_command(buf, sizeof buf, r));
	return 0;
}
