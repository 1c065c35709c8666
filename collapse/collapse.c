/*
 * Interned frames and stack -> count aggregation (see collapse.h).
 *
 * Both tables are open-addressed hash indexes (linear probing, power-of-two
 * sizes) over dense arrays: the index slots hold position + 1, 0 meaning
 * empty. The arrays keep first-seen order, which is what collapse_next()
 * walks, and each record keeps its full hash so growing an index never
 * rehashes strings or stacks.
 */
#include "config.h"

#include "base/base.h"
#include "collapse/collapse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define INDEX_MIN 64

struct frame {
	char *name;
	size_t len;
	uint64_t hash;
};

struct stack_rec {
	uint64_t hash;
	uint64_t count;
	size_t first;		/* offset of the ids in collapse.ids */
	uint32_t n;
};

struct collapse {
	struct frame *frames;
	size_t nframes, frames_cap;
	size_t name_bytes;
	uint32_t *frame_index;
	size_t frame_index_cap;

	struct stack_rec *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *stack_index;
	size_t stack_index_cap;

	/* all stacks' ids back to back: one allocation, not one per stack */
	uint32_t *ids;
	size_t nids, ids_cap;

	uint64_t total;
};

/* FNV's low bits alone probe badly in a 2^k table: mixed. */
static uint64_t hash_name(const char *s, size_t len)
{
	return base_mix64(base_fnv1a64(s, len));
}

static uint64_t hash_ids(const uint32_t *ids, size_t n)
{
	return base_hash_u32s(n, ids, n);
}

/*
 * Grows an index so that one more entry keeps the load under 1/2, taking
 * each record's hash through get_hash(). The old index stays in place if the
 * allocation fails.
 */
static int index_reserve(uint32_t **index, size_t *cap, size_t used,
			 uint64_t (*get_hash)(const struct collapse *, size_t),
			 const struct collapse *c)
{
	size_t ncap = *cap ? *cap : INDEX_MIN;
	uint32_t *ni;

	while ((used + 1) * 2 > ncap) {
		if (ncap > SIZE_MAX / 2 / sizeof(*ni))
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap == *cap)
		return 0;
	ni = calloc(ncap, sizeof(*ni));
	if (!ni)
		return -ENOMEM;
	for (size_t i = 0; i < used; i++) {
		size_t slot = get_hash(c, i) & (ncap - 1);

		while (ni[slot])
			slot = (slot + 1) & (ncap - 1);
		ni[slot] = (uint32_t)(i + 1);
	}
	free(*index);
	*index = ni;
	*cap = ncap;
	return 0;
}

static uint64_t frame_hash(const struct collapse *c, size_t i)
{
	return c->frames[i].hash;
}

static uint64_t stack_hash(const struct collapse *c, size_t i)
{
	return c->stacks[i].hash;
}

struct collapse *collapse_new(void)
{
	struct collapse *c = calloc(1, sizeof(*c));

	if (!c)
		errno = ENOMEM;
	return c;
}

void collapse_free(struct collapse *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nframes; i++)
		free(c->frames[i].name);
	free(c->frames);
	free(c->frame_index);
	free(c->stacks);
	free(c->stack_index);
	free(c->ids);
	free(c);
}

/* Returns the index slot holding name, or the empty slot where it would go. */
static size_t find_frame(const struct collapse *c, const char *name,
			 size_t len, uint64_t hash)
{
	size_t mask = c->frame_index_cap - 1;
	size_t slot = hash & mask;

	for (;; slot = (slot + 1) & mask) {
		uint32_t v = c->frame_index[slot];
		const struct frame *f;

		if (!v)
			return slot;
		f = &c->frames[v - 1];
		if (f->hash == hash && f->len == len &&
		    memcmp(f->name, name, len) == 0)
			return slot;
	}
}

int collapse_lookup(const struct collapse *c, const char *name)
{
	size_t len, slot;
	uint64_t hash;

	if (!name)
		return -EINVAL;
	if (!c->frame_index_cap)
		return -ENOENT;
	len = strlen(name);
	hash = hash_name(name, len);
	slot = find_frame(c, name, len, hash);
	return c->frame_index[slot] ? (int)(c->frame_index[slot] - 1) : -ENOENT;
}

