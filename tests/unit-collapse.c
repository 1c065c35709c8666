/*
 * Unit tests of collapse/: interning, counting, the folded writer, and that
 * memory follows distinct stacks rather than samples.
 */
#include "config.h"

#include "collapse/collapse.h"
#include "tests/check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns the folded output of c as a string the caller frees. */
static char *folded(const struct collapse *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		perror("open_memstream");
		exit(99);
	}
	CHECK(collapse_write_folded(c, f) == 0);
	fclose(f);
	return buf;
}

/* Returns s as collapse_json_string() writes it, a string the caller
 * frees. */
static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		perror("open_memstream");
		exit(99);
	}
	collapse_json_string(f, s);
	CHECK(!ferror(f));
	fclose(f);
	return buf;
}

/* The one JSON escaper (speedscope, dump --format json): names from
 * hostile binaries and thread names stay valid JSON, control characters
 * are escaped, good UTF-8 is kept as is, and each bad byte is one U+FFFD. */
static void test_json_string(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ NULL, "null" },
		{ "", "\"\"" },
		{ "main", "\"main\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "t\n\t\x01\x1f\x7f", "\"t\\u000a\\u0009\\u0001\\u001f\\u007f\"" },
		/* C1 controls (U+0085, U+009B): valid UTF-8, escaped */
		{ "x\xc2\x85y\xc2\x9b", "\"x\\u0085y\\u009b\"" },
		/* U+00A0, e-acute, euro sign, U+1F600: kept */
		{ "\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		  "\"\xc2\xa0\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		/* a stray byte, a character cut short (a thread name cut at
		 * 15 bytes), a surrogate, an overlong '/', past U+10FFFF */
		{ "\xff", "\"\\ufffd\"" },
		{ "ab\xe2\x82", "\"ab\\ufffd\\ufffd\"" },
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
		{ "\xc2", "\"\\ufffd\"" },
		/* bidi marks, embeddings, overrides and isolates, U+FFFE:
		 * escaped as code points (text.c's rule) */
		{ "a\xe2\x80\xae" "b\xd8\x9c\xe2\x80\x8e\xe2\x81\xa6\xe2\x81\xa9\xef\xbf\xbe",
		  "\"a\\u202eb\\u061c\\u200e\\u2066\\u2069\\ufffe\"" },
		/* U+2028 and U+202F (next to the overrides) are kept */
		{ "\xe2\x80\xa9\xe2\x80\xaf", "\"\xe2\x80\xa9\xe2\x80\xaf\"" },
		/* ASCII runs (written whole) against everything else */
		{ "ab\xc3\xa9" "cd\"e\x01" "f\xc2\x9bg\\\xffh",
		  "\"ab\xc3\xa9" "cd\\\"e\\u0001f\\u009bg\\\\\\ufffdh\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = json_of(cases[i].in);

		CHECK_STR(got, cases[i].want);
		free(got);
	}
}

/* The one escaping rule (collapse/text.c): what is kept, what becomes
 * "\xNN", and the backslash doubled so an escape reads one way. */
