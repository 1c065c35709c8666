/* ui/model.c - what `stackspy top` shows, without a terminal.
 *
 * The profiler hands over every sample (ids root first).  We keep each
 * distinct (thread, stack) once with two counts: cumulative since the last
 * reset, and within the rolling window.  The window is a ring of per-second
 * buckets; a bucket lists (stack, count) pairs, one per distinct stack
 * sampled in that second, so its size follows the program's variety, not
 * the sample rate.  When a second leaves the window its pairs are
 * subtracted.  Aggregating per function is done on demand, once per screen
 * refresh, over the distinct stacks: O(stacks x depth), a few milliseconds
 * for a large program, far below one refresh period and never inside a
 * tick (tests/unit-uimodel.c covers the arithmetic).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "ui/ui.h"

struct model_thread {
	pid_t pid, tid;
	char name[96];            /* "comm-PID/TID" as of its first sample,
				   * "PID/TID" without a name */
	uint64_t samples;
};

struct model_stack {
	uint32_t thread;
	uint32_t n;
	size_t off;               /* in pool */
	uint64_t count;           /* since the last reset */
	uint64_t window;          /* in the buckets of the window */
	uint64_t bucket_tag;      /* second + 1 of the bucket it last went
				   * into (0: none) */
	uint32_t bucket_slot;
};

struct bucket_entry {
	uint32_t stack;
	uint32_t count;
};

struct bucket {
	uint64_t tag;             /* second + 1; 0: empty */
	struct bucket_entry *e;
	size_t n, cap;
};

struct ui_model {
	const struct collapse *names;
	unsigned window_s;
	ui_module_fn module;
	void *module_arg;

	struct model_thread *threads;
	size_t nthreads, cthreads;
	struct base_map thread_map;   /* pid << 32 | tid -> index */

	struct model_stack *stacks;
	size_t nstacks, cstacks;
	struct base_index stack_index;    /* (thread, ids) -> stacks' index */
	uint32_t *pool;
	size_t npool, cpool;

	struct bucket *ring;              /* window_s buckets */
	uint64_t second;                  /* the current one */
	uint64_t samples;

	/* query scratch */
	struct ui_row *rows;
	size_t crows;
	struct base_map row_map;
	uint32_t *mark;
	size_t cmark;
};

/* ---- life ------------------------------------------------------------------ */

struct ui_model *
ui_model_new(const struct collapse *names, unsigned window_s, ui_module_fn module,
	     void *module_arg)
{
	if (window_s < 1)
		window_s = 1;
	struct ui_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->names = names;
	m->window_s = window_s;
	m->module = module;
	m->module_arg = module_arg;
	m->ring = calloc(window_s, sizeof(*m->ring));
	if (!m->ring) {
		free(m);
		return NULL;
	}
	return m;
}

void
ui_model_free(struct ui_model *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->window_s; i++)
		free(m->ring[i].e);
	free(m->ring);
	free(m->threads);
	base_map_free(&m->thread_map);
	free(m->stacks);
	base_index_free(&m->stack_index);
	free(m->pool);
	free(m->rows);
	base_map_free(&m->row_map);
	free(m->mark);
	free(m);
}

unsigned
ui_model_window(const struct ui_model *m)
{
	return m->window_s;
}

uint64_t
ui_model_samples(const struct ui_model *m)
{
	return m->samples;
}

/* ---- the window ------------------------------------------------------------ */

static void
bucket_expire(struct ui_model *m, struct bucket *b)
{
	for (size_t i = 0; i < b->n; i++) {
		struct model_stack *s = &m->stacks[b->e[i].stack];
		s->window -= b->e[i].count;
		if (s->bucket_tag == b->tag)
			s->bucket_tag = 0;
	}
	b->n = 0;
	b->tag = 0;
}

void
ui_model_set_time(struct ui_model *m, double now_s)
{
	uint64_t sec = now_s > 0 ? (uint64_t)now_s : 0;
	if (sec <= m->second)
		return;
	/* Every second between the last one and now leaves its slot; after a
	 * long pause that is the whole ring, once. */
	uint64_t from = m->second + 1;
	if (sec - m->second > m->window_s)
		from = sec - m->window_s + 1;
	for (uint64_t s = from; s <= sec; s++)
		bucket_expire(m, &m->ring[s % m->window_s]);
	m->second = sec;
}

