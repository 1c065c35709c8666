/*
 * inline.c: functions inlined into a noinline one, for dump --source
 * (tests/dump-source.test), built -O2 -g.
 *
 * The main thread blocks in read(2) <- inner <- middle <- outer <- main,
 * where inner and middle are static and always inlined: outer's code holds
 * both, so the return address of the read call is one physical frame
 * (outer) with two inlined frames (inner, then middle).  The test finds the
 * line numbers it expects from the "@name" markers below.
 */
#include "target.h"

void outer(void);

static inline __attribute__((always_inline)) ssize_t
inner(char *buf, size_t size)
{
	ssize_t n = read(0, buf, size);	/* @inner-read */
	BARRIER();
	return n;
}

static inline __attribute__((always_inline)) ssize_t
middle(char *buf, size_t size)
{
	ssize_t n = inner(buf, size);	/* @middle-call */
	BARRIER();
	return n + 0;
}

NOINLINE void
outer(void)
{
	char buf[64];

	for (;;) {
		ssize_t n = middle(buf, sizeof buf);	/* @outer-call */
		if (!target_command(buf, sizeof buf, n))
			break;
	}
	BARRIER();
}

int
main(void)
{
	target_init();
	printf("thread inline %d\n", (int) getpid());
	printf("ready\n");
	outer();	/* @main-call */
	BARRIER();
	return 0;
}
