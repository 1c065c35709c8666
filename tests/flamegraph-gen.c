/*
 * flamegraph-gen: folded stacks on stdin ("a;b;c 12" per line, as
 * `stackspy record -f folded` or stackcollapse-*.pl write them) to an SVG
 * flamegraph or a speedscope file on stdout, through the same writers as
 * `stackspy record`. A test tool (tests/svg-browser.test,
 * tests/speedscope.test), also handy for turning a user's folded file into
 * a graph:
 *
 *   tests/flamegraph-gen [-f svg|speedscope|folded] [-t TITLE]
 *       [-s SUBTITLE] [-w WIDTH] [-H FRAME_HEIGHT] [-m MIN_WIDTH] < in > out
 *
 * Exit status: 0, 1 on a bad input line or a failed write, 64 on usage.
 */
#include "config.h"

#include "collapse/collapse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(void)
{
	fputs("usage: flamegraph-gen [-f svg|speedscope|folded] [-t TITLE] "
	      "[-s SUBTITLE] [-w WIDTH] [-H FRAME_HEIGHT] [-m MIN_WIDTH] "
	      "< folded > out\n", stderr);
	exit(64);
}

/* Adds one folded line (without its newline) to c; returns 0 or -errno. */
static int add_line(struct collapse *c, char *line, uint32_t **ids,
		    size_t *cap)
{
	char *space = strrchr(line, ' '), *end, *frame, *save = NULL;
	unsigned long long count;
	size_t n = 0;

	if (!space || space == line)
		return -EINVAL;
	errno = 0;
	count = strtoull(space + 1, &end, 10);
	if (errno || end == space + 1 || *end)
		return -EINVAL;
	*space = '\0';
	for (frame = strtok_r(line, ";", &save); frame;
	     frame = strtok_r(NULL, ";", &save)) {
		int id = collapse_intern(c, frame);

		if (id < 0)
			return id;
		if (n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 64;
			uint32_t *v = reallocarray(*ids, ncap, sizeof(*v));

			if (!v)
				return -ENOMEM;
			*ids = v;
			*cap = ncap;
		}
		(*ids)[n++] = (uint32_t)id;
	}
	if (!n)
		return -EINVAL;
	return collapse_add(c, *ids, n, count);
}

int main(int argc, char **argv)
{
	struct collapse_svg_options opts;
	const char *format = "svg";
	struct collapse *c;
	uint32_t *ids = NULL;
	size_t cap = 0, len = 0;
	char *line = NULL, *end;
	unsigned long lineno = 0;
	ssize_t got;
	int opt, ret = 0;

	collapse_svg_options_init(&opts);
	while ((opt = getopt(argc, argv, "f:t:s:w:H:m:")) != -1) {
		switch (opt) {
		case 'f': format = optarg; break;
		case 't': opts.title = optarg; break;
		case 's': opts.subtitle = optarg; break;
		case 'w': opts.width = (unsigned int)strtoul(optarg, &end, 10);
			if (*end)
				usage();
			break;
		case 'H': opts.frame_height =
				(unsigned int)strtoul(optarg, &end, 10);
			if (*end)
				usage();
			break;
		case 'm': opts.min_width = strtod(optarg, &end);
			if (*end)
				usage();
			break;
		default: usage();
		}
	}
	if (optind != argc || (strcmp(format, "svg") &&
			       strcmp(format, "speedscope") &&
			       strcmp(format, "folded")))
		usage();

	c = collapse_new();
	if (!c) {
		perror("flamegraph-gen: collapse_new");
		return 1;
	}
	while ((got = getline(&line, &len, stdin)) > 0) {
		lineno++;
		if (line[got - 1] == '\n')
			line[--got] = '\0';
		if (!got)
			continue;
		ret = add_line(c, line, &ids, &cap);
		if (ret) {
			fprintf(stderr, "flamegraph-gen: line %lu: %s\n",
				lineno, strerror(-ret));
			break;
		}
	}
	free(line);
	free(ids);
	if (!ret) {
		if (!strcmp(format, "svg"))
			ret = collapse_write_svg(c, &opts, stdout);
		else if (!strcmp(format, "speedscope"))
			ret = collapse_write_speedscope(c, opts.title, stdout);
		else
			ret = collapse_write_folded(c, stdout);
		if (ret)
			fprintf(stderr, "flamegraph-gen: writing %s: %s\n",
				format, strerror(-ret));
	}
	collapse_free(c);
	return ret ? 1 : 0;
}
