/* tests/unit-uimodel.c - the model behind `stackspy top`, without a
 * terminal: self and total per function (recursion counted once), the
 * thread names, per-thread scope, the rolling window, reset, the
 * name filter, sorting, callers and callees; and fitting names into
 * columns (UTF-8, double width, ellipsis). */
#include "config.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "collapse/collapse.h"
#include "ui/ui-internal.h"
#include "tests/check.h"
#include "ui/ui.h"

static struct collapse *names;

static uint32_t
id(const char *name)
{
	int r = collapse_intern(names, name);
	if (r < 0) {
		fprintf(stderr, "collapse_intern failed\n");
		exit(99);
	}
	return (uint32_t)r;
}

/* Adds count samples of thread tid of process 100, called "prog":
 * "a;b;c", as the profiler passes them to its hook. */
static void
add(struct ui_model *m, pid_t tid, const char *stack, int count)
{
	uint32_t ids[32];
	size_t n = 0;
	char buf[512], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *t = strtok_r(buf, ";", &save); t; t = strtok_r(NULL, ";", &save))
		ids[n++] = id(t);
	for (int i = 0; i < count; i++)
		CHECK(ui_model_add(m, 100, tid, "prog", ids, n) == 0);
}

static const struct ui_row *
row(const struct ui_table *t, const char *name, long thread)
{
	int r = collapse_lookup(names, name);
	for (size_t i = 0; r >= 0 && i < t->nrows; i++)
		if (t->rows[i].function == (uint32_t)r && t->rows[i].thread == thread)
			return &t->rows[i];
	return NULL;
}

static const char *
fname(const struct ui_model *m, const struct ui_table *t, size_t i)
{
	return i < t->nrows ? ui_model_function_name(m, t->rows[i].function) : "(none)";
}

static const char *
module_of(void *arg, uint32_t fid)
{
	(void)arg;
	const char *n = collapse_frame_name(names, fid);
	return n && strncmp(n, "lib", 3) == 0 ? "libx.so" : n && n[0] != 'p' ? "prog" : NULL;
}

