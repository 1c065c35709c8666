/*
 * Interned frames and stack -> count aggregation (see collapse.h).
 *
 * Both tables are dense arrays in first-seen order, which is what
 * collapse_next() walks, each with a base_index from content to position
 * (the index keeps the hashes: growing it never rehashes strings or
 * stacks).
 */
#include "config.h"

#include "base/base.h"
#include "collapse/collapse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct frame {
	char *name;
	size_t len;
};

struct stack_rec {
	uint64_t count;
	size_t first;		/* offset of the ids in collapse.ids */
	uint32_t n;
};

struct collapse {
	struct frame *frames;
	size_t nframes, frames_cap;
	size_t name_bytes;
	struct base_index frame_index;

	struct stack_rec *stacks;
	size_t nstacks, stacks_cap;
	struct base_index stack_index;

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

/* The key of a frame lookup. */
struct frame_key {
	const char *name;
	size_t len;
};

static bool frame_equal(const void *owner, const void *key, uint32_t id)
{
	const struct frame *f = &((const struct collapse *)owner)->frames[id];
	const struct frame_key *k = key;

	return f->len == k->len && memcmp(f->name, k->name, k->len) == 0;
}

/* The key of a stack lookup. */
struct stack_key {
	const uint32_t *ids;
	size_t n;
};

static bool stack_equal(const void *owner, const void *key, uint32_t id)
{
	const struct collapse *c = owner;
	const struct stack_rec *s = &c->stacks[id];
	const struct stack_key *k = key;

	return s->n == k->n &&
	       memcmp(&c->ids[s->first], k->ids, k->n * sizeof(*k->ids)) == 0;
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
	base_index_free(&c->frame_index);
	free(c->stacks);
	base_index_free(&c->stack_index);
	free(c->ids);
	free(c);
}

static uint32_t find_frame(const struct collapse *c, const char *name,
			   size_t len, uint64_t hash)
{
	struct frame_key k = { name, len };

	return base_index_find(&c->frame_index, hash, frame_equal, c, &k);
}

int collapse_lookup(const struct collapse *c, const char *name)
{
	size_t len;
	uint32_t id;

	if (!name)
		return -EINVAL;
	len = strlen(name);
	id = find_frame(c, name, len, hash_name(name, len));
	return id != BASE_INDEX_NONE ? (int)id : -ENOENT;
}

int collapse_intern(struct collapse *c, const char *name)
{
	struct frame *f;
	size_t len;
	uint64_t hash;
	uint32_t id;
	char *copy;
	int ret;

	if (!name)
		return -EINVAL;
	len = strlen(name);
	hash = hash_name(name, len);
	id = find_frame(c, name, len, hash);
	if (id != BASE_INDEX_NONE)
		return (int)id;
	if (c->nframes >= INT32_MAX)
		return -EOVERFLOW;

	/* Everything that can fail comes before the first change to c. */
	ret = BASE_GROW(c->frames, c->frames_cap, c->nframes + 1, 16);
	if (ret < 0)
		return ret;
	ret = base_index_reserve(&c->frame_index, c->nframes + 1);
	if (ret < 0)
		return ret;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, len + 1);

	f = &c->frames[c->nframes];
	f->name = copy;
	f->len = len;
	/* cannot fail: reserved */
	base_index_insert(&c->frame_index, hash, (uint32_t)c->nframes);
	c->name_bytes += len + 1;
	return (int)c->nframes++;
}

const char *collapse_frame_name(const struct collapse *c, uint32_t id)
{
	return id < c->nframes ? c->frames[id].name : NULL;
}

static uint32_t find_stack(const struct collapse *c, const uint32_t *ids,
			   size_t n, uint64_t hash)
{
	struct stack_key k = { ids, n };

	return base_index_find(&c->stack_index, hash, stack_equal, c, &k);
}

uint64_t collapse_count(const struct collapse *c, const uint32_t *ids,
			size_t n)
{
	uint32_t id;

	if (!n)
		return 0;
	id = find_stack(c, ids, n, hash_ids(ids, n));
	return id != BASE_INDEX_NONE ? c->stacks[id].count : 0;
}

