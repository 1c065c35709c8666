/* tests/unit-perfmap.c - unwind/perf-map.c on a map this process writes
 * for itself (/tmp/perf-OWNPID.map): incremental reads (appended lines,
 * a line still being written, a file rewritten in place, replaced or
 * removed), later lines replacing the entries they overlap (in one batch
 * and across reads), names that stay valid, the caps with their count,
 * and the name pool under them. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "unwind/perf-map.h"
#include "unwind/target.h"

static char path[64];

static void
put(const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);
	if (!f) {
		perror(path);
		exit(99);
	}
	fputs(text, f);
	fclose(f);
}

static const char *
look(struct perf_map **pm, uint64_t addr, uint64_t *off)
{
	return unwind_perf_map_lookup(pm, getpid(), addr, off);
}

static void
test_incremental(void)
{
	struct perf_map *pm = NULL;
	struct perf_map_usage u;
	uint64_t off = 0;

	unlink(path);
	CHECK(look(&pm, 0x1000, NULL) == NULL, "no map, no name");

	put("w", "1000 100 alpha\n0x2000 10 beta with spaces\n");
	const char *a = look(&pm, 0x1010, &off);
	CHECK_STR(a, "alpha");
	CHECK_EQ_U64(off, 0x10);
	CHECK_STR(look(&pm, 0x2000, NULL), "beta with spaces");
	CHECK(look(&pm, 0x2010, NULL) == NULL, "past the end of beta");
	CHECK(look(&pm, 0xfff, NULL) == NULL, "before alpha");

	/* Appended: a later line replaces the one it overlaps, whole. */
	put("a", "1000 80 gamma\n");
	CHECK_STR(look(&pm, 0x1010, NULL), "gamma");
	CHECK(look(&pm, 0x1090, NULL) == NULL, "alpha was replaced by gamma");
	CHECK_STR(a, "alpha");   /* still valid (ASan would say otherwise) */
	unwind_perf_map_usage(pm, &u);
	CHECK_EQ_U64(u.entries, 2);

	/* A line being written counts once it is whole. */
	put("a", "3000 10 par");
	CHECK(look(&pm, 0x3000, NULL) == NULL, "half a line");
	put("a", "tial\n");
	CHECK_STR(look(&pm, 0x3004, NULL), "partial");

	/* Re-jitted in place a thousand times: one entry, one name. */
	for (int i = 0; i < 1000; i++)
		put("a", i & 1 ? "5000 20 odd\n" : "5000 20 even\n");
	CHECK_STR(look(&pm, 0x5000, NULL), "odd");
	unwind_perf_map_usage(pm, &u);
	CHECK_EQ_U64(u.entries, 4);
	CHECK(u.name_bytes < 100, "names are interned: %zu bytes", u.name_bytes);

	/* Rewritten in place ("> FILE"), longer than before: read whole. */
	{
		char big[20000];
		size_t n = 0;
		n += (size_t)snprintf(big + n, sizeof(big) - n, "9000 10 delta\n");
		while (n < sizeof(big) - 100)
			n += (size_t)snprintf(big + n, sizeof(big) - n,
					      "%zx 1 filler\n", 0x100000 + n);
		put("w", big);
	}
	CHECK(look(&pm, 0x1010, NULL) == NULL, "gamma is gone after the rewrite");
	CHECK(look(&pm, 0x5000, NULL) == NULL, "odd is gone after the rewrite");
	CHECK_STR(look(&pm, 0x9000, NULL), "delta");

	/* Replaced (a new file renamed over it): read whole. */
	{
		char tmp[80];
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		FILE *f = fopen(tmp, "w");
		fputs("a000 10 epsilon\n", f);
		fclose(f);
		CHECK(rename(tmp, path) == 0);
	}
	CHECK(look(&pm, 0x9000, NULL) == NULL, "delta is gone with its file");
	CHECK_STR(look(&pm, 0xa008, NULL), "epsilon");

	/* Removed: no names. */
	unlink(path);
	CHECK(look(&pm, 0xa008, NULL) == NULL, "no map any more");
	CHECK_STR(a, "alpha");
	unwind_perf_map_free(pm);
}

/* Lines of one read resolved among themselves as if read one by one. */
static void
test_one_batch(void)
{
	struct perf_map *pm = NULL;

	put("w", "10000 100 x1\n"
		 "10080 100 y\n"         /* replaces x1 */
		 "10000 10 z\n"          /* x1 gone already; y stays */
		 "20000 100 w\n"
		 "20010 10 inner\n"      /* replaces w, whole */
		 "1f000 2000 wide\n"     /* replaces inner (and w) */
		 "30000 10 p\n30010 10 q\n30020 10 r\n"
		 "3000c 8 s\n");         /* replaces p and q, not r */
	CHECK_STR(look(&pm, 0x10005, NULL), "z");
	CHECK(look(&pm, 0x10050, NULL) == NULL, "x1 was replaced");
	CHECK_STR(look(&pm, 0x10090, NULL), "y");
	CHECK_STR(look(&pm, 0x20015, NULL), "wide");
	CHECK_STR(look(&pm, 0x1f000, NULL), "wide");
	CHECK(look(&pm, 0x30000, NULL) == NULL, "p was replaced");
	CHECK_STR(look(&pm, 0x3000c, NULL), "s");
	CHECK(look(&pm, 0x30018, NULL) == NULL, "q was replaced");
	CHECK_STR(look(&pm, 0x30020, NULL), "r");
	unwind_perf_map_free(pm);
}

