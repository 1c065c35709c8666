/*
 * Helpers shared by the writers of collapse/ (svg.c, speedscope.c); not part
 * of the public interface.
 */
#ifndef STACKSPY_COLLAPSE_INTERNAL_H
#define STACKSPY_COLLAPSE_INTERNAL_H

#include "collapse/collapse.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Returns the distinct stacks of c in a new array (*out, the caller frees
 * it; the ids stay owned by c), ordered as flamegraph.pl orders folded
 * lines: frame by frame from the root, names compared bytewise, a stack
 * before the longer stacks it is a prefix of. Equal prefixes are thus
 * adjacent, which is what merging frames by prefix needs, and the order
 * depends only on the names and counts, not on the order samples came in.
 * Returns the number of stacks (*out is NULL for 0), or -ENOMEM.
 */
long collapse_sorted_stacks(const struct collapse *c,
			    struct collapse_stack **out);

/*
 * Flushes out and returns 0, or the -errno of a failed write (-EIO when
 * errno does not tell): a full disk must not pass for a written file.
 * Callers set errno to 0 before they start writing.
 */
int collapse_flush(FILE *out);

#endif /* STACKSPY_COLLAPSE_INTERNAL_H */
