/*
 * tests/check.h - the checks of the C unit tests (tests/unit-*.c), one copy
 * for all of them.  A failed check prints where it is and what failed
 * ("FAIL file:line: ...") on stderr, is counted, and the test goes on, so
 * one run shows every failure; check_exit_status() at the end of main()
 * prints the count and gives the exit status (0 pass, 1 fail).
 *
 *   CHECK(cond)                   cond holds
 *   CHECK(cond, "fmt", args...)   the same, with a message when it fails
 *   CHECK_STR(got, want)          strings equal (got may be NULL: a failure)
 *   CHECK_EQ_U64(got, want)       integers equal
 *   CHECK_HAS(hay, needle)        hay contains needle
 *
 * Header-only, with static functions: each unit test is its own program.
 */
#ifndef STACKSPY_TESTS_CHECK_H
#define STACKSPY_TESTS_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Checks made and failed so far; a test may count a failure of its own
 * (check_failures++) after printing why. */
static int check_count;
static int check_failures;

/* What CHECK expands to: fmt is " " followed by the optional message (so
 * that it is never an empty format string). */
static void __attribute__((format(printf, 5, 6), unused))
check_at(int ok, const char *file, int line, const char *cond,
	 const char *fmt, ...)
{
	va_list ap;

	check_count++;
	if (ok)
		return;
	check_failures++;
	fprintf(stderr, "FAIL %s:%d: %s", file, line, cond);
	if (fmt[1]) {
		fputc(':', stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

#define CHECK(cond, ...) \
	check_at(!!(cond), __FILE__, __LINE__, #cond, " " __VA_ARGS__)

static void __attribute__((unused))
check_str_at(const char *got, const char *want, const char *file, int line,
	     const char *expr)
{
	check_count++;
	if (got && strcmp(got, want) == 0)
		return;
	check_failures++;
	fprintf(stderr, "FAIL %s:%d: %s is\n%s\nexpected\n%s\n",
		file, line, expr, got ? got : "(null)", want);
}

#define CHECK_STR(got, want) \
	check_str_at((got), (want), __FILE__, __LINE__, #got)

static void __attribute__((unused))
check_eq_u64_at(uint64_t got, uint64_t want, const char *file, int line,
		const char *expr)
{
	check_count++;
	if (got == want)
		return;
	check_failures++;
	fprintf(stderr, "FAIL %s:%d: %s == %" PRIu64 ", expected %" PRIu64 "\n",
		file, line, expr, got, want);
}

#define CHECK_EQ_U64(got, want) \
	check_eq_u64_at((got), (want), __FILE__, __LINE__, #got)

static void __attribute__((unused))
check_has_at(const char *hay, const char *needle, const char *file, int line,
	     const char *expr)
{
	check_count++;
	if (hay && strstr(hay, needle))
		return;
	check_failures++;
	fprintf(stderr, "FAIL %s:%d: %s lacks '%s'\n", file, line, expr, needle);
}

#define CHECK_HAS(hay, needle) \
	check_has_at((hay), (needle), __FILE__, __LINE__, #hay)

/* The end of main(): prints "NAME: N checks, M failed" and returns the
 * test's exit status, 1 if any check failed, else 0. */
static int __attribute__((unused))
check_exit_status(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif /* STACKSPY_TESTS_CHECK_H */