int collapse_intern(struct collapse *c, const char *name)
{
	struct frame *f;
	size_t len, slot;
	uint64_t hash;
	char *copy;
	int ret;

	if (!name)
		return -EINVAL;
	ret = collapse_lookup(c, name);
	if (ret != -ENOENT)
		return ret;
	if (c->nframes >= INT32_MAX)
		return -EOVERFLOW;

	len = strlen(name);
	hash = hash_name(name, len);
	/* Everything that can fail comes before the first change to c. */
	ret = BASE_GROW(c->frames, c->frames_cap, c->nframes + 1, 16);
	if (ret < 0)
		return ret;
	ret = index_reserve(&c->frame_index, &c->frame_index_cap, c->nframes,
			    frame_hash, c);
	if (ret < 0)
		return ret;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, len + 1);

	f = &c->frames[c->nframes];
	f->name = copy;
	f->len = len;
	f->hash = hash;
	slot = find_frame(c, name, len, hash);
	c->frame_index[slot] = (uint32_t)(c->nframes + 1);
	c->name_bytes += len + 1;
	return (int)c->nframes++;
}

const char *collapse_frame_name(const struct collapse *c, uint32_t id)
{
	return id < c->nframes ? c->frames[id].name : NULL;
}

static size_t find_stack(const struct collapse *c, const uint32_t *ids,
			 size_t n, uint64_t hash)
{
	size_t mask = c->stack_index_cap - 1;
	size_t slot = hash & mask;

	for (;; slot = (slot + 1) & mask) {
		uint32_t v = c->stack_index[slot];
		const struct stack_rec *s;

		if (!v)
			return slot;
		s = &c->stacks[v - 1];
		if (s->hash == hash && s->n == n &&
		    memcmp(&c->ids[s->first], ids, n * sizeof(*ids)) == 0)
			return slot;
	}
}

uint64_t collapse_count(const struct collapse *c, const uint32_t *ids,
			size_t n)
{
	size_t slot;
	uint32_t v;

	if (!n || !c->stack_index_cap)
		return 0;
	slot = find_stack(c, ids, n, hash_ids(ids, n));
	v = c->stack_index[slot];
	return v ? c->stacks[v - 1].count : 0;
}