static void
bucket_add(struct ui_model *m, uint32_t stack)
{
	struct bucket *b = &m->ring[m->second % m->window_s];
	struct model_stack *s = &m->stacks[stack];
	uint64_t tag = m->second + 1;
	if (b->tag != tag) {
		bucket_expire(m, b);  /* set_time was not called for this second */
		b->tag = tag;
	}
	if (s->bucket_tag == tag && b->e[s->bucket_slot].count < UINT32_MAX) {
		b->e[s->bucket_slot].count++;
		s->window++;
		return;
	}
	if (BASE_GROW(b->e, b->cap, b->n + 1, 16) < 0)
		return;  /* the cumulative count still has it */
	s->bucket_tag = tag;
	s->bucket_slot = (uint32_t)b->n;
	b->e[b->n++] = (struct bucket_entry){ .stack = stack, .count = 1 };
	s->window++;
}

/* ---- adding ------------------------------------------------------------------ */

static int
thread_index(struct ui_model *m, pid_t pid, pid_t tid, const char *thread_name,
	     uint32_t *out)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	if (base_map_get(&m->thread_map, key, out))
		return 0;
	if (m->nthreads >= UINT32_MAX - 1 ||
	    BASE_GROW(m->threads, m->cthreads, m->nthreads + 1, 16) < 0 ||
	    base_map_put(&m->thread_map, key, (uint32_t)m->nthreads) < 0)
		return -ENOMEM;
	struct model_thread *t = &m->threads[m->nthreads];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	/* Named as --threads names its root frames. */
	if (thread_name)
		collapse_name_root(t->name, sizeof(t->name), thread_name, pid, tid);
	else
		snprintf(t->name, sizeof(t->name), "%d/%d", (int)pid, (int)tid);
	*out = (uint32_t)m->nthreads++;
	return 0;
}

static uint64_t
stack_hash(uint32_t thread, const uint32_t *ids, size_t n)
{
	return base_hash_u32s((uint64_t)thread << 32 ^ n, ids, n);
}

/* The key of a stack lookup. */
struct stack_key {
	uint32_t thread;
	const uint32_t *ids;
	size_t n;
};

static bool
stack_equal(const void *owner, const void *key, uint32_t id)
{
	const struct ui_model *m = owner;
	const struct model_stack *s = &m->stacks[id];
	const struct stack_key *k = key;
	return s->thread == k->thread && s->n == k->n &&
	       memcmp(m->pool + s->off, k->ids, k->n * sizeof(*k->ids)) == 0;
}

/* Returns the index of the stack, adding it on first sight, or -ENOMEM. */
static long
stack_index(struct ui_model *m, uint32_t thread, const uint32_t *ids, size_t n)
{
	uint64_t h = stack_hash(thread, ids, n);
	struct stack_key k = { thread, ids, n };
	uint32_t id = base_index_find(&m->stack_index, h, stack_equal, m, &k);
	if (id != BASE_INDEX_NONE)
		return (long)id;
	if (m->nstacks >= UINT32_MAX - 1 ||
	    base_index_reserve(&m->stack_index, m->nstacks + 1) < 0 ||
	    BASE_GROW(m->stacks, m->cstacks, m->nstacks + 1, 16) < 0 ||
	    BASE_GROW(m->pool, m->cpool, m->npool + n, 16) < 0)
		return -ENOMEM;
	struct model_stack *s = &m->stacks[m->nstacks];
	memset(s, 0, sizeof(*s));
	s->thread = thread;
	s->n = (uint32_t)n;
	s->off = m->npool;
	memcpy(m->pool + m->npool, ids, n * sizeof(*ids));
	m->npool += n;
	base_index_insert(&m->stack_index, h, (uint32_t)m->nstacks);  /* reserved */
	return (long)m->nstacks++;
}

int
ui_model_add(struct ui_model *m, pid_t pid, pid_t tid, const char *thread_name,
	     const uint32_t *ids, size_t n)
{
	if (n == 0)
		return 0;
	uint32_t thread;
	if (thread_index(m, pid, tid, thread_name, &thread) < 0)
		return -ENOMEM;
	long si = stack_index(m, thread, ids, n);
	if (si < 0)
		return -ENOMEM;
	m->stacks[si].count++;
	m->threads[thread].samples++;
	m->samples++;
	bucket_add(m, (uint32_t)si);
	return 0;
}

void
ui_model_hook(void *arg, pid_t pid, pid_t tid, const char *thread_name, const uint32_t *ids,
	      size_t n)
{
	ui_model_add(arg, pid, tid, thread_name, ids, n);
}

void
ui_model_reset(struct ui_model *m)
{
	for (size_t i = 0; i < m->nstacks; i++) {
		m->stacks[i].count = 0;
		m->stacks[i].window = 0;
		m->stacks[i].bucket_tag = 0;
	}
	for (unsigned i = 0; i < m->window_s; i++) {
		m->ring[i].n = 0;
		m->ring[i].tag = 0;
	}
	for (size_t i = 0; i < m->nthreads; i++)
		m->threads[i].samples = 0;
	m->samples = 0;
}

/* ---- names ------------------------------------------------------------------ */

