/* base/map.c - 64-bit keys to 32-bit values over the hash index (base.h);
 * its lookup is inline in the header. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int base_map_put(struct base_map *m, uint64_t key, uint32_t val)
{
	uint64_t hash = base_mix64(key);
	uint32_t id = base_index_find(&m->index, hash, base_map_equal, m->e, &key);
	int ret;

	if (id != BASE_INDEX_NONE) {
		m->e[id].val = val;
		return 0;
	}
	if (m->n >= BASE_INDEX_NONE)
		return -ENOMEM;
	/* Both before the first change to m. */
	ret = BASE_GROW(m->e, m->cap, m->n + 1, 64);
	if (ret < 0)
		return ret;
	ret = base_index_insert(&m->index, hash, (uint32_t)m->n);
	if (ret < 0)
		return ret;
	m->e[m->n++] = (struct base_map_entry){ .key = key, .val = val };
	return 0;
}

void base_map_reset(struct base_map *m)
{
	base_index_clear(&m->index);
	m->n = 0;
}

void base_map_free(struct base_map *m)
{
	free(m->e);
	base_index_free(&m->index);
	memset(m, 0, sizeof(*m));
}