static void test_text_escape(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" },
		{ "main", "main" },
		{ "std::vector<int>::at", "std::vector<int>::at" },
		/* b, backslash, the byte 0xca, c: one reading only */
		{ "b\\\xca" "c", "b\\\\\\xcac" },
		{ "\\x41", "\\\\x41" },
		/* C0, DEL, C1 (U+009B, two bytes), a bare 0x9b */
		{ "\x1b]0;t\x07\x7f", "\\x1b]0;t\\x07\\x7f" },
		{ "\xc2\x9b" "2J\x9b", "\\xc2\\x9b" "2J\\x9b" },
		/* every bidi character of the rule */
		{ "\xe2\x80\xaa\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c",
		  "\\xe2\\x80\\xaa\\xe2\\x80\\xae\\xe2\\x81\\xa6\\xe2\\x81\\xa9"
		  "\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c" },
		/* kept: e-acute, CJK, U+1F600, U+202F (after the overrides) */
		{ "caf\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80\xe2\x80\xaf",
		  "caf\xc3\xa9\xe6\xbc\xa2\xf0\x9f\x98\x80\xe2\x80\xaf" },
		/* bad UTF-8: a character cut short, a surrogate, overlong */
		{ "ab\xe2\x82", "ab\\xe2\\x82" },
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },
		{ "\xc0\xaf", "\\xc0\\xaf" },
		{ "\xef\xbf\xbf", "\\xef\\xbf\\xbf" },
	};
	char buf[256], *dup;
	char out[4096];
	FILE *f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = collapse_text_escape(buf, sizeof(buf), cases[i].in);

		CHECK_STR(buf, cases[i].want);
		CHECK(n == strlen(cases[i].want));
		CHECK(collapse_text_escaped_len(cases[i].in) == n);
		dup = collapse_text_dup(cases[i].in);
		CHECK(dup && strcmp(dup, cases[i].want) == 0);
		free(dup);
		memset(out, 0, sizeof(out));
		f = fmemopen(out, sizeof(out) - 1, "w");
		if (!f) {
			perror("fmemopen");
			exit(99);
		}
		collapse_text_write(f, cases[i].in);
		fclose(f);
		CHECK_STR(out, cases[i].want);
	}
	/* cut between escapes, never inside one */
	CHECK(collapse_text_escape(buf, 7, "ab\xe2\x80\xae") == 2);
	CHECK_STR(buf, "ab");
	CHECK(collapse_text_escape(buf, 4, "a\\b") == 3);
	CHECK_STR(buf, "a\\\\");
}

/* Every writer of collapse/ applies the rule: a bidi override, a
 * backslash and a bad byte in a symbol name and in a thread's root frame
 * reach no file raw. */
static void test_writers_escape(void)
{
	static const char rlo[] = "\xe2\x80\xae";
	struct collapse *c = collapse_new();
	char root[96], *buf = NULL;
	const char *names[3];
	uint32_t ids[3];
	size_t len = 0;
	FILE *f;

	if (!c)
		exit(99);
	names[0] = collapse_name_root(root, sizeof(root), "b\\\xca" "c\xe2\x80\xaex", 7, 8);
	names[1] = "main";
	names[2] = "evil\xe2\x80\xae" "fn\\x";
	for (int i = 0; i < 3; i++)
		ids[i] = (uint32_t)collapse_intern(c, names[i]);
	CHECK(collapse_add(c, ids, 3, 5) == 0);

	buf = folded(c);
	CHECK_STR(buf, "b\\\\\\xcac\\xe2\\x80\\xaex-7/8;main;evil\\xe2\\x80\\xaefn\\\\x 5\n");
	free(buf);

	f = open_memstream(&buf, &len);
	if (!f)
		exit(99);
	CHECK(collapse_write_svg(c, NULL, f) == 0);
	fclose(f);
	CHECK(!strstr(buf, rlo));
	CHECK(strstr(buf, "<title>evil\\xe2\\x80\\xaefn\\\\x (5 samples"));
	CHECK(strstr(buf, "<title>b\\\\\\xcac\\xe2\\x80\\xaex-7/8 (5 samples"));
	free(buf);

	f = open_memstream(&buf, &len);
	if (!f)
		exit(99);
	CHECK(collapse_write_speedscope(c, NULL, f) == 0);
	fclose(f);
	CHECK(!strstr(buf, rlo));
	CHECK(strstr(buf, "\"evil\\u202efn\\\\x\""));
	CHECK(strstr(buf, "\"b\\\\\\ufffdc\\u202ex-7/8\""));
	free(buf);
	collapse_free(c);
}

static struct collapse *new_or_die(void)
{
	struct collapse *c = collapse_new();

	if (!c) {
		perror("collapse_new");
		exit(99);
	}
	return c;
}

/* Interns names[0..n-1] into ids, checking each succeeds. */
static void intern_all(struct collapse *c, const char *const *names,
		       size_t n, uint32_t *ids)
{
	for (size_t i = 0; i < n; i++) {
		int id = collapse_intern(c, names[i]);

		CHECK(id >= 0);
		ids[i] = id >= 0 ? (uint32_t)id : 0;
	}
}

