/*
 * What the SVG and speedscope writers share: the flamegraph order of stacks
 * and the check of what may be written as text (see collapse-internal.h).
 */
#include "config.h"

#include "collapse/collapse-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rank_ctx {
	const struct collapse *c;
};

static int cmp_frame_name(const void *a, const void *b, void *arg)
{
	const struct rank_ctx *ctx = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return strcmp(collapse_frame_name(ctx->c, x),
		      collapse_frame_name(ctx->c, y));
}

static int cmp_stack(const void *a, const void *b, void *arg)
{
	const struct collapse_stack *x = a, *y = b;
	const uint32_t *rank = arg;
	size_t n = x->n < y->n ? x->n : y->n;

	for (size_t i = 0; i < n; i++) {
		if (x->ids[i] == y->ids[i])
			continue;
		return rank[x->ids[i]] < rank[y->ids[i]] ? -1 : 1;
	}
	return (x->n > y->n) - (x->n < y->n);
}

long collapse_sorted_stacks(const struct collapse *c,
			    struct collapse_stack **out)
{
	size_t nframes = collapse_distinct_frames(c);
	size_t nstacks = collapse_distinct_stacks(c), cursor = 0, i = 0;
	struct rank_ctx ctx = { c };
	struct collapse_stack *stacks;
	uint32_t *order, *rank;

	*out = NULL;
	if (!nstacks)
		return 0;
	stacks = calloc(nstacks, sizeof(*stacks));
	order = calloc(nframes, sizeof(*order));
	rank = calloc(nframes, sizeof(*rank));
	if (!stacks || !order || !rank) {
		free(stacks);
		free(order);
		free(rank);
		return -ENOMEM;
	}

	/* Names are distinct (interned), so comparing stacks by the rank of
	 * each name gives the strcmp order without a strcmp per frame. */
	for (uint32_t id = 0; id < nframes; id++)
		order[id] = id;
	qsort_r(order, nframes, sizeof(*order), cmp_frame_name, &ctx);
	for (uint32_t r = 0; r < nframes; r++)
		rank[order[r]] = r;
	free(order);

	while (i < nstacks && collapse_next(c, &cursor, &stacks[i]))
		i++;
	qsort_r(stacks, i, sizeof(*stacks), cmp_stack, rank);
	free(rank);
	*out = stacks;
	return (long)i;
}

size_t collapse_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
	size_t len;

	if (!avail)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		*cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		*cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		*cp = s[0] & 0x07;
	} else {
		return 0;	/* a continuation byte, or 0xc0/0xc1/0xf5.. */
	}
	if (avail < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		*cp = *cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && *cp < 0x800) || (len == 4 && *cp < 0x10000) ||
	    *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff))
		return 0;
	return len;
}

int collapse_flush(FILE *out)
{
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
