/*
 * Unit tests of the SVG flamegraph and speedscope writers of collapse/:
 * the frames drawn (merged by prefix, sorted, widths, percentages, rows),
 * min-width dropping, XML and JSON escaping, deterministic output, option
 * checks, write errors. The SVG is checked well-formed and the speedscope
 * file valid JSON by python3 (which the tests need anyway, see init.sh).
 */
#include "config.h"

#include "collapse/collapse.h"
#include "tests/check.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(99);
}

static struct collapse *new_or_die(void)
{
	struct collapse *c = collapse_new();

	if (!c)
		die("collapse_new");
	return c;
}

/* Adds the folded line "a;b;c COUNT" to c. */
static void add(struct collapse *c, const char *folded)
{
	char buf[512], *space, *frame, *save = NULL;
	uint32_t ids[64];
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", folded);
	space = strrchr(buf, ' ');
	if (!space)
		exit(99);
	*space = '\0';
	for (frame = strtok_r(buf, ";", &save); frame && n < 64;
	     frame = strtok_r(NULL, ";", &save)) {
		int id = collapse_intern(c, frame);

		if (id < 0)
			exit(99);
		ids[n++] = (uint32_t)id;
	}
	if (collapse_add(c, ids, n, strtoull(space + 1, NULL, 10)))
		exit(99);
}

static struct collapse *from_lines(const char *const *lines, size_t n)
{
	struct collapse *c = new_or_die();

	for (size_t i = 0; i < n; i++)
		add(c, lines[i]);
	return c;
}

/* Returns the SVG of c as a string the caller frees (NULL if it failed). */
static char *svg_of(const struct collapse *c,
		    const struct collapse_svg_options *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		die("open_memstream");
	ret = collapse_write_svg(c, o, f);
	fclose(f);
	CHECK(ret == 0);
	if (ret) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *speedscope_of(const struct collapse *c, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		die("open_memstream");
	CHECK(collapse_write_speedscope(c, name, f) == 0);
	fclose(f);
	return buf;
}

/* One frame of the SVG as the test reads it back. */
struct drawn {
	char title[256];
	char label[256];	/* "" when the frame has no <text> */
	double x, width;
	int y;
	unsigned int rgb;
};

/* Copies the text between after and the next stop into out. */
static void copy_between(const char *s, const char *after, const char *stop,
			 char *out, size_t size)
{
	const char *a = strstr(s, after), *b;

	out[0] = '\0';
	if (!a)
		return;
	a += strlen(after);
	b = strstr(a, stop);
	if (!b || (size_t)(b - a) >= size)
		return;
	memcpy(out, a, (size_t)(b - a));
	out[b - a] = '\0';
}

static double attr_num(const char *tag, const char *name)
{
	char key[32], val[64];

	snprintf(key, sizeof(key), " %s=\"", name);
	copy_between(tag, key, "\"", val, sizeof(val));
	return strtod(val, NULL);
}

/*
 * Reads the frames back from svg (each "<g><title>" inside
 * <g id="frames">), into d[0..max-1]; returns how many there are.
 */
static size_t parse_frames(const char *svg, struct drawn *d, size_t max)
{
	const char *p = strstr(svg, "<g id=\"frames\">"), *end;
	size_t n = 0;

	if (!p)
		return 0;
	end = strstr(p, "</g>\n</g>") ? strstr(p, "</g>\n</g>") : p;
	while ((p = strstr(p, "<g><title>")) && p < end + 4) {
		const char *close = strstr(p, "</g>");
		char elem[2048], fill[16];
		size_t len = (size_t)(close - p);

		if (len >= sizeof(elem))
			len = sizeof(elem) - 1;
		memcpy(elem, p, len);
		elem[len] = '\0';
		if (n < max) {
			struct drawn *f = &d[n];
			const char *rect = strstr(elem, "<rect");

			copy_between(elem, "<title>", "</title>", f->title,
				     sizeof(f->title));
			copy_between(elem, "\">", "</text>", f->label,
				     sizeof(f->label));
			if (!strstr(elem, "<text"))
				f->label[0] = '\0';
			f->x = attr_num(rect, "x");
			f->width = attr_num(rect, "width");
			f->y = (int)attr_num(rect, "y");
			copy_between(rect, "fill=\"#", "\"", fill,
				     sizeof(fill));
			f->rgb = (unsigned int)strtoul(fill, NULL, 16);
		}
		n++;
		p = close;
	}
	return n;
}

static const struct drawn *by_title(const struct drawn *d, size_t n,
				    const char *title)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(d[i].title, title))
			return &d[i];
	}
	fprintf(stderr, "no frame titled '%s'\n", title);
	check_failures++;
	return NULL;
}

