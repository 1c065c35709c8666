/* sampler/addr-cache.c - address -> interned frame id, per process.
 * Names are the slow part of a sample; most IPs repeat. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "collapse/collapse.h"
#include "sampler/profiler-internal.h"

void
addr_cache_clear(struct addr_cache *c)
{
	free(c->keys);
	free(c->ids);
	memset(c, 0, sizeof(*c));
}

bool
addr_cache_get(const struct addr_cache *c, uint64_t key, uint32_t *id)
{
	if (!c->cap)
		return false;
	for (size_t i = collapse_hash64(key) & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		if (c->keys[i] == key) {
			*id = c->ids[i];
			return true;
		}
		if (c->keys[i] == 0)
			return false;
	}
}

void
addr_cache_put(struct addr_cache *c, uint64_t key, uint32_t id)
{
	if (2 * (c->n + 1) > c->cap) {
		struct addr_cache g = { .cap = c->cap ? 2 * c->cap : 1024 };
		g.keys = calloc(g.cap, sizeof(*g.keys));
		g.ids = calloc(g.cap, sizeof(*g.ids));
		if (!g.keys || !g.ids) {
			free(g.keys);
			free(g.ids);
			return;  /* uncached is only slower */
		}
		for (size_t i = 0; i < c->cap; i++)
			if (c->keys[i])
				addr_cache_put(&g, c->keys[i], c->ids[i]);
		addr_cache_clear(c);
		*c = g;
	}
	size_t i = collapse_hash64(key) & (c->cap - 1);
	while (c->keys[i] && c->keys[i] != key)
		i = (i + 1) & (c->cap - 1);
	if (!c->keys[i])
		c->n++;
	c->keys[i] = key;
	c->ids[i] = id;
}
