/*
 * cfihost.c: the target of tests/security-cfi.test.  It dlopen()s the
 * library argv[1] (hostile call frame information, issue 32) and runs one
 * thread per function argv[2...] names, each called and never returning:
 * it loops on pause(), so the thread sleeps in libc with the hostile
 * function its caller, whose FDE says how to unwind it.
 */
#include "target.h"

#include <dlfcn.h>

struct atk {
	const char *name;
	void (*fn)(void);
	volatile pid_t tid;
};

static void *
run(void *arg)
{
	struct atk *a = arg;
	target_register(a->name, &a->tid);
	a->fn();
	return NULL;
}

int
main(int argc, char **argv)
{
	static struct atk a[64];
	pthread_t th;
	char buf[64];
	void *h;
	int n = argc - 2;

	target_init();
	if (argc < 3 || n > 64 || !(h = dlopen(argv[1], RTLD_NOW)))
		target_die("dlopen");
	for (int i = 0; i < n; i++) {
		a[i].name = argv[i + 2];
		*(void **)&a[i].fn = dlsym(h, argv[i + 2]);
		if (!a[i].fn || pthread_create(&th, NULL, run, &a[i]) != 0)
			target_die(argv[i + 2]);
	}
	for (int i = 0; i < n; i++) {
		pid_t tid = target_wait_tid(&a[i].tid);
		target_wait_blocked(a[i].name, tid, -1);
		printf("thread %s %d\n", a[i].name, (int)tid);
	}
	printf("ready\n");
	while (target_command(buf, sizeof buf, read(0, buf, sizeof buf - 1)))
		;
	return 0;
}