static int svg_height(const char *svg)
{
	const char *p = strstr(svg, "<svg ");

	return p ? (int)attr_num(p, "height") : -1;
}

#define NEAR(a, b) ((a) - (b) < 0.051 && (b) - (a) < 0.051)

/* A temporary file holding text; returns its path (static buffer). */
static const char *write_tmp(const char *text, const char *suffix)
{
	static char path[2][256];
	static int which;
	char *p = path[which++ & 1];
	const char *tmp = getenv("TMPDIR");
	FILE *f;
	int fd;

	snprintf(p, 256, "%s/unit-flamegraph.XXXXXX%s", tmp ? tmp : "/tmp",
		 suffix);
	fd = mkstemps(p, (int)strlen(suffix));
	if (fd < 0)
		die("mkstemps");
	f = fdopen(fd, "w");
	if (!f || fputs(text, f) == EOF || fclose(f))
		die("write tmp");
	return p;
}

/* Runs a shell command; returns its exit status (99 on a failed spawn). */
static int run(const char *cmd)
{
	int st = system(cmd);

	if (st == -1 || !WIFEXITED(st))
		return 99;
	return WEXITSTATUS(st);
}

/* svg is well-formed XML, per python3's expat. */
static void check_well_formed(const char *svg)
{
	const char *path = write_tmp(svg, ".svg");
	char cmd[512];
	int rc;

	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, "
		 "xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' %s",
		 path);
	rc = run(cmd);
	if (rc == 127 || rc == 99) {
		fprintf(stderr, "cannot run python3\n");
		exit(99);
	}
	if (rc)
		fprintf(stderr, "not well-formed XML: kept %s\n", path);
	else
		unlink(path);
	CHECK(rc == 0);
}

static const char *const profile[] = {
	"main;f1;f2;f3 30",
	"main;f1;f2 10",
	"main;g1 50",
	"main;f1;h 8",
	"main;tiny;tinier 1",
	"main 1",
};