static void
test_caps(void)
{
	struct perf_map *pm = NULL;
	struct perf_map_usage u;
	char line[128];
	FILE *f;

	unlink(path);
	unwind_perf_map_set_limits(&pm, 64, 1024, 1 << 20);
	f = fopen(path, "w");
	for (int i = 0; i < 1000; i++)
		fprintf(f, "%x 10 fn%d\n", 0x100000 + 0x10 * i, i % 10);
	fclose(f);
	CHECK_STR(look(&pm, 0x100000 + 0x10 * 999, NULL), "fn9");
	CHECK(look(&pm, 0x100000, NULL) == NULL, "the oldest lines went first");
	unwind_perf_map_usage(pm, &u);
	CHECK(u.entries <= 64, "%zu entries kept, cap 64", u.entries);
	CHECK(u.dropped >= 1000 - 64, "%" PRIu64 " dropped", u.dropped);

	/* Names: past 1 KiB of distinct names, lines with new ones go. */
	uint64_t before = u.dropped;
	f = fopen(path, "a");
	for (int i = 0; i < 100; i++)
		fprintf(f, "%x 10 a_rather_long_distinct_name_%d\n", 0x900000 + 0x10 * i, i);
	fclose(f);
	CHECK(look(&pm, 0x900000 + 0x10 * 99, NULL) == NULL, "a name past the cap");
	unwind_perf_map_usage(pm, &u);
	CHECK(u.name_bytes <= 1024, "%zu bytes of names, cap 1024", u.name_bytes);
	CHECK(u.dropped > before, "lines over the name cap are counted");
	/* A name already kept still works. */
	snprintf(line, sizeof(line), "%x 10 fn3\n", 0xa00000);
	put("a", line);
	CHECK_STR(look(&pm, 0xa00000, NULL), "fn3");
	unwind_perf_map_free(pm);
}

/* Many lines (several batches), then one appended line at a time: each
 * read costs what was appended, and everything is found. */
static void
test_large(void)
{
	struct perf_map *pm = NULL;
	struct perf_map_usage u;
	FILE *f = fopen(path, "w");
	int ok = 1;

	for (int i = 0; i < 200000; i++)
		fprintf(f, "%x 40 f%d\n", 0x10000000 + 0x40 * i, i % 5000);
	fclose(f);
	for (int i = 0; i < 200000; i += 997) {
		char want[16];
		snprintf(want, sizeof(want), "f%d", i % 5000);
		const char *got = look(&pm, 0x10000000 + 0x40 * (uint64_t)i + 3, NULL);
		ok &= got && strcmp(got, want) == 0;
	}
	CHECK(ok, "every sampled line of 200000 found");
	for (int i = 0; i < 2000; i++) {
		char line[64];
		snprintf(line, sizeof(line), "%x 40 late%d\n", 0x20000000 + 0x40 * i, i % 7);
		put("a", line);
		const char *got = look(&pm, 0x20000000 + 0x40 * (uint64_t)i, NULL);
		ok &= got && strncmp(got, "late", 4) == 0;
	}
	CHECK(ok, "2000 lines appended one at a time, each found at once");
	unwind_perf_map_usage(pm, &u);
	CHECK_EQ_U64(u.entries, 202000);
	CHECK_EQ_U64(u.dropped, 0);
	unwind_perf_map_free(pm);
}

/* A huge map is read a slice per lookup (here: one read of 64 KiB, the
 * least), later lookups go on from there. */
static void
test_read_max(void)
{
	struct perf_map *pm = NULL;
	struct perf_map_usage u;
	FILE *f = fopen(path, "w");
	int looks = 0;

	unwind_perf_map_set_limits(&pm, 1 << 20, 1 << 20, 1000);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "%x 10 slice%d\n", 0x40000 + 0x10 * i, i % 100);
	fclose(f);
	while (looks < 100 && !look(&pm, 0x40000 + 0x10 * 19999, NULL))
		looks++;
	CHECK(looks >= 3 && looks < 100, "found after %d lookups of a slice", looks);
	CHECK_STR(look(&pm, 0x40000, NULL), "slice0");
	unwind_perf_map_usage(pm, &u);
	CHECK_EQ_U64(u.entries, 20000);
	unwind_perf_map_free(pm);
}

