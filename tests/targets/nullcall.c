/*
 * nullcall.c: the most common crash, a call through a NULL function
 * pointer (tests/dump-nullcall.test).  main -> call_null_b -> call_null,
 * which calls through a pointer that is NULL: the pc becomes 0, and the
 * return address into call_null is at the top of the stack.
 *
 *   nullcall live   a SIGSEGV handler says "ready" and blocks in read(2),
 *                   so the crashed state can be dumped live
 *   nullcall crash  no handler: the kernel writes a core
 */
#include "target.h"

static void (*volatile fnptr)(void);

static void
on_segv(int sig)
{
	char c;

	(void)sig;
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	_exit(0);
}

NOINLINE void
call_null(void)
{
	fnptr();
	BARRIER();
}

NOINLINE void
call_null_b(void)
{
	call_null();
	BARRIER();
}

int
main(int argc, char **argv)
{
	target_init();
	if (argc > 1 && strcmp(argv[1], "live") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, NULL);
	}
	call_null_b();
	return 0;
}