/* The frames, their widths, rows and order. */
static void test_layout(void)
{
	struct collapse *c = from_lines(profile, 6);
	struct drawn d[32];
	const struct drawn *all, *mn, *f1, *f2, *f3, *g1, *h, *tiny, *tinier;
	char *svg = svg_of(c, NULL);
	size_t n;

	if (!svg)
		return;
	n = parse_frames(svg, d, 32);
	CHECK(n == 9);
	if (n != 9)
		fputs(svg, stderr);

	/* 1200 px - 2 x 10 px of padding over 100 samples: 11.8 px each */
	all = by_title(d, n, "all (100 samples, 100.00%)");
	mn = by_title(d, n, "main (100 samples, 100.00%)");
	f1 = by_title(d, n, "f1 (48 samples, 48.00%)");
	f2 = by_title(d, n, "f2 (40 samples, 40.00%)");
	f3 = by_title(d, n, "f3 (30 samples, 30.00%)");
	g1 = by_title(d, n, "g1 (50 samples, 50.00%)");
	h = by_title(d, n, "h (8 samples, 8.00%)");
	tiny = by_title(d, n, "tiny (1 sample, 1.00%)");
	tinier = by_title(d, n, "tinier (1 sample, 1.00%)");
	if (!all || !mn || !f1 || !f2 || !f3 || !g1 || !h || !tiny || !tinier)
		goto out;

	/* depth-first, root first, children sorted by name */
	CHECK(all == &d[0] && mn == &d[1] && f1 == &d[2] && f2 == &d[3] &&
	      f3 == &d[4] && h == &d[5] && g1 == &d[6] && tiny == &d[7] &&
	      tinier == &d[8]);

	CHECK(NEAR(all->x, 10) && NEAR(all->width, 1180));
	CHECK(NEAR(mn->x, 10) && NEAR(mn->width, 1180));
	/* main's own sample ("main 1") sorts first: its children start at 1 */
	CHECK(NEAR(f1->x, 21.8) && NEAR(f1->width, 566.4));
	CHECK(NEAR(f2->x, 21.8) && NEAR(f2->width, 472));
	/* f2's own 10 samples come before f3 */
	CHECK(NEAR(f3->x, 139.8) && NEAR(f3->width, 354));
	CHECK(NEAR(h->x, 493.8) && NEAR(h->width, 94.4));
	CHECK(NEAR(g1->x, 588.2) && NEAR(g1->width, 590));
	CHECK(NEAR(tiny->x, 1178.2) && NEAR(tiny->width, 11.8));
	CHECK(NEAR(tinier->x, 1178.2));

	/* the root at the bottom, one row of 16 px per level */
	CHECK(mn->y == all->y - 16 && f1->y == all->y - 32 &&
	      f2->y == all->y - 48 && f3->y == all->y - 64 &&
	      g1->y == f1->y && h->y == f2->y && tinier->y == f2->y);
	CHECK(svg_height(svg) == 36 + 5 * 16 + 34);

	/* labels where 3 characters fit (11.8 px is under 3 x 7.08) */
	CHECK_STR(f3->label, "f3");
	CHECK_STR(all->label, "all");
	CHECK_STR(tiny->label, "");

	/* the same name has the same colour; names differ in colour */
	CHECK(f1->rgb != f2->rgb || f2->rgb != f3->rgb);
	/* the warm palette: red high, blue low */
	for (size_t i = 0; i < n; i++)
		CHECK((d[i].rgb >> 16) >= 205 && (d[i].rgb & 0xff) <= 55);

	CHECK_HAS(svg, "<title>");
	CHECK_HAS(svg, "<script");
	CHECK_HAS(svg, "Flame Graph</text>");
	CHECK(!strstr(svg, "href="));	/* nothing loaded from outside */
	CHECK_HAS(svg, "DROPPED=0;");	/* the search counts every sample */
	check_well_formed(svg);
out:
	free(svg);
	collapse_free(c);
}

/* Frames under min_width pixels go, with all frames above them. */
static void test_min_width(void)
{
	struct collapse *c = from_lines(profile, 6);
	struct collapse_svg_options o;
	struct drawn d[32];
	char *svg;
	size_t n;

	collapse_svg_options_init(&o);
	CHECK(o.width == 1200 && o.frame_height == 16 && o.min_width == 0.1);

	o.min_width = 12;	/* drops tiny and tinier (11.8 px) */
	svg = svg_of(c, &o);
	n = parse_frames(svg, d, 32);
	CHECK(n == 7);
	CHECK(!strstr(svg, "tiny"));
	/* the search says its percentage is a lower bound */
	CHECK_HAS(svg, "DROPPED=1;");
	CHECK(svg_height(svg) == 36 + 5 * 16 + 34);
	free(svg);

	o.min_width = 360;	/* 30.5 samples: f3 (354 px) and h go too */
	svg = svg_of(c, &o);
	n = parse_frames(svg, d, 32);
	CHECK(n == 5);
	CHECK(!strstr(svg, "f3 (") && !strstr(svg, "h ("));
	CHECK_HAS(svg, "<title>f2 (40 samples, 40.00%)</title>");
	/* the graph lost its top row */
	CHECK(svg_height(svg) == 36 + 4 * 16 + 34);
	free(svg);

	o.min_width = 0;	/* keep everything */
	o.width = 400;
	o.frame_height = 20;
	o.title = "T";
	o.subtitle = "12,345 samples, 99 Hz, 10 s, pid 123";
	svg = svg_of(c, &o);
	n = parse_frames(svg, d, 32);
	CHECK(n == 9);
	CHECK(svg_height(svg) == 36 + 18 + 5 * 20 + 34);
	CHECK_HAS(svg, ">12,345 samples, 99 Hz, 10 s, pid 123</text>");
	CHECK_HAS(svg, "<text id=\"title\" x=\"200\" y=\"24\">T</text>");
	/* 380 px over 100 samples */
	CHECK(n == 9 && NEAR(d[4].width, 114) && d[0].y - d[1].y == 20);
	free(svg);
	collapse_free(c);
}

