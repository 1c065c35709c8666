/*
 * many.c: many threads with deep stacks, so that one dump takes long
 * enough to be interrupted (tests/detach-signal.test).
 *
 * Usage: many [THREADS [LEVELS]]   (default 500 threads, 60 levels)
 * Each worker "w-N" blocks in read <- leaf <- descend x LEVELS <- worker.
 */
#include "target.h"

static int never[2];
static int levels = 60;
static volatile pid_t *tids;

int leaf(void);
int descend(int n);
void *worker(void *arg);

NOINLINE int
leaf(void)
{
	char c;
	int r = (int) read(never[0], &c, 1);
	BARRIER();
	return r;
}

NOINLINE int
descend(int n)
{
	int r = n <= 0 ? leaf() : descend(n - 1);
	BARRIER();
	return r + 1;
}

NOINLINE void *
worker(void *arg)
{
	char name[16];
	long i = (long) arg;

	snprintf(name, sizeof name, "w-%ld", i);
	target_register(name, &tids[i]);
	descend(levels);
	BARRIER();
	return arg;
}

int
main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 500;
	pthread_attr_t attr;
	pthread_t thread;
	char buf[256];
	ssize_t r;

	if (argc > 2)
		levels = atoi(argv[2]);
	target_init();
	pthread_setname_np(pthread_self(), "many");
	if (pipe(never) != 0)
		target_die("pipe");
	if (!(tids = calloc(n, sizeof *tids)))
		target_die("calloc");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (i = 0; i < n; i++) {
		errno = pthread_create(&thread, &attr, worker, (void *) i);
		if (errno)
			target_die("pthread_create");
	}
	for (i = 0; i < n; i++)
		target_wait_blocked("worker", target_wait_tid(&tids[i]), SYS_read);
	printf("ready\n");
	do
		r = read(0, buf, sizeof buf - 1);
	while (target_command(buf, sizeof buf, r));
	return 0;
}
