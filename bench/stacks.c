/*
 * stacks: threads that compute in ever new stacks, for the memory of a
 * long recording (bench/record-memory.sh).
 *
 * Each of N threads (default 2) walks a random path of DEPTH (default 12)
 * calls through 16 functions (s0 ... s15, each calling the next one the
 * path names) and spins a little at its end: 16^DEPTH paths, so nearly
 * every sample of a long recording is a stack not seen before.  Prints its
 * PID once the threads run, then runs until killed or until stdin, if a
 * pipe, reaches EOF.
 */
#include "config.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static int depth = 12;

typedef void step_fn(const unsigned char *path, int left);
static step_fn *steps[16];

static void leaf(void)
{
	static volatile unsigned long sink;
	for (int i = 0; i < 2000; i++)
		sink += (unsigned long)i;
}

#define STEP(n)								\
	__attribute__((noinline)) static void s##n(const unsigned char *path, int left) \
	{								\
		if (left == 0)						\
			leaf();						\
		else							\
			steps[path[0]](path + 1, left - 1);		\
		__asm__ volatile("" ::: "memory");			\
	}
STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5) STEP(6) STEP(7)
STEP(8) STEP(9) STEP(10) STEP(11) STEP(12) STEP(13) STEP(14) STEP(15)

static void *walker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15u + 1;
	unsigned char path[64];

	for (;;) {
		for (int i = 0; i < depth; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			path[i] = (unsigned char)(x & 15);
		}
		steps[path[0]](path + 1, depth - 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	struct stat st;

	if (argc > 2)
		depth = atoi(argv[2]);
	if (n < 1 || n > 64 || depth < 1 || depth > 60) {
		fputs("usage: stacks [THREADS [DEPTH]]  (1-64 threads, depth 1-60)\n", stderr);
		return 64;
	}
	step_fn *all[16] = { s0, s1, s2, s3, s4, s5, s6, s7,
			     s8, s9, s10, s11, s12, s13, s14, s15 };
	for (int i = 0; i < 16; i++)
		steps[i] = all[i];
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, walker, (void *)(uintptr_t)(i + 1)) != 0)
			return 1;
	}
	printf("%d\n", (int)getpid());
	fflush(stdout);
	if (fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		char c;
		while (read(0, &c, 1) > 0)
			;
		return 0;
	}
	for (;;)
		pause();
}