/* What is not a JIT's line is counted, not kept: a bad address or size,
 * a size of 0, no name, an empty line, a line past 4 KiB (skipped to its
 * end, once); the good lines around them are read. */
static void
test_bad_lines(void)
{
	struct perf_map *pm = NULL;
	struct perf_map_usage u;
	FILE *f = fopen(path, "w");

	fprintf(f, "1000 10 good1\nzz 10 hex\n2000 0 empty\n3000 10\n\n4000 x10 bad\n");
	for (int i = 0; i < 10000; i++)
		fputs("long_line_", f);
	fprintf(f, "\n5000 10 good2\n");
	fclose(f);
	CHECK_STR(look(&pm, 0x5000, NULL), "good2");
	CHECK_STR(look(&pm, 0x1000, NULL), "good1");
	unwind_perf_map_usage(pm, &u);
	CHECK_EQ_U64(u.entries, 2);
	CHECK_EQ_U64(u.bad, 6);
	CHECK_EQ_U64(u.dropped, 0);
	CHECK_EQ_U64(u.unread, 0);
	unwind_perf_map_free(pm);
}

/* A look cut short leaves the bytes it did not read counted as unread,
 * and the next that goes on from there changes the generation (names
 * cached by address go); a look that reads to the end, or finds nothing
 * new, does not. */
static void
test_unread_generation(void)
{
	struct perf_map *pm = NULL;
	struct perf_map_usage u;
	FILE *f = fopen(path, "w");
	unsigned gen;

	unwind_perf_map_set_limits(&pm, 1 << 20, 1 << 20, 1000);
	for (int i = 0; i < 20000; i++)
		fprintf(f, "%x 10 part%d\n", 0x40000 + 0x10 * i, i % 100);
	fclose(f);
	CHECK(look(&pm, 0x40000 + 0x10 * 19999, NULL) == NULL, "not at the first look");
	unwind_perf_map_usage(pm, &u);
	CHECK(u.unread > 0 && u.unread < 20000 * 16, "%" PRIu64 " bytes unread", u.unread);
	gen = unwind_perf_map_generation(pm);
	CHECK(gen == 0, "generation %u after one look", gen);
	for (int looks = 0; looks < 100 && !look(&pm, 0x40000 + 0x10 * 19999, NULL); looks++)
		;
	CHECK(unwind_perf_map_generation(pm) > gen, "a look that went on changed the generation");
	unwind_perf_map_usage(pm, &u);
	CHECK_EQ_U64(u.unread, 0);
	gen = unwind_perf_map_generation(pm);
	CHECK_STR(look(&pm, 0x40000, NULL), "part0");
	CHECK(unwind_perf_map_generation(pm) == gen, "nothing new: the same generation");
	unwind_perf_map_free(pm);

	/* The lines of one look are bounded by the entry cap (twice it,
	 * counted at each read of 64 KiB), not by bytes alone. */
	pm = NULL;
	unwind_perf_map_set_limits(&pm, 8, 1 << 20, (size_t)1 << 30);
	f = fopen(path, "w");
	for (int i = 0; i < 100000; i++)
		fprintf(f, "%x 10 f\n", 0x100000 + 0x10 * i);
	fclose(f);
	CHECK(look(&pm, 0x100000 + 0x10 * 99999, NULL) == NULL, "not at the first look");
	unwind_perf_map_usage(pm, &u);
	CHECK(u.unread > 0, "the first look stopped at its lines");
	for (int looks = 0; looks < 100 && !look(&pm, 0x100000 + 0x10 * 99999, NULL); looks++)
		;
	CHECK_STR(look(&pm, 0x100000 + 0x10 * 99999, NULL), "f");
	unwind_perf_map_free(pm);
}

/* The pool behind perf map names and module paths (symbolize.c). */
static void
test_name_pool(void)
{
	struct name_pool *p = NULL;
	const char *a = unwind_name_pool_intern(&p, "libfoo.so", 32);
	const char *b = unwind_name_pool_intern(&p, "libfoo.so", 32);

	CHECK(a && a == b, "one copy per string");
	CHECK_EQ_U64(unwind_name_pool_bytes(p), 10);
	CHECK(unwind_name_pool_intern(&p, "a-name-of-twenty-eight-chars", 32) == NULL,
	      "past max_bytes: refused");
	CHECK(unwind_name_pool_intern(&p, "short", 32) != NULL, "within max_bytes");
	CHECK(unwind_name_pool_intern(&p, "libfoo.so", 16) == a,
	      "a string kept is found past the cap");
	CHECK_EQ_U64(unwind_name_pool_bytes(p), 16);
	unwind_name_pool_free(p);
}

int
main(void)
{
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	test_name_pool();
	test_incremental();
	test_one_batch();
	test_caps();
	test_large();
	test_read_max();
	test_bad_lines();
	test_unread_generation();
	unlink(path);
	return check_exit_status("unit-perfmap");
}