static void test_intern(void)
{
	struct collapse *c = new_or_die();
	char buf[32];
	int a, b, a2;

	CHECK(collapse_lookup(c, "main") == -ENOENT);
	a = collapse_intern(c, "main");
	b = collapse_intern(c, "worker_main");
	CHECK(a == 0 && b == 1);	/* dense, first-seen order */

	/* the store keeps its own copy: the caller's buffer may change */
	strcpy(buf, "main");
	a2 = collapse_intern(c, buf);
	CHECK(a2 == a);
	strcpy(buf, "changed");
	CHECK_STR(collapse_frame_name(c, (uint32_t)a), "main");

	CHECK(collapse_intern(c, "") == 2);
	CHECK(collapse_intern(c, "") == 2);
	CHECK(collapse_intern(c, "Main") == 3);
	CHECK(collapse_lookup(c, "worker_main") == b);
	CHECK(collapse_intern(c, NULL) == -EINVAL);
	CHECK(collapse_frame_name(c, 4) == NULL);
	CHECK(collapse_distinct_frames(c) == 4);

	/* enough names to grow the index several times */
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		CHECK(collapse_intern(c, buf) == 4 + i);
	}
	for (int i = 0; i < 5000; i += 7) {
		snprintf(buf, sizeof(buf), "fn_%d", i);
		CHECK(collapse_lookup(c, buf) == 4 + i);
		CHECK_STR(collapse_frame_name(c, (uint32_t)(4 + i)), buf);
	}
	CHECK(collapse_distinct_frames(c) == 5004);
	collapse_free(c);
	collapse_free(NULL);
}

static void test_counts(void)
{
	static const char *const names[] = { "main", "a", "b", "c" };
	struct collapse *c = new_or_die();
	struct collapse_stack st;
	uint32_t id[4], s1[3], s2[3], s3[2];
	uint64_t sum = 0;
	size_t cursor = 0, seen = 0;

	intern_all(c, names, 4, id);
	s1[0] = id[0], s1[1] = id[1], s1[2] = id[2];	/* main;a;b */
	s2[0] = id[0], s2[1] = id[2], s2[2] = id[1];	/* main;b;a */
	s3[0] = id[0], s3[1] = id[1];			/* main;a */

	CHECK(collapse_add(c, s1, 3, 1) == 0);
	CHECK(collapse_add(c, s1, 3, 4) == 0);
	CHECK(collapse_add(c, s2, 3, 2) == 0);
	CHECK(collapse_add(c, s3, 2, 10) == 0);
	CHECK(collapse_add(c, s3, 2, 0) == 0);
	CHECK_EQ_U64(collapse_count(c, s1, 3), 5);
	CHECK_EQ_U64(collapse_count(c, s2, 3), 2);
	CHECK_EQ_U64(collapse_count(c, s3, 2), 10);
	CHECK_EQ_U64(collapse_count(c, s1, 1), 0);	/* prefix of s1: another stack */
	CHECK_EQ_U64(collapse_total_samples(c), 17);
	CHECK(collapse_distinct_stacks(c) == 3);

	/* bad input leaves the store as it was */
	CHECK(collapse_add(c, s1, 0, 1) == -EINVAL);
	s2[1] = 99;
	CHECK(collapse_add(c, s2, 3, 1) == -EINVAL);
	s2[1] = id[2];
	CHECK(collapse_add(c, s1, 3, UINT64_MAX) == -EOVERFLOW);
	CHECK_EQ_U64(collapse_total_samples(c), 17);
	CHECK(collapse_distinct_stacks(c) == 3);

	/* iteration: first-seen order, every stack once, counts sum up */
	while (collapse_next(c, &cursor, &st)) {
		if (seen == 0)
			CHECK(st.n == 3 && memcmp(st.ids, s1, sizeof(s1)) == 0);
		if (seen == 2)
			CHECK(st.n == 2 && memcmp(st.ids, s3, sizeof(s3)) == 0);
		sum += st.count;
		seen++;
	}
	CHECK(seen == 3);
	CHECK_EQ_U64(sum, 17);
	CHECK(!collapse_next(c, &cursor, &st));
	collapse_free(c);
}

