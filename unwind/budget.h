/* unwind/budget.h - the run's bounds on the memory unwind/ builds from
 * the target's files: symbol tables (symtab.c), and the copies CFI needs
 * (sections inflated and indexed by cfi-read.c, MiniDebugInfo
 * decompressed by minidebuginfo.c).  Each
 * builder bounds one module itself (relative to its file, with a
 * ceiling) and charges what it keeps here, so that many modules, or many
 * processes of one hostile program, cannot add up to more than the
 * run's budget.  Defined in unwind/budget.c.
 *
 * Private to unwind/ (and its unit tests).  Thread-safe (dump unwinds on a
 * thread of its own).
 */
#ifndef STACKSPY_UNWIND_BUDGET_H
#define STACKSPY_UNWIND_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

enum unwind_budget {
	UNWIND_BUDGET_SYMBOLS,    /* symbol tables and their name blocks */
	UNWIND_BUDGET_CFI,        /* inflated and indexed CFI */
	UNWIND_BUDGETS
};

/* Functions one module's symbol table may hold (24 bytes each: 96 MiB),
 * and how many entries of its table are looked at to find them (16M:
 * 384 MiB of a 64-bit .symtab, released page by page as it is read).
 * STACKSPY_TEST_SYMBOL_BUDGET=N (tests only) makes it N functions, the
 * entries 4 N and the run's symbol budget the room of 2 N. */
#define SYMTAB_MODULE_FUNCS   (4u << 20)
#define SYMTAB_ENTRIES_RATIO  4
/* The run's budgets in bytes: symbols, twice a module's most. */
#define SYMTAB_RUN_RATIO      2
#define CFI_RUN_BYTES         (256ull << 20)
/* One module's CFI copies (an inflated .debug_frame, its index), each: at most this, and at most CFI_MODULE_RATIO times the
 * file it comes from, with a floor of CFI_MODULE_MIN. */
#define CFI_MODULE_MAX        (64ull << 20)
#define CFI_MODULE_MIN        (16ull << 20)
#define CFI_MODULE_RATIO      4

/* The functions a module's table may hold (SYMTAB_MODULE_FUNCS, or the
 * test's value). */
uint64_t unwind_budget_module_funcs(void);
/* The limit of budget b for the run, in bytes. */
uint64_t unwind_budget_limit(enum unwind_budget b);
/* The most a module's CFI copy made from a file of file_size bytes may
 * be: CFI_MODULE_RATIO times it, within [CFI_MODULE_MIN, CFI_MODULE_MAX]. */
uint64_t unwind_budget_cfi_module(uint64_t file_size);
/* Charge bytes to b: true when they fit under its limit (then counted
 * until given back), false when not (nothing counted). */
bool unwind_budget_take(enum unwind_budget b, uint64_t bytes);
/* Give back bytes taken from b. */
void unwind_budget_give(enum unwind_budget b, uint64_t bytes);
/* Bytes of b taken now (tests). */
uint64_t unwind_budget_used(enum unwind_budget b);

#endif
