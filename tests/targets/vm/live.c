/* tests/targets/vm/live.c - the target of the live tests in emulated
 * machines (tests/vm-aarch64.test, tests/vm-mipsel.test): cross-compiled
 * at -O2 and run inside the guest, where stackspy dumps and records it.
 *
 * Every thread sits in a known call chain, named, and stays there:
 *
 *   live     main > main_wait > pthread_join (blocked in libc)
 *   spin     spin_entry > spin_1 > spin_2 > spin_leaf (busy, a leaf
 *            that calls nothing: its return address is only in the
 *            link register on aarch64 and MIPS, no frame record)
 *   sleeper  sleep_entry > sleep_1 > sleep_2 > nanosleep (blocked in libc)
 *   alloca   va_entry > va_1 > va_alloca > va_leaf (busy; a variable-sized
 *            frame, found from the frame pointer)
 *   signal   sig_entry > sig_1 > sig_2 > pthread_kill > [signal frame] >
 *            on_usr1 > handler_leaf (busy inside the handler)
 *
 * When every thread is in place it writes its pid to the file named by
 * argv[1], so the guest's script knows when to look.  A thread says it is
 * in place with a plain store to its own flag, not an atomic add: on
 * aarch64, GCC compiles an atomic read-modify-write to a call of
 * __aarch64_ldadd4_acq_rel (outline atomics, Debian's and Ubuntu's
 * default), and a leaf that calls it saves a frame record like any
 * caller: no leaf any more.  Every function is
 * noipa and each call is followed by work, so no call becomes a tail call
 * and the chains are the source's at any optimisation level.
 */
#define _GNU_SOURCE
#include <alloca.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ready.h"

#define NOIPA __attribute__((noipa))

static volatile unsigned long sink;

/* Each thread's flag: set once it is in its chain. */
enum { AT_SPIN, AT_SLEEP, AT_ALLOCA, AT_SIGNAL, NTHREADS };
static volatile int here[NTHREADS];

NOIPA void spin_leaf(void) { here[AT_SPIN] = 1; for (;;) sink++; }
NOIPA void spin_2(void) { spin_leaf(); sink++; }
NOIPA void spin_1(void) { spin_2(); sink++; }
NOIPA void *spin_entry(void *arg) { spin_1(); sink++; return arg; }

NOIPA void
sleep_2(void)
{
	struct timespec ts = { 1000, 0 };
	here[AT_SLEEP] = 1;
	for (;;)
		nanosleep(&ts, NULL);
}
NOIPA void sleep_1(void) { sleep_2(); sink++; }
NOIPA void *sleep_entry(void *arg) { sleep_1(); sink++; return arg; }

NOIPA void va_leaf(volatile char *p) { here[AT_ALLOCA] = 1; for (;;) p[0]++; }
NOIPA int
va_alloca(int n)
{
	volatile char *p = alloca((size_t)n);
	memset((char *)p, 0, (size_t)n);
	va_leaf(p);
	return p[2] + (int)sink;
}
NOIPA int va_1(int n) { int r = va_alloca(n * 16); return r + (int)sink; }
NOIPA void *va_entry(void *arg) { va_1(100); sink++; return arg; }

NOIPA void handler_leaf(void) { here[AT_SIGNAL] = 1; for (;;) sink++; }
NOIPA void on_usr1(int s) { handler_leaf(); sink += (unsigned)s; }
NOIPA void sig_2(void) { pthread_kill(pthread_self(), SIGUSR1); sink++; }
NOIPA void sig_1(void) { sig_2(); sink++; }
NOIPA void *sig_entry(void *arg) { sig_1(); sink++; return arg; }

NOIPA void
main_wait(pthread_t t)
{
	pthread_join(t, NULL);
	sink++;
}

static pthread_t
start(void *(*fn)(void *), const char *name)
{
	pthread_t t;
	if (pthread_create(&t, NULL, fn, NULL) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_setname_np(t, name);
	return t;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

	pthread_t spin = start(spin_entry, "spin");
	start(sleep_entry, "sleeper");
	start(va_entry, "alloca");
	start(sig_entry, "signal");
	for (int i = 0; i < NTHREADS; i++)
		while (!here[i])
			usleep(10000);
	if (vm_ready(argc, argv) < 0)
		return 1;
	main_wait(spin);
	return 0;
}
