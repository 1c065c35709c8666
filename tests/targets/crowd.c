/*
 * crowd.c: many threads with the same stack and a few with another
 * (tests/dump-group.test), and a main thread that leaves with pthread_exit
 * (tests/dump-exited-main.test).
 *
 * Usage: crowd [N [K [exit]]]   (default 1000 and 3)
 * N workers "p-I" block in read <- park <- parker; K workers "o-I" block in
 * read <- odd_park <- odd.  With "exit", the main thread calls pthread_exit
 * once all are blocked, and the thread "reader" answers stdin instead.
 */
#include "target.h"

static int never[2];
static volatile pid_t *tids;

int park(void);
int odd_park(void);
void *parker(void *arg);
void *odd(void *arg);

NOINLINE int
park(void)
{
	char c;
	int r = (int) read(never[0], &c, 1);
	BARRIER();
	return r;
}

NOINLINE int
odd_park(void)
{
	char c;
	int r = (int) read(never[0], &c, 1);
	BARRIER();
	return r;
}

NOINLINE void *
parker(void *arg)
{
	char name[16];
	long i = (long) arg;

	snprintf(name, sizeof name, "p-%ld", i);
	target_register(name, &tids[i]);
	park();
	BARRIER();
	return arg;
}

static long n_park;

NOINLINE void *
odd(void *arg)
{
	char name[16];
	long i = (long) arg;

	snprintf(name, sizeof name, "o-%ld", i - n_park);
	target_register(name, &tids[i]);
	odd_park();
	BARRIER();
	return arg;
}

static pid_t main_tid;

static void *
reader(void *arg)
{
	char buf[256], path[64], line[512], *p;
	ssize_t r;
	FILE *f;
	int ms;

	(void) arg;
	pthread_setname_np(pthread_self(), "reader");
	printf("thread reader %d\n", (int) target_gettid());
	/* Ready once the main thread is a zombie. */
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int) main_tid);
	for (ms = 0; ; ms++) {
		if (ms >= TARGET_READY_TIMEOUT_MS)
			target_die("main thread did not exit");
		if ((f = fopen(path, "r"))) {
			p = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
			fclose(f);
			if (p && p[1] == ' ' && p[2] == 'Z')
				break;
		}
		target_sleep_ms(1);
	}
	printf("ready\n");
	do
		r = read(0, buf, sizeof buf - 1);
	while (target_command(buf, sizeof buf, r));
	exit(0);
}

int
main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 1000;
	long k = argc > 2 ? atol(argv[2]) : 3;
	int exit_main = argc > 3 && !strcmp(argv[3], "exit");
	pthread_attr_t attr;
	pthread_t thread;
	char buf[256];
	ssize_t r;

	target_init();
	pthread_setname_np(pthread_self(), "crowd");
	main_tid = getpid();
	printf("thread crowd %d\n", (int) getpid());
	if (pipe(never) != 0)
		target_die("pipe");
	if (!(tids = calloc(n + k, sizeof *tids)))
		target_die("calloc");
	n_park = n;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < n + k; i++) {
		errno = pthread_create(&thread, &attr, i < n ? parker : odd, (void *) i);
		if (errno)
			target_die("pthread_create");
	}
	for (i = 0; i < n + k; i++) {
		pid_t tid = target_wait_tid(&tids[i]);
		target_wait_blocked("worker", tid, SYS_read);
		if (i < n)
			printf("thread p-%ld %d\n", i, (int) tid);
		else
			printf("thread o-%ld %d\n", i - n, (int) tid);
	}
	if (exit_main) {
		errno = pthread_create(&thread, NULL, reader, NULL);
		if (errno)
			target_die("pthread_create");
		pthread_exit(NULL);
	}
	printf("ready\n");
	do
		r = read(0, buf, sizeof buf - 1);
	while (target_command(buf, sizeof buf, r));
	return 0;
}