/* C++ names, markup characters, bytes that are not UTF-8. */
static void test_escaping(void)
{
	struct collapse *c = new_or_die();
	char *svg, *json;
	uint32_t ids[4];
	const char *names[4] = {
		"std::vector<int, std::allocator<int> >::push_back",
		"a&b \"q\" 'x'",
		"bad\xff\x01name",
		"caf\xc3\xa9",
	};
	struct drawn d[8];
	size_t n;

	for (int i = 0; i < 4; i++)
		ids[i] = (uint32_t)collapse_intern(c, names[i]);
	CHECK(collapse_add(c, ids, 4, 7) == 0);
	svg = svg_of(c, NULL);
	n = parse_frames(svg, d, 8);
	CHECK(n == 5);
	CHECK_HAS(svg, "<title>std::vector&lt;int, std::allocator&lt;int&gt; "
		  "&gt;::push_back (7 samples, 100.00%)</title>");
	CHECK_HAS(svg, "<title>a&amp;b &quot;q&quot; 'x' (7 samples");
	/* the escaping rule of every output (collapse/text.c) */
	CHECK_HAS(svg, "<title>bad\\xff\\x01name (7 samples");
	CHECK_HAS(svg, "<title>caf\xc3\xa9 (7 samples");
	CHECK(!strstr(svg, "<int"));
	CHECK(!strstr(svg, "\xff"));
	check_well_formed(svg);
	free(svg);

	/* The JSON side: python3 reads the names back, and prints them
	 * ASCII-escaped for an exact comparison. */
	json = speedscope_of(c, "t\"itle");
	{
		const char *path = write_tmp(json, ".json");
		char cmd[1024], out[1024] = "";
		FILE *p;

		snprintf(cmd, sizeof(cmd), "python3 -c 'import json, sys; "
			 "d = json.load(open(sys.argv[1], encoding=\"utf-8\")); "
			 "print(json.dumps([f[\"name\"] for f in "
			 "d[\"shared\"][\"frames\"]] + [d[\"name\"]]))' %s",
			 path);
		p = popen(cmd, "r");
		if (!p)
			die("popen");
		if (!fgets(out, sizeof(out), p))
			out[0] = '\0';
		CHECK(pclose(p) == 0);
		CHECK_STR(out, "[\"std::vector<int, std::allocator<int> >"
			  "::push_back\", \"a&b \\\"q\\\" 'x'\", "
			  "\"bad\\ufffd\\u0001name\", \"caf\\u00e9\", "
			  "\"t\\\"itle\"]\n");
		unlink(path);
	}
	free(json);
	collapse_free(c);
}