static void
test_aggregate(void)
{
	names = collapse_new();
	struct ui_model *m = ui_model_new(names, 10, module_of, NULL);
	CHECK(m != NULL);
	ui_model_set_time(m, 1.0);
	add(m, 101, "main;work;compute", 6);
	add(m, 101, "main;work;hash", 2);
	add(m, 102, "start;loop;compute", 1);
	/* recursion: f;g;f counts f once in total, and g's self is 0 */
	add(m, 102, "start;f;g;f", 1);
	/* a sample without a frame: ignored */
	uint32_t none = 0;
	CHECK(ui_model_add(m, 100, 101, "prog", &none, 0) == 0);

	struct ui_query q = { .thread = -1, .sort = UI_SORT_SELF };
	struct ui_table t;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.samples == 10);
	CHECK(ui_model_samples(m) == 10);
	const struct ui_row *r = row(&t, "compute", -1);
	CHECK(r && r->self == 7 && r->total == 7);
	r = row(&t, "main", -1);
	CHECK(r && r->self == 0 && r->total == 8);
	r = row(&t, "work", -1);
	CHECK(r && r->self == 0 && r->total == 8);
	r = row(&t, "f", -1);
	CHECK(r && r->self == 1 && r->total == 1);
	r = row(&t, "g", -1);
	CHECK(r && r->self == 0 && r->total == 1);
	/* sorted by self, ties by total then name */
	CHECK(strcmp(fname(m, &t, 0), "compute") == 0);
	CHECK(strcmp(fname(m, &t, 1), "hash") == 0);
	CHECK(strcmp(fname(m, &t, 2), "f") == 0);

	q.sort = UI_SORT_TOTAL;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(strcmp(fname(m, &t, 0), "main") == 0);  /* 8, self 0; "work" too */
	CHECK(strcmp(fname(m, &t, 1), "work") == 0);
	CHECK(strcmp(fname(m, &t, 2), "compute") == 0);
	q.sort = UI_SORT_NAME;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(strcmp(fname(m, &t, 0), "compute") == 0);
	CHECK(strcmp(fname(m, &t, t.nrows - 1), "work") == 0);
	q.sort = UI_SORT_MODULE;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(strcmp(ui_model_function_module(m, t.rows[0].function), "prog") == 0);

	/* threads: first-seen order, named as --threads names root frames */
	CHECK(ui_model_thread_count(m) == 2);
	pid_t tid;
	uint64_t samples;
	const char *tn = ui_model_thread(m, 1, &tid, &samples);
	CHECK(tn && strcmp(tn, "prog-100/102") == 0 && tid == 102 && samples == 2);
	CHECK(ui_model_thread(m, 2, NULL, NULL) == NULL);
	q.thread = 1;
	q.sort = UI_SORT_SELF;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.samples == 2);
	CHECK(row(&t, "main", -1) == NULL);
	r = row(&t, "compute", -1);
	CHECK(r && r->self == 1);

	/* split per thread: compute appears once per thread */
	q.thread = -1;
	q.split_threads = true;
	CHECK(ui_model_query(m, &q, &t) == 0);
	r = row(&t, "compute", 0);
	CHECK(r && r->self == 6);
	r = row(&t, "compute", 1);
	CHECK(r && r->self == 1);
	q.split_threads = false;

	/* the filter: case-insensitive substring; the 100% stays all */
	q.filter = "HAS";
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.nrows == 1 && strcmp(fname(m, &t, 0), "hash") == 0);
	CHECK(t.samples == 10);
	q.filter = NULL;

	/* callers and callees */
	struct ui_detail d;
	CHECK(ui_model_detail(m, &q, id("compute"), &d) == 0);
	CHECK(d.self == 7 && d.total == 7 && d.samples == 10);
	CHECK(d.ncallers == 2 && d.ncallees == 0);
	CHECK(d.ncallers == 2 && strcmp(ui_model_function_name(m, d.callers[0].function), "work") == 0 &&
	      d.callers[0].count == 6 && d.callers[1].count == 1);
	ui_detail_release(&d);
	CHECK(ui_model_detail(m, &q, id("work"), &d) == 0);
	CHECK(d.ncallees == 2 && d.callees[0].count == 6 && d.callees[1].count == 2);
	CHECK(d.ncallers == 1 && d.callers[0].count == 8);
	ui_detail_release(&d);
	/* f;g;f: g is f's callee and its caller, each edge once */
	CHECK(ui_model_detail(m, &q, id("f"), &d) == 0);
	CHECK(d.total == 1 && d.self == 1);
	CHECK(d.ncallees == 1 && d.callees[0].count == 1);
	CHECK(d.ncallers == 2);
	ui_detail_release(&d);

	/* reset */
	ui_model_reset(m);
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.samples == 0 && t.nrows == 0);
	CHECK(ui_model_samples(m) == 0);
	CHECK(ui_model_thread_count(m) == 2);
	add(m, 101, "main;work;hash", 1);
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.samples == 1 && t.nrows == 3);

	ui_model_free(m);
	collapse_free(names);
}

static void
test_window(void)
{
	names = collapse_new();
	struct ui_model *m = ui_model_new(names, 3, NULL, NULL);
	struct ui_query cum = { .thread = -1 }, win = { .thread = -1, .window = true };
	struct ui_table t;
	ui_model_set_time(m, 10.2);
	add(m, 7, "main;old", 4);
	ui_model_set_time(m, 11.5);
	add(m, 7, "main;mid", 2);
	ui_model_set_time(m, 12.9);
	add(m, 7, "main;new", 1);
	CHECK(ui_model_query(m, &win, &t) == 0);
	CHECK(t.samples == 7);
	/* second 13: second 10 leaves a 3-second window */
	ui_model_set_time(m, 13.0);
	CHECK(ui_model_query(m, &win, &t) == 0);
	CHECK(t.samples == 3 && row(&t, "old", -1) == NULL);
	const struct ui_row *r = row(&t, "mid", -1);
	CHECK(r && r->self == 2);
	CHECK(ui_model_query(m, &cum, &t) == 0);
	CHECK(t.samples == 7);
	/* a stack seen again in a later second counts in both buckets */
	add(m, 7, "main;mid", 5);
	ui_model_set_time(m, 14.1);
	CHECK(ui_model_query(m, &win, &t) == 0);
	r = row(&t, "mid", -1);
	CHECK(r && r->self == 5);
	CHECK(t.samples == 6);
	/* time never goes back; a long jump empties the window */
	ui_model_set_time(m, 2.0);
	CHECK(ui_model_query(m, &win, &t) == 0);
	CHECK(t.samples == 6);
	ui_model_set_time(m, 1000.0);
	CHECK(ui_model_query(m, &win, &t) == 0);
	CHECK(t.samples == 0);
	CHECK(ui_model_query(m, &cum, &t) == 0);
	CHECK(t.samples == 12);
	/* a reset empties the window too */
	add(m, 7, "main;new", 3);
	ui_model_reset(m);
	CHECK(ui_model_query(m, &win, &t) == 0);
	CHECK(t.samples == 0);
	add(m, 7, "main;new", 2);
	CHECK(ui_model_query(m, &win, &t) == 0);
	CHECK(t.samples == 2);
	ui_model_free(m);
	collapse_free(names);
}

