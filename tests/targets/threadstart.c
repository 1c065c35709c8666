/* threadstart.c: threads blocked in read, for the frames below their
 * function: the C library's thread start and clone (tests/dump-musl.test
 * builds it with musl-gcc, static and dynamic). */
#include "target.h"

static int never[2];

static NOINLINE void *
worker_thread(void *arg)
{
	char c;
	while (read(never[0], &c, 1) < 0 && errno == EINTR)
		;
	BARRIER();
	return arg;
}

int
main(void)
{
	pthread_t t[2];
	char buf[64];

	target_init();
	if (pipe(never) != 0)
		target_die("pipe");
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker_thread, NULL) != 0)
			target_die("pthread_create");
	printf("ready\n");
	while (fgets(buf, sizeof(buf), stdin))
		;
	return 0;
}
