/*
 * evilname.c: a process whose names are hostile to a terminal
 * (tests/security-terminal.test).
 *
 * Usage: evilname COMM THREAD [PID]
 *   sets its own name (comm) to COMM and starts a thread named THREAD
 *   (both cut to 15 bytes by the kernel); with PID, also PTRACE_SEIZEs PID,
 *   so that stackspy meets COMM as the name of another tracer.  Prints
 *   "ready" once its thread sleeps, then sleeps until killed.
 *
 * The thread sleeps in evil_RLOfn_x41(), a name a test can patch in a copy
 * of this program (the same length: "RLO" the 3 bytes of U+202E, '_' a
 * backslash) to meet a hostile symbol name: evil_<U+202E>fn\x41.
 */
#include "target.h"

#include <sys/ptrace.h>

__attribute__((noinline)) static void *
evil_RLOfn_x41(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t th;

	if (argc != 3 && argc != 4)
		return 99;
	target_init();
	if (prctl(PR_SET_NAME, argv[1]) != 0)
		target_die("prctl(PR_SET_NAME)");
	if (pthread_create(&th, NULL, evil_RLOfn_x41, NULL) != 0)
		target_die("pthread_create");
	if (pthread_setname_np(th, argv[2]) != 0)
		target_die("pthread_setname_np");
	if (argc == 4 && ptrace(PTRACE_SEIZE, (pid_t)atoi(argv[3]), 0L, 0L) != 0)
		target_die("PTRACE_SEIZE");
	target_sleep_ms(100);
	printf("ready\n");
	for (;;)
		pause();
}