/* Many distinct stacks: the tables grow, nothing is lost. */
static void
test_many(void)
{
	names = collapse_new();
	struct ui_model *m = ui_model_new(names, 5, NULL, NULL);
	char stack[64];
	for (int i = 0; i < 3000; i++) {
		snprintf(stack, sizeof(stack), "main;f%d;g%d", i % 500, i);
		add(m, 1 + i % 40, stack, 1 + i % 3);
	}
	struct ui_query q = { .thread = -1 };
	struct ui_table t;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.samples == 6000);
	CHECK(ui_model_thread_count(m) == 40);
	const struct ui_row *r = row(&t, "main", -1);
	CHECK(r && r->total == 6000);
	CHECK(t.nrows == 1 + 500 + 3000);
	ui_model_free(m);
	collapse_free(names);
}

/* split by process: one row per (process, function), labelled comm-PID
 * from the process's main thread, or PID when it has no sample */
static void
test_processes(void)
{
	names = collapse_new();
	struct ui_model *m = ui_model_new(names, 10, NULL, NULL);
	CHECK(m != NULL);
	uint32_t leaf = id("leaf");
	CHECK(ui_model_add(m, 100, 100, "master", &leaf, 1) == 0);
	CHECK(ui_model_add(m, 100, 101, "thread", &leaf, 1) == 0);
	CHECK(ui_model_add(m, 200, 200, "worker", &leaf, 1) == 0);
	CHECK(ui_model_add(m, 200, 200, "worker", &leaf, 1) == 0);
	CHECK(ui_model_add(m, 300, 301, "helper", &leaf, 1) == 0);
	struct ui_query q = { .thread = -1, .split_procs = true, .sort = UI_SORT_SELF };
	struct ui_table t;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.nrows == 3 && t.samples == 5);
	char buf[64];
	uint64_t self[3] = { 0 };
	for (size_t i = 0; i < t.nrows; i++) {
		ui_model_process_label(m, t.rows[i].pid, buf, sizeof(buf));
		if (t.rows[i].pid == 100) {
			CHECK(strcmp(buf, "master-100") == 0);
			self[0] = t.rows[i].self;
		} else if (t.rows[i].pid == 200) {
			CHECK(strcmp(buf, "worker-200") == 0);
			self[1] = t.rows[i].self;
		} else {
			CHECK(t.rows[i].pid == 300 && strcmp(buf, "300") == 0);
			self[2] = t.rows[i].self;
		}
		CHECK(t.rows[i].thread == -1);
	}
	CHECK(self[0] == 2 && self[1] == 2 && self[2] == 1);
	/* not split: one row */
	q.split_procs = false;
	CHECK(ui_model_query(m, &q, &t) == 0);
	CHECK(t.nrows == 1 && t.rows[0].self == 5 && t.rows[0].pid == 0);
	ui_model_free(m);
	collapse_free(names);
	names = NULL;
}

/* Thread names come with the samples (the profiler's hook). */
static void
test_thread_names(void)
{
	names = collapse_new();
	struct ui_model *m = ui_model_new(names, 10, NULL, NULL);
	CHECK(m != NULL);
	uint32_t leaf = id("leaf");
	/* a thread keeps the name of its first sample; spaces and control
	 * characters as '_', as in --threads root frames; no name: PID/TID */
	CHECK(ui_model_add(m, 100, 103, "my worker\t1", &leaf, 1) == 0);
	CHECK(ui_model_add(m, 100, 103, "renamed", &leaf, 1) == 0);
	CHECK(ui_model_add(m, 100, 104, NULL, &leaf, 1) == 0);
	/* the same tid in another process is another thread */
	CHECK(ui_model_add(m, 200, 103, "other", &leaf, 1) == 0);
	CHECK(ui_model_thread_count(m) == 3);
	pid_t tid = 0;
	uint64_t samples = 0;
	const char *tn = ui_model_thread(m, 0, &tid, &samples);
	CHECK(tn && strcmp(tn, "my_worker_1-100/103") == 0 && tid == 103 && samples == 2);
	tn = ui_model_thread(m, 1, &tid, NULL);
	CHECK(tn && strcmp(tn, "100/104") == 0 && tid == 104);
	tn = ui_model_thread(m, 2, &tid, NULL);
	CHECK(tn && strcmp(tn, "other-200/103") == 0 && tid == 103);
	/* no frame: ignored, no thread */
	CHECK(ui_model_add(m, 100, 105, "x", &leaf, 0) == 0);
	CHECK(ui_model_thread_count(m) == 3);
	ui_model_free(m);
	collapse_free(names);
	names = NULL;
}