static void add_named(struct collapse *c, const char *const *names, size_t n,
		      uint64_t count)
{
	uint32_t ids[16];

	intern_all(c, names, n, ids);
	CHECK(collapse_add(c, ids, n, count) == 0);
}

static void test_folded(void)
{
	static const char *const crunch_primes[] = {
		"main", "worker_main", "crunch", "compute_primes" };
	static const char *const crunch_hash[] = {
		"main", "worker_main", "crunch", "hash_block" };
	static const char *const crunch[] = { "main", "worker_main", "crunch" };
	static const char *const waiting[] = {
		"start_thread", "wait_for_job", "pthread_cond_wait" };
	static const char *const cxx[] = {
		"main", "std::vector<int>::push_back", "operator new" };
	struct collapse *c = new_or_die();
	char *text;

	text = folded(c);
	CHECK_STR(text, "");
	free(text);

	add_named(c, waiting, 3, 7);
	add_named(c, crunch_primes, 4, 30);
	add_named(c, crunch_hash, 4, 10);
	add_named(c, crunch, 3, 1);
	add_named(c, cxx, 3, 2);
	add_named(c, crunch_primes, 4, 3);
	text = folded(c);
	CHECK_STR(text,
		  "main;std::vector<int>::push_back;operator new 2\n"
		  "main;worker_main;crunch 1\n"
		  "main;worker_main;crunch;compute_primes 33\n"
		  "main;worker_main;crunch;hash_block 10\n"
		  "start_thread;wait_for_job;pthread_cond_wait 7\n");
	free(text);

	/* the output does not depend on the order samples came in */
	{
		struct collapse *r = new_or_die();
		char *rtext;

		add_named(r, crunch_primes, 4, 3);
		add_named(r, cxx, 3, 2);
		add_named(r, crunch, 3, 1);
		add_named(r, crunch_hash, 4, 10);
		add_named(r, crunch_primes, 4, 30);
		add_named(r, waiting, 3, 7);
		text = folded(c);
		rtext = folded(r);
		CHECK_STR(rtext, text);
		free(text);
		free(rtext);
		collapse_free(r);
	}
	collapse_free(c);
}

static void test_sanitize(void)
{
	static const char *const evil[] = {
		"main", "a;b", "line\nbreak", "tab\there", "cr\r", "x y" };
	static const char *const colon[] = { "main", "a:b" };
	static const char *const semi[] = { "main", "a;b" };
	static const char *const spaced[] = { "a", "b 1" };
	static const char *const plain[] = { "a", "b" };
	struct collapse *c = new_or_die();
	char name[] = "ns;fn\nx y\x7f";
	char *text;

	CHECK(collapse_sanitize_frame(name) == 3);
	CHECK_STR(name, "ns:fn x y ");
	strcpy(name, "clean name");
	CHECK(collapse_sanitize_frame(name) == 0);
	CHECK_STR(name, "clean name");

	add_named(c, evil, 6, 4);
	text = folded(c);
	/* controls are escaped before the folded rule sees them (text.c) */
	CHECK_STR(text, "main;a:b;line\\x0abreak;tab\\x09here;cr\\x0d;x y 4\n");
	free(text);
	/* the store keeps names as given: other writers may want them */
	CHECK(collapse_lookup(c, "a;b") >= 0);
	collapse_free(c);

	/* two stacks that print alike become one line */
	c = new_or_die();
	add_named(c, colon, 2, 1);
	add_named(c, semi, 2, 2);
	CHECK(collapse_distinct_stacks(c) == 2);
	text = folded(c);
	CHECK_STR(text, "main;a:b 3\n");
	free(text);
	collapse_free(c);

	/* bytewise order of whole lines, as LC_ALL=C sort has it */
	c = new_or_die();
	add_named(c, plain, 2, 5);
	add_named(c, spaced, 2, 7);
	text = folded(c);
	CHECK_STR(text, "a;b 1 7\na;b 5\n");
	free(text);
	collapse_free(c);
}

/* Fills ids with a depth-8 stack unique to i, over 1000 frame names. */
static void make_stack(uint32_t i, const uint32_t *profiler_frame_ids, uint32_t *ids)
{
	ids[0] = profiler_frame_ids[0];
	ids[1] = profiler_frame_ids[1 + i % 997];
	ids[2] = profiler_frame_ids[1 + (i / 997) % 997];
	for (int d = 3; d < 8; d++)
		ids[d] = profiler_frame_ids[1 + (i * 31 + d) % 997];
}

