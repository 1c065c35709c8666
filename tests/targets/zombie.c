/*
 * zombie.c: keep a zombie child (tests/attach-zombie.test).
 *
 * Prints "zombie PID" and "ready" once the child is a zombie; reaps it and
 * exits on SIGTERM or SIGINT.
 */
#include "target.h"

#include <sys/wait.h>

int
main(void)
{
	char path[64], buf[256], *p;
	sigset_t set;
	pid_t child;
	int ms, sig;
	FILE *f;

	target_init();
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if ((child = fork()) < 0)
		target_die("fork");
	if (child == 0)
		_exit(0);
	snprintf(path, sizeof path, "/proc/%d/stat", (int) child);
	for (ms = 0; ms < TARGET_READY_TIMEOUT_MS; ms++) {
		if ((f = fopen(path, "r"))) {
			p = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
			fclose(f);
			if (p && p[1] == ' ' && p[2] == 'Z')
				break;
		}
		target_sleep_ms(1);
	}
	printf("zombie %d\nready\n", (int) child);
	sigwait(&set, &sig);
	waitpid(child, NULL, 0);
	return 0;
}
