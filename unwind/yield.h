/* unwind/yield.h - the hook long loops of unwind/ call, so that the
 * tracer can hand on tracee stops while a large table is built (the hook
 * is set with unwind_set_yield, unwind.h), and the deadline they keep
 * (unwind_set_deadline).  Defined in unwind/yield.c, the bottom of
 * unwind/.
 *
 * Private to unwind/ (and its unit tests); it calls nothing of unwind/.
 */
#ifndef STACKSPY_UNWIND_YIELD_H
#define STACKSPY_UNWIND_YIELD_H

#include <stdbool.h>

/* Call from long loops: every UNWIND_YIELD_EVERY calls, the hook of
 * unwind_set_yield (yield.c). */
#define UNWIND_YIELD_EVERY 4096
void unwind_yield(void);

/* Has the unwinding's deadline (unwind_set_deadline) passed?  Walks
 * then stop (UNWIND_STOP_DEADLINE) and no symbol table is built: ask only
 * where the answer cuts something (a yes is counted as a miss). */
bool unwind_deadline_passed(void);

#endif
