/* tests/targets/vm/locks.c - a deadlock for the live tests in emulated
 * machines (tests/vm-aarch64.test, tests/vm-mipsel.test): cross-compiled
 * and run inside the guest, where `stackspy dump` must name who waits
 * for whom.
 *
 *   lock-a  holds mutex_a, waits for mutex_b
 *   lock-b  holds mutex_b, waits for mutex_a   (a cycle of two)
 *   lock-c  waits for mutex_a                  (contention, no cycle)
 *   main    in pthread_join
 *
 * Once the three are blocked it writes its pid to the file named by
 * argv[1], so the guest's script knows when to look.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ready.h"

pthread_mutex_t mutex_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t mutex_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static volatile pid_t tids[3];

/* Thread i: takes first (none for lock-c), waits until lock-a and lock-b
 * hold theirs, then asks for second. */
struct job {
	int i;
	pthread_mutex_t *first, *second;
};

static void *
lock_thread(void *arg)
{
	const struct job *j = arg;
	tids[j->i] = gettid();
	if (j->first)
		pthread_mutex_lock(j->first);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(j->second);
	return NULL;
}

/* Every thread but main blocked in futex(2) (/proc/self/task/TID/syscall
 * begins with its number, the same for the three). */
static int
all_blocked(int n)
{
	char first[256] = "", path[64], buf[256];
	for (int i = 0; i < n; i++) {
		pid_t tid = tids[i];
		FILE *f;
		if (!tid)
			return 0;
		snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
		if (!(f = fopen(path, "r")))
			return 0;
		if (!fgets(buf, sizeof buf, f)) {
			fclose(f);
			return 0;
		}
		fclose(f);
		buf[strcspn(buf, " \n")] = '\0';
		if (strcmp(buf, "running") == 0 || strcmp(buf, "-1") == 0)
			return 0;
		if (i == 0)
			snprintf(first, sizeof first, "%s", buf);
		else if (strcmp(buf, first) != 0)
			return 0;
	}
	return 1;
}

int
main(int argc, char **argv)
{
	static struct job jobs[3] = {
		{ 0, &mutex_a, &mutex_b },
		{ 1, &mutex_b, &mutex_a },
		{ 2, NULL, &mutex_a },
	};
	static const char *const name[3] = { "lock-a", "lock-b", "lock-c" };
	pthread_t t[3];
	struct timespec ms = { 0, 1000000 };

	pthread_barrier_init(&both_hold, NULL, 3);
	for (int i = 0; i < 3; i++) {
		if (pthread_create(&t[i], NULL, lock_thread, &jobs[i]) != 0)
			return 1;
		pthread_setname_np(t[i], name[i]);
	}
	/* Up to 10 s for the three to block (one emulated CPU). */
	for (int i = 0; i < 10000 && !all_blocked(3); i++)
		nanosleep(&ms, NULL);
	if (vm_ready(argc, argv) < 0)
		return 1;
	pthread_join(t[0], NULL);
	return 0;
}
