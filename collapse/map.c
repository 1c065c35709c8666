/*
 * A hash map from 64-bit keys to 32-bit values (see collapse.h): open
 * addressing with linear probing over a power-of-two table kept under half
 * full, keys mixed by base_mix64(). The profiler's address cache and
 * top's model use it.
 */
#include "config.h"

#include "base/base.h"
#include "collapse/collapse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAP_MIN 64

void collapse_map_reset(struct collapse_map *m)
{
	if (m->keys)
		memset(m->keys, 0xff, m->cap * sizeof(*m->keys));
	m->n = 0;
}

void collapse_map_free(struct collapse_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

bool collapse_map_get(const struct collapse_map *m, uint64_t key,
		      uint32_t *val)
{
	if (!m->cap || key == COLLAPSE_MAP_NO_KEY)
		return false;
	for (size_t i = base_mix64(key) & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			*val = m->vals[i];
			return true;
		}
		if (m->keys[i] == COLLAPSE_MAP_NO_KEY)
			return false;
	}
}

/* Puts into a table known to have room. */
static void put(struct collapse_map *m, uint64_t key, uint32_t val)
{
	size_t i = base_mix64(key) & (m->cap - 1);

	while (m->keys[i] != COLLAPSE_MAP_NO_KEY && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (m->keys[i] == COLLAPSE_MAP_NO_KEY)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
}

int collapse_map_put(struct collapse_map *m, uint64_t key, uint32_t val)
{
	if (key == COLLAPSE_MAP_NO_KEY)
		return -EINVAL;
	if (2 * (m->n + 1) > m->cap) {
		struct collapse_map g = { .cap = m->cap ? 2 * m->cap : MAP_MIN };

		if (g.cap > SIZE_MAX / 2 / sizeof(*g.keys))
			return -ENOMEM;
		g.keys = malloc(g.cap * sizeof(*g.keys));
		g.vals = malloc(g.cap * sizeof(*g.vals));
		if (!g.keys || !g.vals) {
			free(g.keys);
			free(g.vals);
			return -ENOMEM;
		}
		collapse_map_reset(&g);
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i] != COLLAPSE_MAP_NO_KEY)
				put(&g, m->keys[i], m->vals[i]);
		collapse_map_free(m);
		*m = g;
	}
	put(m, key, val);
	return 0;
}