size_t
ui_model_thread_count(const struct ui_model *m)
{
	return m->nthreads;
}

char *
ui_model_process_label(const struct ui_model *m, pid_t pid, char *buf, size_t len)
{
	uint32_t i;
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)pid;
	const char *slash;
	if (base_map_get(&m->thread_map, key, &i) &&
	    (slash = strrchr(m->threads[i].name, '/')) && slash != m->threads[i].name)
		snprintf(buf, len, "%.*s", (int)(slash - m->threads[i].name), m->threads[i].name);
	else
		snprintf(buf, len, "%d", (int)pid);
	return buf;
}

const char *
ui_model_thread(const struct ui_model *m, size_t i, pid_t *tid, uint64_t *samples)
{
	if (i >= m->nthreads)
		return NULL;
	const struct model_thread *t = &m->threads[i];
	if (tid)
		*tid = t->tid;
	if (samples)
		*samples = t->samples;
	return t->name;
}

const char *
ui_model_function_name(const struct ui_model *m, uint32_t id)
{
	const char *name = collapse_frame_name(m->names, id);
	return name ? name : "[unknown]";
}

const char *
ui_model_function_module(const struct ui_model *m, uint32_t id)
{
	const char *mod = m->module ? m->module(m->module_arg, id) : NULL;
	return mod ? mod : "";
}

/* ---- queries ---------------------------------------------------------------- */

/* qsort_r's comparator gets one pointer: the model and the key travel
 * together. */
struct sort_ctx {
	const struct ui_model *m;
	enum ui_sort key;
};

static int
cmp_u64_desc(uint64_t x, uint64_t y)
{
	return (x < y) - (x > y);
}

static int
cmp_row(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *c = arg;
	const struct ui_row *x = a, *y = b;
	int r = 0;
	switch (c->key) {
	case UI_SORT_SELF:
		r = cmp_u64_desc(x->self, y->self);
		if (!r)
			r = cmp_u64_desc(x->total, y->total);
		break;
	case UI_SORT_TOTAL:
		r = cmp_u64_desc(x->total, y->total);
		if (!r)
			r = cmp_u64_desc(x->self, y->self);
		break;
	case UI_SORT_MODULE:
		r = strcmp(ui_model_function_module(c->m, x->function),
			   ui_model_function_module(c->m, y->function));
		if (!r)
			r = cmp_u64_desc(x->self, y->self);
		break;
	case UI_SORT_NAME:
	case UI_SORT_MAX:
		break;
	}
	if (!r)
		r = strcmp(ui_model_function_name(c->m, x->function),
			   ui_model_function_name(c->m, y->function));
	if (!r)
		r = (x->pid > y->pid) - (x->pid < y->pid);
	if (!r)
		r = (x->thread > y->thread) - (x->thread < y->thread);
	return r;
}

void
ui_model_sort(const struct ui_model *m, struct ui_row *rows, size_t n, enum ui_sort key)
{
	struct sort_ctx c = { m, key };
	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), cmp_row, &c);
}

static bool
in_scope(const struct ui_model *m, const struct model_stack *s, const struct ui_query *q,
	 uint64_t *count)
{
	if (q->thread >= 0 && s->thread != (uint64_t)q->thread)
		return false;
	*count = q->window ? s->window : s->count;
	(void)m;
	return *count != 0;
}

/* One mark per frame id: "already counted in stack k" (k + 1). */
static int
marks_prepare(struct ui_model *m)
{
	size_t nf = collapse_distinct_frames(m->names);
	if (BASE_GROW(m->mark, m->cmark, nf + 1, 16) < 0)
		return -ENOMEM;
	memset(m->mark, 0, m->cmark * sizeof(*m->mark));
	return 0;
}