int collapse_add(struct collapse *c, const uint32_t *ids, size_t n,
		 uint64_t count)
{
	struct stack_rec *s;
	uint64_t hash;
	size_t slot;
	int ret;

	if (!ids || !n || n > UINT32_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (ids[i] >= c->nframes)
			return -EINVAL;
	if (!count)
		return 0;
	if (count > UINT64_MAX - c->total)
		return -EOVERFLOW;

	hash = hash_ids(ids, n);
	if (c->stack_index_cap) {
		slot = find_stack(c, ids, n, hash);
		if (c->stack_index[slot]) {
			/* no overflow: this count is part of the total */
			c->stacks[c->stack_index[slot] - 1].count += count;
			c->total += count;
			return 0;
		}
	}

	if (c->nstacks >= UINT32_MAX - 1 || n > SIZE_MAX - c->nids)
		return -EOVERFLOW;
	ret = BASE_GROW(c->stacks, c->stacks_cap, c->nstacks + 1, 16);
	if (ret < 0)
		return ret;
	ret = BASE_GROW(c->ids, c->ids_cap, c->nids + n, 16);
	if (ret < 0)
		return ret;
	ret = index_reserve(&c->stack_index, &c->stack_index_cap, c->nstacks,
			    stack_hash, c);
	if (ret < 0)
		return ret;

	memcpy(&c->ids[c->nids], ids, n * sizeof(*ids));
	s = &c->stacks[c->nstacks];
	s->hash = hash;
	s->count = count;
	s->first = c->nids;
	s->n = (uint32_t)n;
	slot = find_stack(c, ids, n, hash);
	c->stack_index[slot] = (uint32_t)(c->nstacks + 1);
	c->nstacks++;
	c->nids += n;
	c->total += count;
	return 0;
}

bool collapse_next(const struct collapse *c, size_t *cursor,
		   struct collapse_stack *out)
{
	const struct stack_rec *s;

	if (*cursor >= c->nstacks)
		return false;
	s = &c->stacks[(*cursor)++];
	out->ids = &c->ids[s->first];
	out->n = s->n;
	out->count = s->count;
	return true;
}

struct collapse *collapse_without_level(const struct collapse *c, size_t level)
{
	struct collapse *out = collapse_new();
	struct collapse_stack st;
	uint32_t *ids = NULL;
	size_t cap = 0, cursor = 0;

	while (out && collapse_next(c, &cursor, &st)) {
		if (st.n > cap) {
			uint32_t *nv = realloc(ids, st.n * sizeof(*ids));

			if (!nv)
				goto fail;
			ids = nv;
			cap = st.n;
		}
		size_t n = 0;
		for (size_t k = 0; k < st.n; k++) {
			if (k == level && st.n > level + 1)
				continue;
			int id = collapse_intern(out, collapse_frame_name(c, st.ids[k]));

			if (id < 0)
				goto fail;
			ids[n++] = (uint32_t)id;
		}
		if (collapse_add(out, ids, n, st.count) < 0)
			goto fail;
	}
	free(ids);
	return out;
fail:
	free(ids);
	collapse_free(out);
	return NULL;
}

uint64_t collapse_total_samples(const struct collapse *c)
{
	return c->total;
}

size_t collapse_distinct_stacks(const struct collapse *c)
{
	return c->nstacks;
}

size_t collapse_distinct_frames(const struct collapse *c)
{
	return c->nframes;
}

size_t collapse_memory_bytes(const struct collapse *c)
{
	return sizeof(*c) +
	       c->frames_cap * sizeof(*c->frames) + c->name_bytes +
	       c->frame_index_cap * sizeof(*c->frame_index) +
	       c->stacks_cap * sizeof(*c->stacks) +
	       c->stack_index_cap * sizeof(*c->stack_index) +
	       c->ids_cap * sizeof(*c->ids);
}

/* One output line: the frames text, then room for " COUNT" and the NUL. */
struct folded_line {
	char *text;
	uint64_t count;
};

#define COUNT_ROOM (1 + 20 + 1)

static int cmp_line(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;

	return strcmp(x->text, y->text);
}

static char *fold_stack(const struct collapse *c, const struct stack_rec *s)
{
	const uint32_t *ids = &c->ids[s->first];
	size_t len = s->n - 1;	/* the separators */
	char *text, *p;

	for (uint32_t i = 0; i < s->n; i++)
		len += c->frames[ids[i]].len;
	text = malloc(len + COUNT_ROOM);
	if (!text)
		return NULL;
	p = text;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct frame *f = &c->frames[ids[i]];

		if (i)
			*p++ = ';';
		/* With its NUL, which the next ';' or the end overwrites. */
		memcpy(p, f->name, f->len + 1);
		collapse_sanitize_frame(p);
		p += f->len;
	}
	*p = '\0';
	return text;
}

int collapse_write_folded(const struct collapse *c, FILE *out)
{
	struct folded_line *lines;
	size_t n = 0, kept = 0;
	int ret = 0;

	if (!c->nstacks)
		return fflush(out) ? (errno ? -errno : -EIO) : 0;
	lines = calloc(c->nstacks, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (n = 0; n < c->nstacks; n++) {
		lines[n].text = fold_stack(c, &c->stacks[n]);
		if (!lines[n].text) {
			ret = -ENOMEM;
			goto out;
		}
		lines[n].count = c->stacks[n].count;
	}

	/* Sanitizing can make two stacks print alike ("a;b" and "a:b" as
	 * frames): merge them so each line stays a distinct stack. */
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		if (kept && strcmp(lines[kept - 1].text, lines[i].text) == 0) {
			lines[kept - 1].count += lines[i].count;
			free(lines[i].text);
			lines[i].text = NULL;
			continue;
		}
		lines[kept++] = lines[i];
	}
	n = kept;

	/* Sort again with the counts: names may hold spaces, so "a;b 1" can
	 * sort before the shorter "a;b" line, and users check files with
	 * `LC_ALL=C sort -c`. */
	for (size_t i = 0; i < n; i++) {
		char *end = strchr(lines[i].text, '\0');

		snprintf(end, COUNT_ROOM, " %" PRIu64, lines[i].count);
	}
	qsort(lines, n, sizeof(*lines), cmp_line);

	errno = 0;
	for (size_t i = 0; i < n; i++) {
		if (fputs(lines[i].text, out) == EOF || putc('\n', out) == EOF)
			break;
	}
	if (fflush(out) || ferror(out))
		ret = errno ? -errno : -EIO;
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return ret;
}
