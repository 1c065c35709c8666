/* unwind/yield.h - the hook long loops of unwind/ call, so that the
 * tracer can hand on tracee stops while a large table is built (the hook
 * is set with unwind_set_yield, unwind.h).  Defined in unwind/unwind.c.
 *
 * Private to unwind/ (and its unit tests); it calls nothing of unwind/.
 */
#ifndef STACKSPY_UNWIND_YIELD_H
#define STACKSPY_UNWIND_YIELD_H

/* Call from long loops: every UNWIND_YIELD_EVERY calls, the hook of
 * unwind_set_yield (unwind.c). */
#define UNWIND_YIELD_EVERY 4096
void unwind_yield(void);

#endif
