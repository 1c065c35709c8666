/* unwind/budget.c - the run's bounds on what unwind/ builds from the
 * target's files (unwind/budget.h). */
#include "config.h"

#include <stdlib.h>

#include "unwind/budget.h"

static uint64_t used[UNWIND_BUDGETS];

/* STACKSPY_TEST_SYMBOL_BUDGET=N (tests/security-symbols.test and
 * tests/unit-symtab.c only): a module's table holds at most N functions,
 * so that a test goes over it with a library of a few hundred thousand
 * symbols rather than millions. */
uint64_t
unwind_budget_module_funcs(void)
{
	const char *e = getenv("STACKSPY_TEST_SYMBOL_BUDGET");
	if (e && *e) {
		char *end;
		unsigned long long v = strtoull(e, &end, 10);
		if (*end == '\0' && v > 0 && v < SYMTAB_MODULE_FUNCS)
			return v;
	}
	return SYMTAB_MODULE_FUNCS;
}

uint64_t
unwind_budget_limit(enum unwind_budget b)
{
	if (b == UNWIND_BUDGET_SYMBOLS)
		/* 24 bytes a function (struct sym, symtab.c) and room for
		 * the names of PLT stubs */
		return unwind_budget_module_funcs() * 32 * SYMTAB_RUN_RATIO;
	return CFI_RUN_BYTES;
}

uint64_t
unwind_budget_cfi_module(uint64_t file_size)
{
	uint64_t v = file_size > CFI_MODULE_MAX / CFI_MODULE_RATIO ? CFI_MODULE_MAX
								 : file_size * CFI_MODULE_RATIO;
	return v < CFI_MODULE_MIN ? CFI_MODULE_MIN : v;
}

bool
unwind_budget_take(enum unwind_budget b, uint64_t bytes)
{
	uint64_t limit = unwind_budget_limit(b);
	uint64_t cur = __atomic_load_n(&used[b], __ATOMIC_RELAXED);
	do {
		if (bytes > limit || cur > limit - bytes)
			return false;
	} while (!__atomic_compare_exchange_n(&used[b], &cur, cur + bytes, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

void
unwind_budget_give(enum unwind_budget b, uint64_t bytes)
{
	__atomic_sub_fetch(&used[b], bytes, __ATOMIC_RELAXED);
}

uint64_t
unwind_budget_used(enum unwind_budget b)
{
	return __atomic_load_n(&used[b], __ATOMIC_RELAXED);
}
