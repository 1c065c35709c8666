/* tests/targets/vm/nullcall.c - a call through a NULL function pointer,
 * the most common crash, in a thread of a live process, for the emulated
 * machines (tests/vm-aarch64.test): the guest's stackspy dumps it inside
 * its SIGSEGV handler.
 *
 *   main      main > main_wait > pthread_join (blocked in libc)
 *   nullcall  null_entry > null_1 > null_2 > 0x0 > [signal frame] >
 *             on_segv > segv_leaf (busy inside the handler)
 *
 * On aarch64 nothing of the callee at 0x0 ran: null_2's return address is
 * only in the link register, which the signal frame saved.  When the
 * thread is in its handler, the pid goes to the file named by argv[1].
 * `nullcall crash`: no handler; the kernel writes a core of the crash
 * (the main thread waiting in main_wait > pthread_join).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ready.h"

#define NOIPA __attribute__((noipa))

static volatile unsigned long sink;
static volatile int ready;
static void (*volatile null_fn)(void);

/* A leaf that calls nothing (a plain store: an atomic add is a call of
 * __aarch64_ldadd4_acq_rel on aarch64, see live.c). */
NOIPA void segv_leaf(void) { ready = 1; for (;;) sink++; }
NOIPA void on_segv(int s) { segv_leaf(); sink += (unsigned)s; }
NOIPA void null_2(void) { null_fn(); sink++; }
NOIPA void null_1(void) { null_2(); sink++; }
static bool crash;

NOIPA void *
null_entry(void *arg)
{
	/* Crash mode: the main thread gets time to block in its join, a
	 * place the core's check knows. */
	if (crash)
		usleep(300000);
	null_1();
	sink++;
	return arg;
}

NOIPA void
main_wait(pthread_t t)
{
	pthread_join(t, NULL);
	sink++;
}

int
main(int argc, char **argv)
{
	crash = argc > 1 && strcmp(argv[1], "crash") == 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	if (!crash)
		sigaction(SIGSEGV, &sa, NULL);

	pthread_t t;
	if (pthread_create(&t, NULL, null_entry, NULL) != 0) {
		perror("pthread_create");
		return 1;
	}
	if (crash)
		main_wait(t);   /* never returns: the thread's crash ends us */
	pthread_setname_np(t, "nullcall");
	while (ready < 1)
		usleep(10000);
	if (vm_ready(argc, argv) < 0)
		return 1;
	main_wait(t);
	return 0;
}
