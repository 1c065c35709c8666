/* base/index.c - the hash index's growth and removal (base.h); its lookup
 * is inline in the header. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

#define INDEX_MIN 64
/* The stored 32 bits of a hash must still choose among all the slots. */
#define INDEX_MAX_IDS (UINT32_C(1) << 31)

/* Puts an entry into a table known to have room. */
static void place(struct base_index_slot *slot, size_t mask,
		  struct base_index_slot e)
{
	size_t i = e.hash & mask;

	while (slot[i].id1)
		i = (i + 1) & mask;
	slot[i] = e;
}

int base_index_reserve(struct base_index *x, size_t n)
{
	size_t cap = x->cap ? x->cap : INDEX_MIN;
	struct base_index_slot *slot;

	/* cap < 4 n: neither its doubling nor its size can overflow. */
	if (n > INDEX_MAX_IDS || n > SIZE_MAX / 4 / sizeof(*slot))
		return -ENOMEM;
	while (n > cap / 2)
		cap *= 2;
	if (cap == x->cap)
		return 0;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	/* From the stored hashes: the owner's records are never read. */
	for (size_t i = 0; i < x->cap; i++)
		if (x->slot[i].id1)
			place(slot, cap - 1, x->slot[i]);
	free(x->slot);
	x->slot = slot;
	x->cap = cap;
	return 0;
}

int base_index_insert(struct base_index *x, uint64_t hash, uint32_t id)
{
	int ret;

	if (id == BASE_INDEX_NONE)
		return -EINVAL;
	ret = base_index_reserve(x, x->n + 1);
	if (ret < 0)
		return ret;
	place(x->slot, x->cap - 1,
	      (struct base_index_slot){ .hash = (uint32_t)hash, .id1 = id + 1 });
	x->n++;
	return 0;
}

bool base_index_remove(struct base_index *x, uint64_t hash, uint32_t id)
{
	size_t mask = x->cap - 1;
	size_t i;

	if (!x->n || id == BASE_INDEX_NONE)
		return false;
	for (i = (uint32_t)hash & mask; x->slot[i].id1 != id + 1; i = (i + 1) & mask)
		if (!x->slot[i].id1)
			return false;
	/*
	 * Backward shift: an entry after the hole moves into it unless its
	 * home slot lies cyclically in (hole, its slot], where the probe
	 * that finds it would stop at the hole before reaching it.  The run
	 * ends at the first empty slot.
	 */
	for (size_t j = (i + 1) & mask; x->slot[j].id1; j = (j + 1) & mask) {
		size_t home = x->slot[j].hash & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			x->slot[i] = x->slot[j];
			i = j;
		}
	}
	x->slot[i] = (struct base_index_slot){ 0 };
	x->n--;
	return true;
}

void base_index_clear(struct base_index *x)
{
	if (x->slot)
		memset(x->slot, 0, x->cap * sizeof(*x->slot));
	x->n = 0;
}

void base_index_free(struct base_index *x)
{
	free(x->slot);
	memset(x, 0, sizeof(*x));
}
