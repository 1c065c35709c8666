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
 * Returns the length (1-4) of the UTF-8 sequence at s[0..avail-1] if it
 * encodes a character that both XML 1.0 and JSON carry as is: valid,
 * shortest form, no surrogate, not U+FFFE/U+FFFF, and not a control
 * character (C0, DEL or C1); returns 0 otherwise, and the writers
 * replace that byte. Names come from symbol tables of arbitrary binaries:
 * one bad byte must not make a browser reject the whole file.
 */
size_t collapse_utf8_char(const unsigned char *s, size_t avail);

/* Bytes of U+FFFD REPLACEMENT CHARACTER, written for each rejected byte. */
#define COLLAPSE_REPLACEMENT "\xef\xbf\xbd"

/*
 * Flushes out and returns 0, or the -errno of a failed write (-EIO when
 * errno does not tell): a full disk must not pass for a written file.
 * Callers set errno to 0 before they start writing.
 */
int collapse_flush(FILE *out);

#endif /* STACKSPY_COLLAPSE_INTERNAL_H */