int collapse_add(struct collapse *c, const uint32_t *ids, size_t n,
		 uint64_t count)
{
	struct stack_rec *s;
	uint64_t hash;
	uint32_t id;
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
	id = find_stack(c, ids, n, hash);
	if (id != BASE_INDEX_NONE) {
		/* no overflow: this count is part of the total */
		c->stacks[id].count += count;
		c->total += count;
		return 0;
	}

	if (c->nstacks >= UINT32_MAX - 1 || n > SIZE_MAX - c->nids)
		return -EOVERFLOW;
	ret = BASE_GROW(c->stacks, c->stacks_cap, c->nstacks + 1, 16);
	if (ret < 0)
		return ret;
	ret = BASE_GROW(c->ids, c->ids_cap, c->nids + n, 16);
	if (ret < 0)
		return ret;
	ret = base_index_reserve(&c->stack_index, c->nstacks + 1);
	if (ret < 0)
		return ret;

	memcpy(&c->ids[c->nids], ids, n * sizeof(*ids));
	s = &c->stacks[c->nstacks];
	s->count = count;
	s->first = c->nids;
	s->n = (uint32_t)n;
	/* cannot fail: reserved */
	base_index_insert(&c->stack_index, hash, (uint32_t)c->nstacks);
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
	       c->frame_index.cap * sizeof(*c->frame_index.slot) +
	       c->stacks_cap * sizeof(*c->stacks) +
	       c->stack_index.cap * sizeof(*c->stack_index.slot) +
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

/* A frame's name as the folded writer shows it, escaped (text.c). */
struct shown_name {
	const char *s;		/* the stored name, or escaped */
	size_t len;
	bool own;		/* s was allocated */
};

static void free_shown(struct shown_name *shown, size_t n)
{
	for (size_t i = 0; shown && i < n; i++)
		if (shown[i].own)
			free((char *)shown[i].s);
	free(shown);
}

/* The escaped name of every frame, allocated only for names the rule
 * changes (escaping only ever lengthens a name); NULL on ENOMEM. */
static struct shown_name *shown_names(const struct collapse *c)
{
	struct shown_name *shown = calloc(c->nframes ? c->nframes : 1, sizeof(*shown));

	if (!shown)
		return NULL;
	for (uint32_t id = 0; id < c->nframes; id++) {
		const struct frame *f = &c->frames[id];
		size_t len = collapse_text_escaped_len(f->name);

		shown[id].s = f->name;
		shown[id].len = f->len;
		if (len == f->len)
			continue;
		shown[id].s = collapse_text_dup(f->name);
		if (!shown[id].s) {
			free_shown(shown, id);
			return NULL;
		}
		shown[id].own = true;
		shown[id].len = len;
	}
	return shown;
}

static char *fold_stack(const struct collapse *c, const struct shown_name *shown,
			const struct stack_rec *s)
{
	const uint32_t *ids = &c->ids[s->first];
	size_t len = s->n - 1;	/* the separators */
	char *text, *p;

	for (uint32_t i = 0; i < s->n; i++)
		len += shown[ids[i]].len;
	text = malloc(len + COUNT_ROOM);
	if (!text)
		return NULL;
	p = text;
	for (uint32_t i = 0; i < s->n; i++) {
		const struct shown_name *f = &shown[ids[i]];

		if (i)
			*p++ = ';';
		/* With its NUL, which the next ';' or the end overwrites. */
		memcpy(p, f->s, f->len + 1);
		collapse_sanitize_frame(p);
		p += f->len;
	}
	*p = '\0';
	return text;
}

int collapse_write_folded(const struct collapse *c, FILE *out)
{
	struct folded_line *lines;
	struct shown_name *shown;
	size_t n = 0, kept = 0;
	int ret = 0;

	if (!c->nstacks)
		return fflush(out) ? (errno ? -errno : -EIO) : 0;
	shown = shown_names(c);
	lines = calloc(c->nstacks, sizeof(*lines));
	if (!lines || !shown) {
		free(lines);
		free_shown(shown, c->nframes);
		return -ENOMEM;
	}
	for (n = 0; n < c->nstacks; n++) {
		lines[n].text = fold_stack(c, shown, &c->stacks[n]);
		if (!lines[n].text) {
			ret = -ENOMEM;
			goto out;
		}
		lines[n].count = c->stacks[n].count;
	}
	free_shown(shown, c->nframes);
	shown = NULL;

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
	free_shown(shown, c->nframes);
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	return ret;
}