/* A label cut to the frame's width ends in "..". */
static void test_label_cut(void)
{
	static const char *const lines[] = {
		"root;long_function_name_that_does_not_fit 10",
		"root;other 90",
	};
	struct collapse *c = from_lines(lines, 2);
	char *svg = svg_of(c, NULL);

	/* 118 px: 16 characters of 7.08 px, 14 of the name and ".." */
	CHECK_HAS(svg, ">long_function_..</text>");
	CHECK_HAS(svg, "<title>long_function_name_that_does_not_fit "
		  "(10 samples, 10.00%)</title>");
	free(svg);
	collapse_free(c);
}

/* Frames without a symbol are paler than the warm palette. */
static void test_colours(void)
{
	static const char *const lines[] = {
		"main;[unknown] 10",
		"main;[libfoo.so] 10",
		"main;work 10",
	};
	struct collapse *c = from_lines(lines, 3);
	struct collapse *c2 = new_or_die();
	char *svg = svg_of(c, NULL), *svg2;
	struct drawn d[8], d2[8];
	const struct drawn *u, *m, *w, *w2;
	size_t n, n2;

	add(c2, "other;work 5");
	svg2 = svg_of(c2, NULL);
	n = parse_frames(svg, d, 8);
	n2 = parse_frames(svg2, d2, 8);
	u = by_title(d, n, "[unknown] (10 samples, 33.33%)");
	m = by_title(d, n, "[libfoo.so] (10 samples, 33.33%)");
	w = by_title(d, n, "work (10 samples, 33.33%)");
	w2 = by_title(d2, n2, "work (5 samples, 100.00%)");
	if (u && m && w && w2) {
		for (int s = 0; s < 24; s += 8) {
			CHECK(((u->rgb >> s) & 0xff) >= 153);
			CHECK(((m->rgb >> s) & 0xff) >= 153);
		}
		CHECK((w->rgb & 0xff) <= 55);
		/* stable: the same name, the same colour, in another graph */
		CHECK(w->rgb == w2->rgb);
	}
	free(svg);
	free(svg2);
	collapse_free(c);
	collapse_free(c2);
}

/* The same samples in another order give the same bytes. */
static void test_deterministic(void)
{
	static const char *const reversed[] = {
		"main 1",
		"main;tiny;tinier 1",
		"main;f1;h 8",
		"main;g1 50",
		"main;f1;f2 10",
		"main;f1;f2;f3 30",
	};
	struct collapse *a = from_lines(profile, 6);
	struct collapse *b = from_lines(reversed, 6);
	char *sa = svg_of(a, NULL), *sb = svg_of(b, NULL);
	char *sa2 = svg_of(a, NULL);

	CHECK(sa && sb && strcmp(sa, sb) == 0);
	CHECK(sa && sa2 && strcmp(sa, sa2) == 0);
	free(sa);
	free(sb);
	free(sa2);
	/* speedscope lists frames by id (first seen), but the samples in
	 * the same order, so both files name the same stacks */
	sa = speedscope_of(a, NULL);
	sa2 = speedscope_of(a, NULL);
	CHECK(strcmp(sa, sa2) == 0);
	free(sa);
	free(sa2);
	collapse_free(a);
	collapse_free(b);
}

