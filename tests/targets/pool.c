/*
 * pool.c: a thread pool of many sleeping threads, a few of which wake now
 * and then to compute: the case of a server's pool for the cold-thread
 * census (sampler/threads.c) and --idle's put-off stops
 * (tests/record-pool.test).
 *
 * Usage: pool [-n THREADS] [-w WORK_MS] [-p PERIOD_MS]
 * (default 2000 threads, 20 ms of work every 40 ms; -p 0: nobody wakes).
 * Each worker "p-N" waits in pthread_cond_wait <- pool_wait <- pool_worker;
 * every PERIOD_MS a waker thread wakes one at random, which then spins
 * WORK_MS of wall time in pool_work <- pool_worker before it waits again.
 * The worker woken is always one that has slept the longest possible:
 * with 2,000 workers each wakes about once a minute.
 */
#include "target.h"

#include <stdint.h>
#include <sys/types.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t *conds;
static unsigned char *go;
static volatile pid_t *tids;
static int nworkers = 2000, work_ms = 20, period_ms = 40;
static int parked;

void *pool_worker(void *arg);
void pool_wait(int i);
void pool_work(void);

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

NOINLINE void
pool_work(void)
{
	static volatile unsigned long sink;
	uint64_t end = now_ns() + (uint64_t) work_ms * 1000000u;
	while (now_ns() < end)
		for (int k = 0; k < 1000; k++)
			sink += (unsigned long) k;
	BARRIER();
}

NOINLINE void
pool_wait(int i)
{
	pthread_mutex_lock(&lock);
	parked++;
	while (!go[i])
		pthread_cond_wait(&conds[i], &lock);
	go[i] = 0;
	parked--;
	pthread_mutex_unlock(&lock);
	BARRIER();
}

void *
pool_worker(void *arg)
{
	int i = (int) (intptr_t) arg;
	char name[16];
	snprintf(name, sizeof name, "p-%d", i);
	target_register(name, &tids[i]);
	for (;;) {
		pool_wait(i);
		pool_work();
		BARRIER();
	}
	return NULL;
}

static void *
waker(void *arg)
{
	/* Round robin over a shuffled order: each worker sleeps as long
	 * as the pool allows before it is woken again. */
	int *order = calloc((size_t) nworkers, sizeof(*order));
	uint64_t x = (uint64_t) getpid() * 0x9e3779b97f4a7c15u | 1;
	if (!order)
		target_die("calloc");
	for (int i = 0; i < nworkers; i++)
		order[i] = i;
	for (int i = nworkers - 1; i > 0; i--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		int j = (int) (x % (uint64_t) (i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (int k = 0;; k = (k + 1) % nworkers) {
		target_sleep_ms(period_ms);
		pthread_mutex_lock(&lock);
		go[order[k]] = 1;
		pthread_cond_signal(&conds[order[k]]);
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int
main(int argc, char **argv)
{
	char buf[64];
	ssize_t r;
	int opt;
	pthread_attr_t attr;

	while ((opt = getopt(argc, argv, "n:w:p:")) != -1) {
		switch (opt) {
		case 'n': nworkers = atoi(optarg); break;
		case 'w': work_ms = atoi(optarg); break;
		case 'p': period_ms = atoi(optarg); break;
		default:
			fputs("usage: pool [-n THREADS] [-w WORK_MS] [-p PERIOD_MS]\n", stderr);
			return 64;
		}
	}
	if (nworkers < 1 || work_ms < 0 || period_ms < 0)
		return 64;
	target_init();
	conds = calloc((size_t) nworkers, sizeof(*conds));
	go = calloc((size_t) nworkers, 1);
	tids = calloc((size_t) nworkers, sizeof(*tids));
	if (!conds || !go || !tids)
		target_die("calloc");
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (int i = 0; i < nworkers; i++) {
		pthread_t t;
		pthread_cond_init(&conds[i], NULL);
		if (pthread_create(&t, &attr, pool_worker, (void *) (intptr_t) i) != 0)
			target_die("pthread_create");
	}
	for (int ms = 0;; ms++) {
		pthread_mutex_lock(&lock);
		int n = parked;
		pthread_mutex_unlock(&lock);
		if (n == nworkers)
			break;
		if (ms >= TARGET_READY_TIMEOUT_MS) {
			fprintf(stderr, "target: only %d of %d workers parked\n", n, nworkers);
			_exit(3);
		}
		target_sleep_ms(1);
	}
	if (period_ms > 0) {
		pthread_t t;
		if (pthread_create(&t, &attr, waker, NULL) != 0)
			target_die("pthread_create");
	}
	printf("ready\n");
	while ((r = read(0, buf, sizeof buf - 1)) != 0 && target_command(buf, sizeof buf, r))
		;
	return 0;
}
