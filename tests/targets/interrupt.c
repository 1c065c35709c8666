/*
 * interrupt.c: signal a command in the middle of its attach
 * (tests/detach-signal.test).
 *
 * Usage: interrupt SIGNAL DELAY_US PID COMMAND [ARG...]
 * Runs COMMAND, polls /proc/PID/status until its TracerPid is COMMAND's
 * pid (COMMAND has begun attaching), waits DELAY_US microseconds and sends
 * SIGNAL to COMMAND.  Prints "caught 1" when the signal was sent while
 * COMMAND was attached ("caught 0" when COMMAND had detached or exited
 * first), then "exit N" or "signal N" for how COMMAND ended.
 * Exit status: 0 ran, 2 COMMAND did not end within 30 s after the signal,
 * 99 usage or system error.
 */
#include "target.h"

#include <fcntl.h>
#include <sys/wait.h>

int
main(int argc, char **argv)
{
	int sig, fd, status = 0, caught = 0, i;
	long delay_us;
	char path[64];
	pid_t child, w;

	if (argc < 5)
		return 99;
	target_init();
	alarm(0);
	sig = atoi(argv[1]);
	delay_us = atol(argv[2]);
	snprintf(path, sizeof path, "/proc/%s/status", argv[3]);
	if ((fd = open(path, O_RDONLY)) < 0)
		target_die(path);

	if ((child = fork()) < 0)
		target_die("fork");
	if (child == 0) {
		/* An asynchronous list of sh ignores SIGINT: undo that. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[4], argv + 4);
		_exit(127);
	}

	for (;;) {
		if (target_tracer_of(fd) == child)
			break;
		w = waitpid(child, &status, WNOHANG);
		if (w == child)
			goto done;
	}
	if (delay_us > 0) {
		struct timespec ts = { delay_us / 1000000,
				       (delay_us % 1000000) * 1000 };
		nanosleep(&ts, NULL);
	}
	caught = target_tracer_of(fd) == child;
	kill(child, sig);

	for (i = 0; i < 30000; i++) {
		w = waitpid(child, &status, WNOHANG);
		if (w == child)
			goto done;
		target_sleep_ms(1);
	}
	printf("caught %d\nhung\n", caught);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return 2;

done:
	printf("caught %d\n", caught);
	if (WIFEXITED(status))
		printf("exit %d\n", WEXITSTATUS(status));
	else
		printf("signal %d\n", WTERMSIG(status));
	return 0;
}
