/*
 * seize.c: trace a process and hold on to it, so that stackspy finds it
 * already traced (tests/attach-traced.test).
 *
 * Usage: seize PID; prints "ready" once PID is seized, then sleeps until
 * killed (the kernel detaches PID then).
 */
#include "target.h"

#include <sys/ptrace.h>

int
main(int argc, char **argv)
{
	pid_t pid;

	if (argc != 2)
		return 99;
	target_init();
	pid = (pid_t) atoi(argv[1]);
	if (ptrace(PTRACE_SEIZE, pid, 0L, 0L) != 0)
		target_die("PTRACE_SEIZE");
	printf("ready\n");
	for (;;)
		pause();
}