/* speedscope: valid JSON; frames, samples (root first), weights. */
static void test_speedscope(void)
{
	struct collapse *c = from_lines(profile, 6);
	char *json = speedscope_of(c, "my profile");
	const char *path = write_tmp(json, ".json");
	char cmd[2048], out[4096] = "";
	size_t got;
	FILE *p;

	/* Prints the samples as folded lines, in file order, after checking
	 * the fields speedscope's schema requires. */
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json, sys\n"
		 "d = json.load(open(sys.argv[1]))\n"
		 "assert d[\"$schema\"] == "
		 "\"https://www.speedscope.app/file-format-schema.json\"\n"
		 "assert d[\"exporter\"] == \"stackspy 0.1.0\", d[\"exporter\"]\n"
		 "assert d[\"name\"] == \"my profile\"\n"
		 "f = [x[\"name\"] for x in d[\"shared\"][\"frames\"]]\n"
		 "assert len(d[\"profiles\"]) == 1\n"
		 "p = d[\"profiles\"][0]\n"
		 "assert p[\"type\"] == \"sampled\" and p[\"unit\"] == \"none\"\n"
		 "assert p[\"name\"] == \"my profile\"\n"
		 "assert p[\"startValue\"] == 0\n"
		 "assert p[\"endValue\"] == sum(p[\"weights\"]) == 100\n"
		 "assert len(p[\"samples\"]) == len(p[\"weights\"])\n"
		 "print(\" \".join(f))\n"
		 "for s, w in zip(p[\"samples\"], p[\"weights\"]):\n"
		 "    print(\";\".join(f[i] for i in s), w)\n"
		 "' %s", path);
	p = popen(cmd, "r");
	if (!p)
		die("popen");
	got = fread(out, 1, sizeof(out) - 1, p);
	out[got] = '\0';
	CHECK(pclose(p) == 0);
	CHECK_STR(out, "main f1 f2 f3 g1 h tiny tinier\n"
		  "main 1\n"
		  "main;f1;f2 10\n"
		  "main;f1;f2;f3 30\n"
		  "main;f1;h 8\n"
		  "main;g1 50\n"
		  "main;tiny;tinier 1\n");
	unlink(path);
	free(json);
	collapse_free(c);
}

static void test_empty_and_errors(void)
{
	struct collapse *c = new_or_die();
	struct collapse_svg_options o;
	char *svg, *json;
	struct drawn d[4];
	FILE *full;

	svg = svg_of(c, NULL);
	CHECK(parse_frames(svg, d, 4) == 0);
	CHECK_HAS(svg, "No samples");
	check_well_formed(svg);
	free(svg);
	json = speedscope_of(c, NULL);
	CHECK_HAS(json, "\"samples\": []");
	CHECK_HAS(json, "\"weights\": []");
	CHECK_HAS(json, "\"endValue\": 0");
	CHECK_HAS(json, "\"name\": \"stackspy\"");
	free(json);

	add(c, "a;b 1");
	collapse_svg_options_init(&o);
	o.width = 10;
	CHECK(collapse_write_svg(c, &o, stdout) == -EINVAL);
	collapse_svg_options_init(&o);
	o.frame_height = 0;
	CHECK(collapse_write_svg(c, &o, stdout) == -EINVAL);
	collapse_svg_options_init(&o);
	o.min_width = -1;
	CHECK(collapse_write_svg(c, &o, stdout) == -EINVAL);

	/* a full disk is an error, not a short file passed as written */
	full = fopen("/dev/full", "w");
	if (full) {
		CHECK(collapse_write_svg(c, NULL, full) == -ENOSPC);
		clearerr(full);
		CHECK(collapse_write_speedscope(c, NULL, full) == -ENOSPC);
		fclose(full);
	}
	collapse_free(c);
}

/* Many distinct stacks: each frame costs a bounded number of bytes, and
 * what is too narrow to see is not written at all. */
static void test_size(void)
{
	struct collapse *c = new_or_die();
	char line[128], *svg;
	struct drawn d[1];
	size_t n;

	for (int i = 0; i < 20000; i++) {
		snprintf(line, sizeof(line), "main;worker;fn_%d;leaf_%d %d",
			 i, i % 7, i == 0 ? 100000 : 1);
		add(c, line);
	}
	svg = svg_of(c, NULL);
	n = parse_frames(svg, d, 0);
	/* 119,999 samples at 1180 px: a 1-sample frame is under 0.1 px */
	CHECK(n == 1 + 2 + 2);
	CHECK(strlen(svg) < 20000);
	free(svg);
	collapse_free(c);
}

int main(void)
{
	test_layout();
	test_min_width();
	test_escaping();
	test_label_cut();
	test_colours();
	test_deterministic();
	test_speedscope();
	test_empty_and_errors();
	test_size();
	return check_exit_status("unit-flamegraph");
}
