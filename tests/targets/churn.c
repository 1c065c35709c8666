/*
 * churn.c: thread churn, or a pool of threads that each wake now and then.
 *
 * Usage: churn [-c CREATORS]           (default: 4 creators)
 *        churn -w THREADS [-p PERIOD_MS]
 *
 * Churn: CREATORS threads "c-N" each create a thread and join it, over and
 * over (tens of thousands of short threads a second, as a server that
 * starts one per request): stackspy meets threads that exit while it
 * seizes them (tests/record-churn.test: their EPERM is not another
 * tracer's).  Answers "ping" with "pong N created M": M threads so far.
 *
 * Wakers: THREADS threads "w-N" each set their name and sleep PERIOD_MS
 * (default 1000) in waker_sleep <- waker_loop, for ever, the way a big
 * pool's idle workers poll (bench/record-threads.sh -m wakers).
 */
#include "target.h"

#include <stdint.h>

static volatile unsigned long created;
static volatile int started;
static int period_ms = 1000;

void *churn_child(void *arg);
void *churn_creator(void *arg);
void waker_sleep(void);
void *waker_loop(void *arg);

NOINLINE void *
churn_child(void *arg)
{
	BARRIER();
	return arg;
}

NOINLINE void *
churn_creator(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "c-%d", (int) (intptr_t) arg);
	pthread_setname_np(pthread_self(), name);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (;;) {
		pthread_t t;
		if (pthread_create(&t, &attr, churn_child, NULL) != 0) {
			target_sleep_ms(1);
			continue;
		}
		pthread_join(t, NULL);
		__atomic_add_fetch(&created, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

NOINLINE void
waker_sleep(void)
{
	usleep((useconds_t) period_ms * 1000u);
	BARRIER();
}

NOINLINE void *
waker_loop(void *arg)
{
	char name[16];
	int i = (int) (intptr_t) arg;
	__atomic_add_fetch(&started, 1, __ATOMIC_RELEASE);
	for (;;) {
		snprintf(name, sizeof name, "w-%d", i);
		pthread_setname_np(pthread_self(), name);
		waker_sleep();
		BARRIER();
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	char buf[64];
	ssize_t r;
	int opt, creators = 4, wakers = 0;
	pthread_attr_t attr;

	while ((opt = getopt(argc, argv, "c:w:p:")) != -1) {
		switch (opt) {
		case 'c': creators = atoi(optarg); break;
		case 'w': wakers = atoi(optarg); break;
		case 'p': period_ms = atoi(optarg); break;
		default:
			fputs("usage: churn [-c CREATORS] | churn -w THREADS [-p PERIOD_MS]\n",
			      stderr);
			return 64;
		}
	}
	if (creators < 0 || wakers < 0 || period_ms < 1)
		return 64;
	target_init();
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 128 * 1024);
	int n = wakers ? wakers : creators;
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, wakers ? waker_loop : churn_creator,
				   (void *) (intptr_t) i) != 0)
			target_die("pthread_create");
	}
	for (int ms = 0; wakers && __atomic_load_n(&started, __ATOMIC_ACQUIRE) < wakers; ms++) {
		if (ms >= TARGET_READY_TIMEOUT_MS) {
			fprintf(stderr, "target: only %d of %d wakers started\n", started, wakers);
			_exit(3);
		}
		target_sleep_ms(1);
	}
	printf("ready\n");
	for (unsigned long pongs = 1; (r = read(0, buf, sizeof buf - 1)) > 0; ) {
		if (strncmp(buf, "ping", 4) == 0)
			printf("pong %lu created %lu\n", pongs++,
			       __atomic_load_n(&created, __ATOMIC_RELAXED));
	}
	if (r < 0)
		target_die("read(stdin)");
	return 0;
}
