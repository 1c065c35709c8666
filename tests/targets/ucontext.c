/*
 * ucontext.c: a thread of control made by makecontext (coroutines, green
 * threads), for tests/dump-ucontext.test: read <- co_leaf <- co_fn on a
 * stack of its own, whose "caller" is glibc's __start_context, placed
 * there by makecontext as a return address that no call made.  Prints
 * "ready" from co_leaf, then serves stdin as in target.h.
 */
#include "target.h"

#include <ucontext.h>

static ucontext_t main_ctx, co_ctx;
static char co_stack[256 * 1024];

NOINLINE static void
co_leaf(void)
{
	char cmd[64];

	puts("ready");
	while (target_command(cmd, sizeof(cmd), read(0, cmd, sizeof(cmd) - 1)))
		;
}

NOINLINE static void
co_fn(void)
{
	co_leaf();
	BARRIER();
}

int
main(void)
{
	target_init();
	if (getcontext(&co_ctx) < 0)
		target_die("getcontext");
	co_ctx.uc_stack.ss_sp = co_stack;
	co_ctx.uc_stack.ss_size = sizeof(co_stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co_fn, 0);
	if (swapcontext(&main_ctx, &co_ctx) < 0)
		target_die("swapcontext");
	return 0;
}