int
ui_model_query(struct ui_model *m, const struct ui_query *q, struct ui_table *out)
{
	memset(out, 0, sizeof(*out));
	if (marks_prepare(m) < 0)
		return -ENOMEM;
	base_map_reset(&m->row_map);
	size_t nrows = 0;
	for (size_t si = 0; si < m->nstacks; si++) {
		const struct model_stack *s = &m->stacks[si];
		uint64_t c;
		if (!in_scope(m, s, q, &c))
			continue;
		out->samples += c;
		const uint32_t *ids = m->pool + s->off;
		pid_t pid = m->threads[s->thread].pid;
		/* Threads and processes are not both keys: a thread is in
		 * one process.  A pid is below 2^22, never 0xffffffff. */
		uint64_t tkey = q->split_threads ? (uint64_t)s->thread :
				q->split_procs ? (uint64_t)(uint32_t)pid : 0xffffffffu;
		/* Leaf first, so that it is never the "already counted" copy
		 * of a recursive function. */
		for (size_t i = s->n; i-- > 0;) {
			uint32_t id = ids[i];
			if (id >= m->cmark || m->mark[id] == si + 1)
				continue;  /* recursion: f;g;f counts f once */
			m->mark[id] = (uint32_t)(si + 1);
			uint64_t key = tkey << 32 | id;
			uint32_t r;
			if (!base_map_get(&m->row_map, key, &r)) {
				if (BASE_GROW(m->rows, m->crows, nrows + 1, 16) < 0 ||
				    base_map_put(&m->row_map, key, (uint32_t)nrows) < 0)
					return -ENOMEM;
				r = (uint32_t)nrows++;
				m->rows[r] = (struct ui_row){
					.function = id,
					.thread = q->split_threads ? (long)s->thread : -1,
					.pid = q->split_threads || q->split_procs ? pid : 0,
				};
			}
			if (i == s->n - 1)
				m->rows[r].self += c;
			m->rows[r].total += c;
		}
	}
	if (q->filter && *q->filter) {
		size_t k = 0;
		for (size_t i = 0; i < nrows; i++)
			if (strcasestr(ui_model_function_name(m, m->rows[i].function), q->filter))
				m->rows[k++] = m->rows[i];
		nrows = k;
	}
	ui_model_sort(m, m->rows, nrows, q->sort);
	out->rows = m->rows;
	out->nrows = nrows;
	return 0;
}

static int
edges_collect(const uint64_t *counts, size_t nf, struct ui_edge **out, size_t *n)
{
	size_t k = 0;
	for (size_t i = 0; i < nf; i++)
		k += counts[i] != 0;
	*out = NULL;
	*n = 0;
	if (!k)
		return 0;
	struct ui_edge *e = malloc(k * sizeof(*e));
	if (!e)
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < nf; i++)
		if (counts[i])
			e[k++] = (struct ui_edge){ (uint32_t)i, counts[i] };
	*out = e;
	*n = k;
	return 0;
}

static int
cmp_edge(const void *a, const void *b, void *arg)
{
	const struct ui_edge *x = a, *y = b;
	int r = cmp_u64_desc(x->count, y->count);
	if (!r)
		r = strcmp(ui_model_function_name(arg, x->function),
			   ui_model_function_name(arg, y->function));
	return r;
}

int
ui_model_detail(struct ui_model *m, const struct ui_query *q, uint32_t function,
		struct ui_detail *d)
{
	memset(d, 0, sizeof(*d));
	d->function = function;
	size_t nf = collapse_distinct_frames(m->names);
	uint64_t *callers = calloc(nf + 1, sizeof(*callers));
	uint64_t *callees = calloc(nf + 1, sizeof(*callees));
	/* Per stack, an edge counts once even if the function recurses. */
	uint32_t *seen_caller = calloc(nf + 1, sizeof(*seen_caller));
	uint32_t *seen_callee = calloc(nf + 1, sizeof(*seen_callee));
	int r = -ENOMEM;
	if (!callers || !callees || !seen_caller || !seen_callee)
		goto out;
	for (size_t si = 0; si < m->nstacks; si++) {
		const struct model_stack *s = &m->stacks[si];
		uint64_t c;
		if (!in_scope(m, s, q, &c))
			continue;
		d->samples += c;
		const uint32_t *ids = m->pool + s->off;
		bool found = false;
		for (size_t i = 0; i < s->n; i++) {
			if (ids[i] != function)
				continue;
			found = true;
			if (i > 0 && ids[i - 1] < nf && seen_caller[ids[i - 1]] != si + 1) {
				seen_caller[ids[i - 1]] = (uint32_t)(si + 1);
				callers[ids[i - 1]] += c;
			}
			if (i + 1 < s->n && ids[i + 1] < nf && seen_callee[ids[i + 1]] != si + 1) {
				seen_callee[ids[i + 1]] = (uint32_t)(si + 1);
				callees[ids[i + 1]] += c;
			}
		}
		if (found)
			d->total += c;
		if (ids[s->n - 1] == function)
			d->self += c;
	}
	r = edges_collect(callers, nf, &d->callers, &d->ncallers);
	if (r == 0)
		r = edges_collect(callees, nf, &d->callees, &d->ncallees);
	if (r < 0) {
		ui_detail_release(d);
		goto out;
	}
	if (d->ncallers > 1)
		qsort_r(d->callers, d->ncallers, sizeof(*d->callers), cmp_edge, m);
	if (d->ncallees > 1)
		qsort_r(d->callees, d->ncallees, sizeof(*d->callees), cmp_edge, m);
out:
	free(callers);
	free(callees);
	free(seen_caller);
	free(seen_callee);
	return r;
}

void
ui_detail_release(struct ui_detail *d)
{
	free(d->callers);
	free(d->callees);
	d->callers = d->callees = NULL;
	d->ncallers = d->ncallees = 0;
}
