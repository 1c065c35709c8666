/* unwind/yield.c - the hook the long loops of unwind/ call, and the
 * unwinding's deadline (unwind/yield.h).  The bottom of unwind/: symbol
 * tables, perf maps and the engines call it, and it calls nothing of
 * unwind/ (it was in unwind.c, the dispatcher above the engines, which
 * tied every file that yields into one circle with it). */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ptrace/clock.h"
#include "unwind/unwind.h"
#include "unwind/yield.h"

/* Hooks a tracer gives the long loops (unwind_set_yield), called only on
 * the thread that set them. */
static void (*yield_fn)(void *);
static void *yield_arg;
static pthread_t yield_thread;
static __thread unsigned yield_count;

void
unwind_set_yield(void (*fn)(void *), void *arg)
{
	yield_fn = fn;
	yield_arg = arg;
	yield_thread = pthread_self();
}

/* The unwinding's deadline (CLOCK_MONOTONIC ns), 0: none.  Set by the
 * command's main thread, read by its unwinding thread too. */
static _Atomic uint64_t deadline_ns;

void
unwind_set_deadline(uint64_t ns)
{
	deadline_ns = ns;
}

/* Walks cut and symbol tables not read because of it. */
static _Atomic unsigned long deadline_misses;

bool
unwind_deadline_passed(void)
{
	uint64_t d = deadline_ns;
	if (!d || ptrace_clock_monotonic_ns() < d)
		return false;
	deadline_misses++;
	return true;
}

unsigned long
unwind_deadline_misses(void)
{
	return deadline_misses;
}

void
unwind_yield(void)
{
	/* A few thousand symbols or perf map lines take well under a
	 * millisecond; the hook is one read of a signalfd when nothing is
	 * pending.  Not from another thread: an unwinding thread beside the
	 * tracer (record's, dump's) would take the tracer's stops, which only
	 * the tracer may resume. */
	if (yield_fn && (++yield_count & (UNWIND_YIELD_EVERY - 1)) == 0 &&
	    pthread_equal(yield_thread, pthread_self()))
		yield_fn(yield_arg);
}

void
unwind_busy_for(uint64_t ns)
{
	uint64_t end = ptrace_clock_monotonic_ns() + ns;
	const struct timespec pause = ns_to_timespec(50 * NS_PER_US);
	while (ptrace_clock_monotonic_ns() < end) {
		for (unsigned i = 0; i < UNWIND_YIELD_EVERY; i++)
			unwind_yield();
		nanosleep(&pause, NULL);
	}
}
