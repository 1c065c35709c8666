/* sigwait.c: a thread blocked in a signal handler, as programs that do
 * their work in handlers (busybox's shells) are stopped
 * (tests/dump-sighandler.test builds it static, stripped, without unwind
 * tables, as busybox-static is built):
 *   read <- handler <- [signal frame] <- (libc) <- interrupted <- main */
#include "target.h"

static int never[2];

static void
handler(int sig)
{
	char c;
	(void)sig;
	while (read(never[0], &c, 1) < 0 && errno == EINTR)
		;
}

static NOINLINE void
interrupted(void)
{
	printf("ready\n");
	for (;;)
		pause();
}

int
main(void)
{
	target_init();
	if (pipe(never) != 0)
		target_die("pipe");
	signal(SIGUSR1, handler);
	if (fork() == 0) {
		/* the signal, from outside */
		target_sleep_ms(100);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	interrupted();
	return 0;
}
