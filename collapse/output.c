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

int collapse_flush(FILE *out)
{
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
