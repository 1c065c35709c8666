/* unwind/name-pool.c - sets of strings whose copies stay put: a
 * target's module names (symbolize.c) and a perf map's names
 * (perf-map.c).  Below both: it was in symbolize.c, which looks names up
 * in the perf map, so perf-map.c and symbolize.c called each other. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "unwind/target.h"

/* A set of strings: module paths (a few hundred over the life of a
 * target, looked up once per frame named) and the names of a perf map
 * (perf-map.c: up to its cap).  Each string is its own allocation, so the
 * pointers handed out stay put as the set grows. */
struct name_pool {
	char **name;              /* in the order interned: the ids */
	size_t n, cap;
	struct base_index index;  /* content -> position in name */
	size_t bytes;             /* sum of the strings' sizes */
};

static bool
name_equal(const void *owner, const void *key, uint32_t id)
{
	return strcmp(((const struct name_pool *)owner)->name[id], key) == 0;
}

const char *
unwind_name_pool_intern(struct name_pool **pp, const char *s, size_t max_bytes)
{
	if (!*pp && !(*pp = calloc(1, sizeof(**pp))))
		return NULL;
	struct name_pool *p = *pp;
	size_t size = strlen(s) + 1;
	uint64_t hash = base_mix64(base_fnv1a64(s, size - 1));
	uint32_t id = base_index_find(&p->index, hash, name_equal, p, s);
	if (id != BASE_INDEX_NONE)
		return p->name[id];
	if (p->bytes + size > max_bytes || p->n >= UINT32_MAX - 1 ||
	    BASE_GROW(p->name, p->cap, p->n + 1, 64) < 0 ||
	    base_index_reserve(&p->index, p->n + 1) < 0)
		return NULL;
	char *copy = malloc(size);
	if (!copy)
		return NULL;
	memcpy(copy, s, size);
	base_index_insert(&p->index, hash, (uint32_t)p->n);  /* reserved */
	p->name[p->n++] = copy;
	p->bytes += size;
	return copy;
}

size_t
unwind_name_pool_bytes(const struct name_pool *p)
{
	return p ? p->bytes : 0;
}

void
unwind_name_pool_free(struct name_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->name[i]);
	free(p->name);
	base_index_free(&p->index);
	free(p);
}
