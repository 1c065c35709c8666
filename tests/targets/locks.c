/*
 * locks.c: threads blocked on mutexes (tests/dump-locks.test).
 *
 * Usage: locks MODE
 *   cycle2     "lk-a" holds lock_a and waits for lock_b, "lk-b" holds
 *              lock_b and waits for lock_a: a deadlock of two
 *   cycle3     "lk-a" -> lock_b, "lk-b" -> lock_c, "lk-c" -> lock_a: of three
 *   contend    the main thread holds lock_a; "lk-a", "lk-b" and "lk-c" wait
 *              for it: contention, no cycle
 *   errorcheck cycle2 with PTHREAD_MUTEX_ERRORCHECK mutexes
 *   robust     cycle2 with robust mutexes
 *   rwlock     "lk-a" waits to write rw_lock, held for reading by main;
 *              "lk-b" waits on cond_var
 *   rwwrite    "lk-a" waits to read rw_lock, held for writing by main
 *   conds      "lk-a", "lk-b" and "lk-c" each wait on a condition variable
 *              of their own, conds[0], [1], [2], from the same code: one
 *              stack, three objects (tests/cli-newcomer.test)
 * Each waiter is in lock_wait <- waiter.  Prints "thread NAME TID" per
 * thread and "ready" once every waiter sits in its futex wait.
 */
#include "target.h"

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
pthread_rwlock_t rw_lock = PTHREAD_RWLOCK_INITIALIZER;
pthread_cond_t cond_var = PTHREAD_COND_INITIALIZER;
pthread_cond_t conds[3] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
			    PTHREAD_COND_INITIALIZER };
pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;

static pthread_barrier_t held;
static volatile pid_t tids[3];
static int passed;      /* waiters past the barrier, about to block */

struct waiter {
	const char *name;
	int slot;
	pthread_mutex_t *hold, *want;   /* want NULL: rwlock or cond */
	int kind;                       /* 0 mutex, 1 rwlock (write), 2 cond,
					   3 rwlock (read) */
	pthread_cond_t *cond;           /* kind 2: NULL is cond_var */
};

int lock_wait(struct waiter *w);
void *waiter(void *arg);

NOINLINE int
lock_wait(struct waiter *w)
{
	int r;

	if (w->kind == 1)
		r = pthread_rwlock_wrlock(&rw_lock);
	else if (w->kind == 3)
		r = pthread_rwlock_rdlock(&rw_lock);
	else if (w->kind == 2) {
		pthread_mutex_lock(&cond_mutex);
		r = pthread_cond_wait(w->cond ? w->cond : &cond_var, &cond_mutex);
	} else
		r = pthread_mutex_lock(w->want);
	BARRIER();
	return r;
}

NOINLINE void *
waiter(void *arg)
{
	struct waiter *w = arg;

	target_register(w->name, &tids[w->slot]);
	if (w->hold)
		pthread_mutex_lock(w->hold);
	pthread_barrier_wait(&held);
	__atomic_add_fetch(&passed, 1, __ATOMIC_RELEASE);
	lock_wait(w);
	BARRIER();
	return NULL;
}

static void
init_mutex(pthread_mutex_t *m, int type, int robust)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, type);
	if (robust)
		pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if ((errno = pthread_mutex_init(m, &a)))
		target_die("pthread_mutex_init");
	pthread_mutexattr_destroy(&a);
}

int
main(int argc, char **argv)
{
	static struct waiter w[3] = {
		{ "lk-a", 0, NULL, NULL, 0, NULL },
		{ "lk-b", 1, NULL, NULL, 0, NULL },
		{ "lk-c", 2, NULL, NULL, 0, NULL },
	};
	const char *mode = argc > 1 ? argv[1] : "cycle2";
	int i, n = 2;
	pthread_t thread;
	char buf[256];
	ssize_t r;

	target_init();
	pthread_setname_np(pthread_self(), "locks");
	printf("thread locks %d\n", (int) getpid());
	if (!strcmp(mode, "errorcheck") || !strcmp(mode, "robust")) {
		int robust = !strcmp(mode, "robust");
		int type = robust ? PTHREAD_MUTEX_NORMAL : PTHREAD_MUTEX_ERRORCHECK;
		init_mutex(&lock_a, type, robust);
		init_mutex(&lock_b, type, robust);
		mode = "cycle2";
	}
	if (!strcmp(mode, "cycle2")) {
		w[0].hold = &lock_a; w[0].want = &lock_b;
		w[1].hold = &lock_b; w[1].want = &lock_a;
	} else if (!strcmp(mode, "cycle3")) {
		n = 3;
		w[0].hold = &lock_a; w[0].want = &lock_b;
		w[1].hold = &lock_b; w[1].want = &lock_c;
		w[2].hold = &lock_c; w[2].want = &lock_a;
	} else if (!strcmp(mode, "contend")) {
		n = 3;
		pthread_mutex_lock(&lock_a);
		for (i = 0; i < n; i++)
			w[i].want = &lock_a;
	} else if (!strcmp(mode, "rwlock")) {
		pthread_rwlock_rdlock(&rw_lock);
		w[0].kind = 1;
		w[1].kind = 2;
	} else if (!strcmp(mode, "rwwrite")) {
		n = 1;
		pthread_rwlock_wrlock(&rw_lock);
		w[0].kind = 3;
	} else if (!strcmp(mode, "conds")) {
		n = 3;
		for (i = 0; i < n; i++) {
			w[i].kind = 2;
			w[i].cond = &conds[i];
		}
	} else {
		fprintf(stderr, "target: unknown mode %s\n", mode);
		return 64;
	}
	pthread_barrier_init(&held, NULL, (unsigned) n);
	for (i = 0; i < n; i++) {
		errno = pthread_create(&thread, NULL, waiter, &w[i]);
		if (errno)
			target_die("pthread_create");
	}
	for (i = 0; i < n; i++)
		target_wait_tid(&tids[i]);
	/* The barrier is a futex wait too: only after it the lock's. */
	for (i = 0; __atomic_load_n(&passed, __ATOMIC_ACQUIRE) < n; i++) {
		if (i >= TARGET_READY_TIMEOUT_MS)
			target_die("barrier");
		target_sleep_ms(1);
	}
	for (i = 0; i < n; i++) {
		target_wait_blocked(w[i].name, tids[i], -2);
		printf("thread %s %d\n", w[i].name, (int) tids[i]);
	}
	printf("ready\n");
	do
		r = read(0, buf, sizeof buf - 1);
	while (target_command(buf, sizeof buf, r));
	return 0;
}
