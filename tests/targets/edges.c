/*
 * edges.c: two threads at the edges of two promises of DESIGN.md, for
 * tests/promise-caller-ip.test and tests/promise-stack-end.test.
 *
 * "t-noret" blocks in read <- hang_forever <- noret_caller <- noret_thread.
 * hang_forever is noreturn, so noret_caller's call to it is its last
 * instruction: the return address is the first byte after noret_caller
 * (another function, or nothing), and only a lookup at ip - 1 names the
 * caller right.
 *
 * "t-edge" runs on a stack of its own (pthread_attr_setstack) whose mapping
 * is followed at once by a shared memfd mapping that nobody touches: a
 * stack copy that is not cut at the end of the stack mapping reads into it,
 * which makes its pages resident.  "above" on stdin -> "above N": how many
 * of its pages are resident (mincore).
 *
 * Prints "thread NAME TID" for each thread, then "ready"; then serves stdin
 * as in target.h.
 */
#include "target.h"

#include <sys/mman.h>

#define EDGE_STACK (64 * 1024)
#define EDGE_ABOVE (256 * 1024)

static int never[2];
static volatile pid_t noret_tid, edge_tid;
static unsigned char *above;

void hang_forever(void) __attribute__((noreturn));
void noret_caller(void);
void *noret_thread(void *arg);
int edge_leaf(void);
int edge_f1(void);
void *edge_thread(void *arg);

NOINLINE void
hang_forever(void)
{
	char c;

	for (;;)
		if (read(never[0], &c, 1) == 0)
			target_sleep_ms(1000);
}

NOINLINE void
noret_caller(void)
{
	hang_forever();
}

NOINLINE void *
noret_thread(void *arg)
{
	target_register("t-noret", &noret_tid);
	noret_caller();
	BARRIER();
	return arg;
}

NOINLINE int
edge_leaf(void)
{
	char c;
	int r = (int) read(never[0], &c, 1);
	BARRIER();
	return r;
}

NOINLINE int
edge_f1(void)
{
	int r = edge_leaf();
	BARRIER();
	return r;
}

NOINLINE void *
edge_thread(void *arg)
{
	target_register("t-edge", &edge_tid);
	edge_f1();
	BARRIER();
	return arg;
}

static long
above_resident(void)
{
	long page = sysconf(_SC_PAGESIZE), n = 0;
	unsigned char vec[EDGE_ABOVE / 4096 + 1];

	if (mincore(above, EDGE_ABOVE, vec) != 0)
		target_die("mincore");
	for (long i = 0; i < EDGE_ABOVE / page; i++)
		n += vec[i] & 1;
	return n;
}

int
main(void)
{
	pthread_t th;
	pthread_attr_t attr;
	unsigned char *base;
	int fd;
	char buf[256];

	target_init();
	pthread_setname_np(pthread_self(), "edges");
	if (pipe(never) != 0)
		target_die("pipe");

	/* [stack: anonymous][above: memfd, shared], adjacent. */
	base = mmap(NULL, EDGE_STACK + EDGE_ABOVE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		target_die("mmap");
	fd = memfd_create("edges-above", 0);
	if (fd < 0 || ftruncate(fd, EDGE_ABOVE) != 0)
		target_die("memfd");
	above = mmap(base + EDGE_STACK, EDGE_ABOVE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_FIXED, fd, 0);
	if (above == MAP_FAILED)
		target_die("mmap memfd");
	if (mmap(base, EDGE_STACK, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		target_die("mmap stack");
	if (above_resident() != 0) {
		fprintf(stderr, "target: the memfd pages are resident at start\n");
		return 3;
	}

	errno = pthread_create(&th, NULL, noret_thread, NULL);
	if (errno)
		target_die("pthread_create");
	pthread_attr_init(&attr);
	errno = pthread_attr_setstack(&attr, base, EDGE_STACK);
	if (errno)
		target_die("pthread_attr_setstack");
	errno = pthread_create(&th, &attr, edge_thread, NULL);
	if (errno)
		target_die("pthread_create");

	printf("thread edges %d\n", (int) target_gettid());
	printf("thread t-noret %d\n", (int) target_wait_tid(&noret_tid));
	printf("thread t-edge %d\n", (int) target_wait_tid(&edge_tid));
	target_wait_blocked("t-noret", noret_tid, SYS_read);
	target_wait_blocked("t-edge", edge_tid, SYS_read);
	printf("stack %p-%p above %p-%p\n", (void *) base,
	       (void *) (base + EDGE_STACK), (void *) above,
	       (void *) (above + EDGE_ABOVE));
	printf("ready\n");
	for (;;) {
		ssize_t r = read(0, buf, sizeof buf - 1);

		if (r > 0 && strncmp(buf, "above", 5) == 0) {
			printf("above %ld\n", above_resident());
			continue;
		}
		if (!target_command(buf, sizeof buf, r))
			break;
	}
	return 0;
}
