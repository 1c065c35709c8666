/*
 * busy-nocfi.c: part of tests/targets/busy, built with
 * -fno-asynchronous-unwind-tables -fno-unwind-tables and frame pointers:
 * a function that has no CFI at all, which the auto engine crosses with
 * one frame-pointer step (and gdb with its prologue analyzer).
 */
#include "target.h"

long nocfi_frame(long (*cb)(long), long x);

NOINLINE long
nocfi_frame(long (*cb)(long), long x)
{
	long r = cb(x) + 1;

	BARRIER();
	return r;
}