static void
test_text(void)
{
	wchar_t w[64];
	char buf[32];
	if (!setlocale(LC_CTYPE, "C.UTF-8") && !setlocale(LC_CTYPE, "en_US.UTF-8")) {
		fprintf(stderr, "no UTF-8 locale: text tests skipped\n");
		return;
	}
	CHECK(ui_text_fit("compute", 10, w, 64) == 7 && wcscmp(w, L"compute") == 0);
	CHECK(ui_text_fit("compute_primes", 8, w, 64) == 8 && wcscmp(w, L"compute\u2026") == 0);
	CHECK(ui_text_fit("abc", 0, w, 64) == 0 && w[0] == 0);
	CHECK(ui_text_fit("abcdef", 1, w, 64) == 1 && wcscmp(w, L"\u2026") == 0);
	/* UTF-8: "café" is 4 columns, 5 bytes */
	CHECK(ui_text_width("caf\xc3\xa9") == 4);
	CHECK(ui_text_fit("caf\xc3\xa9_au_lait", 5, w, 64) == 5 && wcscmp(w, L"caf\u00e9\u2026") == 0);
	/* double width: never cut in half */
	CHECK(ui_text_width("\xe6\xbc\xa2\xe5\xad\x97x") == 5);
	CHECK(ui_text_fit("\xe6\xbc\xa2\xe5\xad\x97x", 4, w, 64) == 3 &&
	      wcscmp(w, L"\u6f22\u2026") == 0);
	/* not UTF-8, control bytes, a bidi override, a backslash: the
	 * escaping rule of every output (collapse/text.c) */
	CHECK(ui_text_fit("a\xff" "b\tc", 20, w, 64) == 11 && wcscmp(w, L"a\\xffb\\x09c") == 0);
	CHECK(ui_text_width("x\xe2\x80\xaey\\") == 16);
	CHECK(ui_text_fit("x\xe2\x80\xaey\\", 20, w, 64) == 16 &&
	      wcscmp(w, L"x\\xe2\\x80\\xaey\\\\") == 0);
	/* an escape is not cut: "x" and the ellipsis */
	CHECK(ui_text_fit("x\xe2\x80\xaey", 8, w, 64) == 2 && wcscmp(w, L"x\u2026") == 0);
	/* the detail view wraps between whole characters and escapes */
	CHECK(ui_text_take("ab\xe2\x80\xae" "cd", 13, 100) == 2);
	CHECK(ui_text_take("ab\xe2\x80\xae" "cd", 14, 100) == 5);
	CHECK(ui_text_take("abcdef", 10, 3) == 3);
	/* a long C++ name */
	const char *cxx = "std::_Hashtable<std::string, std::pair<const std::string, int>>::_M_find_before_node";
	CHECK(ui_text_fit(cxx, 20, w, 64) == 20 && w[19] == 0x2026 && wcsncmp(w, L"std::_Hashtable<std", 19) == 0);
	/* without a UTF-8 locale the ellipsis is "..." */
	setlocale(LC_CTYPE, "C");
	CHECK(ui_text_fit("compute_primes", 8, w, 64) == 8 && wcscmp(w, L"compu...") == 0);
	/* ... and what is not ASCII is escaped: the terminal cannot show it */
	CHECK(ui_text_fit("caf\xc3\xa9", 20, w, 64) == 11 && wcscmp(w, L"caf\\xc3\\xa9") == 0);

	ui_format_seconds(0.123, buf, sizeof(buf));
	CHECK(strcmp(buf, "0.12s") == 0);
	ui_format_seconds(12.34, buf, sizeof(buf));
	CHECK(strcmp(buf, "12.3s") == 0);
	ui_format_seconds(1000, buf, sizeof(buf));
	CHECK(strcmp(buf, "16m40s") == 0);
	ui_format_seconds(100000, buf, sizeof(buf));
	CHECK(strcmp(buf, "27h46m") == 0);
}

int
main(void)
{
	test_aggregate();
	test_window();
	test_many();
	test_thread_names();
	test_processes();
	test_text();
	return check_exit_status("unit-uimodel");
}