static void test_many_stacks(void)
{
	enum { NSTACKS = 100000, DEPTH = 8, NFRAMES = 998 };
	struct collapse *c = new_or_die();
	uint32_t profiler_frame_ids[NFRAMES], ids[DEPTH];
	struct collapse_stack st;
	size_t cursor = 0, lines = 0, mem;
	uint64_t sum = 0;
	char name[32], *text;

	for (int i = 0; i < NFRAMES; i++) {
		int id;

		snprintf(name, sizeof(name), "function_%04d", i);
		id = collapse_intern(c, name);
		CHECK(id == i);
		profiler_frame_ids[i] = (uint32_t)i;
	}
	/* each stack twice, with counts 1 + i % 3 and 1 */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < NSTACKS; i++) {
			make_stack(i, profiler_frame_ids, ids);
			CHECK(collapse_add(c, ids, DEPTH,
					   pass ? 1 : 1 + i % 3) == 0);
		}
	CHECK(collapse_distinct_stacks(c) == NSTACKS);
	for (uint32_t i = 0; i < NSTACKS; i += 4999) {
		make_stack(i, profiler_frame_ids, ids);
		CHECK_EQ_U64(collapse_count(c, ids, DEPTH), 2 + i % 3);
	}
	while (collapse_next(c, &cursor, &st)) {
		CHECK(st.n == DEPTH);
		sum += st.count;
	}
	CHECK_EQ_U64(sum, collapse_total_samples(c));
	/* sum of (2 + i % 3) over i < 100000: i % 3 adds 3 per full cycle */
	CHECK_EQ_U64(sum, 2ull * NSTACKS + 33333 * 3);

	text = folded(c);
	for (char *p = text, *prev = NULL; p && *p; ) {
		char *nl = strchr(p, '\n');

		CHECK(nl != NULL);
		if (!nl)
			break;
		*nl = '\0';
		if (prev)
			CHECK(strcmp(prev, p) < 0);
		prev = p;
		p = nl + 1;
		lines++;
	}
	CHECK(lines == NSTACKS);
	free(text);

	/* Stores ids (4 bytes each), a 32-byte record and an index slot per
	 * stack: a generous bound, and at least the ids themselves. */
	mem = collapse_memory_bytes(c);
	CHECK(mem >= (size_t)NSTACKS * DEPTH * 4);
	CHECK(mem <= (size_t)NSTACKS * (DEPTH * 4 + 32 + 4 * 4) * 2 +
		     (size_t)NFRAMES * 64 + 4096);
	collapse_free(c);
}

static void test_memory_follows_stacks(void)
{
	static const char *const names[] = {
		"main", "loop", "step", "f0", "f1", "f2", "f3", "f4", "f5", "f6" };
	struct collapse *c = new_or_die();
	uint32_t id[10], stack[3];
	size_t before;

	intern_all(c, names, 10, id);
	stack[0] = id[0], stack[1] = id[1];
	for (int k = 0; k < 7; k++) {
		stack[2] = id[3 + k];
		CHECK(collapse_add(c, stack, 3, 1) == 0);
	}
	before = collapse_memory_bytes(c);

	/* a million more samples of the same seven stacks: no growth */
	for (int i = 0; i < 1000000; i++) {
		stack[2] = id[3 + i % 7];
		if (collapse_add(c, stack, 3, 1) != 0) {
			CHECK(!"collapse_add failed");
			break;
		}
	}
	CHECK(collapse_memory_bytes(c) == before);
	CHECK(collapse_distinct_stacks(c) == 7);
	CHECK_EQ_U64(collapse_total_samples(c), 1000007);
	CHECK(before < 8192);
	collapse_free(c);
}

int main(void)
{
	test_intern();
	test_counts();
	test_folded();
	test_sanitize();
	test_many_stacks();
	test_memory_follows_stacks();
	test_json_string();
	test_text_escape();
	test_writers_escape();
	return check_exit_status("unit-collapse");
}
