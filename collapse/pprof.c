/*
 * The pprof writer: a struct collapse as a gzip-compressed profile.proto
 * (collapse/profile.proto, encoded by the protobuf-c code protoc-c
 * generates from it at build time; compressed by zlib).
 *
 * collapse keeps frame names, not addresses: each frame id is one Function,
 * and each physical frame with the name_[i] frames that follow it (the
 * functions inlined at its address, outermost first) is one Location whose
 * Lines list them innermost first, as pprof models inlining. Where the
 * caller knows the module of a frame (frame_info), the Location has a
 * Mapping with the file and build-id, and the module-relative address of
 * the frame's first sample. The root frames comm-PID and comm-PID/TID
 * become labels of the sample.
 */
#include "config.h"

#include "base/base.h"
#include "collapse/collapse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef HAVE_PROTOBUF_C

int collapse_encode_pprof(const struct collapse *c,
			  const struct collapse_pprof_options *o,
			  void **buf, size_t *len)
{
	return -ENOTSUP;
}

int collapse_write_pprof(const struct collapse *c,
			 const struct collapse_pprof_options *o, FILE *out)
{
	return -ENOTSUP;
}

#else

#include <zlib.h>

#include "collapse/profile.pb-c.h"

#define INLINE_SUFFIX "_[i]"
#define MAX_LABELS 4

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__ValueType pb_value_type;

/* Growable arrays of pointers to messages (protobuf-c's repeated fields
 * are arrays of pointers). */
struct ptr_vec {
	void **v;
	size_t n, cap;
};

static int vec_push(struct ptr_vec *vec, void *x)
{
	if (BASE_GROW(vec->v, vec->cap, vec->n + 1, 64) < 0)
		return -ENOMEM;
	vec->v[vec->n++] = x;
	return 0;
}

struct builder {
	const struct collapse *c;
	const struct collapse_pprof_options *o;
	struct collapse *strs;		/* the string table, interned */
	struct base_map funcs;	/* frame id -> Function id */
	struct base_map mappings;	/* module string -> Mapping id */
	struct base_map locs;	/* hash of a frame group -> Location id */
	struct ptr_vec fvec, mvec, lvec, svec;
};

/* An index into the string table; -ENOMEM. */
static int64_t str_id(struct builder *b, const char *s)
{
	int r = collapse_intern(b->strs, s ? s : "");

	return r < 0 ? -ENOMEM : r;
}

static bool is_inline(const char *name)
{
	size_t n = strlen(name), k = strlen(INLINE_SUFFIX);

	return n > k && strcmp(name + n - k, INLINE_SUFFIX) == 0;
}

/* The Function of frame id (created on first sight, with its source file
 * when known); 0 on ENOMEM. */
static uint64_t function_of(struct builder *b, uint32_t id, const char *file)
{
	uint32_t fid;
	const char *name = collapse_frame_name(b->c, id);
	char *plain;
	pb_function *f;
	int64_t s;

	if (base_map_get(&b->funcs, id, &fid))
		return fid;
	plain = strdup(name);
	if (!plain)
		return 0;
	if (is_inline(plain))
		plain[strlen(plain) - strlen(INLINE_SUFFIX)] = '\0';
	s = str_id(b, plain);
	free(plain);
	f = malloc(sizeof(*f));
	if (s < 0 || !f || vec_push(&b->fvec, f) < 0) {
		free(f);
		return 0;
	}
	perftools__profiles__function__init(f);
	f->id = b->fvec.n;
	f->name = s;
	f->system_name = s;
	if (file && (s = str_id(b, file)) > 0)
		f->filename = s;
	if (base_map_put(&b->funcs, id, (uint32_t)f->id) < 0)
		return 0;
	return f->id;
}

/* The Mapping of module (created on first sight); 0: none or ENOMEM. */
static uint64_t mapping_of(struct builder *b,
			   const struct collapse_pprof_frame *fr)
{
	int64_t file, bid;
	uint32_t mid;
	pb_mapping *m;

	if (!fr->module)
		return 0;
	file = str_id(b, fr->module);
	if (file < 0)
		return 0;
	if (base_map_get(&b->mappings, (uint64_t)file, &mid)) {
		m = b->mvec.v[mid - 1];
		/* Addresses are module-relative: the mapping covers them
		 * from 0, as a file mapped whole at its load bias would. */
		if (fr->address >= m->memory_limit)
			m->memory_limit = fr->address + 1;
		return mid;
	}
	bid = str_id(b, fr->build_id);
	m = malloc(sizeof(*m));
	if (bid < 0 || !m || vec_push(&b->mvec, m) < 0) {
		free(m);
		return 0;
	}
	perftools__profiles__mapping__init(m);
	m->id = b->mvec.n;
	m->memory_start = 0;
	m->memory_limit = fr->address + 1;
	m->file_offset = 0;
	m->filename = file;
	m->build_id = bid;
	m->has_functions = true;
	m->has_inline_frames = true;
	if (base_map_put(&b->mappings, (uint64_t)file, (uint32_t)m->id) < 0)
		return 0;
	return m->id;
}

/* The hash of a frame group: the key of its Location. Two groups with the
 * same 64-bit hash would share a Location; at the number of distinct
 * frames a recording has, that does not happen in practice. */
static uint64_t group_hash(const uint32_t *ids, size_t n)
{
	return base_hash_u32s(n, ids, n);
}

/* The Location of ids[0..n-1]: a physical frame and the frames inlined
 * into it, root first. Returns its id, 0 on ENOMEM. */
static uint64_t location_of(struct builder *b, const uint32_t *ids, size_t n)
{
	uint64_t key = group_hash(ids, n);
	struct collapse_pprof_frame fr;
	pb_location *l;
	uint32_t lid;

	if (base_map_get(&b->locs, key, &lid))
		return lid;
	l = calloc(1, sizeof(*l));
	if (!l)
		return 0;
	perftools__profiles__location__init(l);
	l->line = calloc(n, sizeof(*l->line));
	if (!l->line || vec_push(&b->lvec, l) < 0) {
		free(l->line);
		free(l);
		return 0;
	}
	l->id = b->lvec.n;
	/* Innermost first. */
	for (size_t i = 0; i < n; i++) {
		pb_line *line = malloc(sizeof(*line));
		struct collapse_pprof_frame src = { NULL };

		if (!line)
			return 0;
		perftools__profiles__line__init(line);
		if (b->o->frame_info)
			b->o->frame_info(b->o->arg, ids[n - 1 - i], &src);
		line->function_id = function_of(b, ids[n - 1 - i], src.file);
		line->line = src.line;
		l->line[l->n_line++] = line;
		if (!line->function_id)
			return 0;
	}
	memset(&fr, 0, sizeof(fr));
	if (b->o->frame_info && b->o->frame_info(b->o->arg, ids[0], &fr)) {
		l->mapping_id = mapping_of(b, &fr);
		l->address = fr.address;
	}
	if (base_map_put(&b->locs, key, (uint32_t)l->id) < 0)
		return 0;
	return l->id;
}

static int add_label(struct builder *b, pb_sample *s, const char *key,
		     const char *str, int64_t num)
{
	pb_label *lb = malloc(sizeof(*lb));
	int64_t k = str_id(b, key), v = str ? str_id(b, str) : 0;

	if (!lb || k < 0 || v < 0) {
		free(lb);
		return -ENOMEM;
	}
	perftools__profiles__label__init(lb);
	lb->key = k;
	if (str)
		lb->str = v;
	else
		lb->num = num;
	s->label[s->n_label++] = lb;
	return 0;
}

/* Labels from a root frame: "comm-PID" (a process) or "comm-PID/TID". */
static int root_labels(struct builder *b, pb_sample *s, const char *root,
		       bool *have_process)
{
	char *name = strdup(root), *slash, *dash;
	int r = 0;

	if (!name)
		return -ENOMEM;
	slash = strrchr(name, '/');
	if (slash)
		*slash = '\0';
	dash = strrchr(name, '-');
	if (!dash) {
		free(name);
		return 0;	/* not a root frame stackspy wrote */
	}
	*dash = '\0';
	if (slash) {
		if (s->n_label + 2 <= MAX_LABELS) {
			r = add_label(b, s, "thread_name", name, 0);
			if (!r)
				r = add_label(b, s, "tid", slash + 1, 0);
		}
	} else {
		*have_process = true;
		r = add_label(b, s, "process_name", name, 0);
	}
	/* pid: once, from whichever root comes first. */
	if (!r && !(slash && *have_process))
		r = add_label(b, s, "pid", dash + 1, 0);
	free(name);
	return r;
}

static int add_sample(struct builder *b, const struct collapse_stack *st,
		      uint64_t count)
{
	const struct collapse_pprof_options *o = b->o;
	size_t roots = o->roots < st->n ? o->roots : 0;
	const uint32_t *ids = st->ids + roots;
	size_t n = st->n - roots;
	bool have_process = false;
	pb_sample *s = malloc(sizeof(*s));

	if (!s || vec_push(&b->svec, s) < 0) {
		free(s);
		return -ENOMEM;
	}
	perftools__profiles__sample__init(s);
	s->value = calloc(2, sizeof(*s->value));
	s->location_id = calloc(n, sizeof(*s->location_id));
	s->label = calloc(MAX_LABELS + 1, sizeof(*s->label));
	if (!s->value || !s->location_id || !s->label)
		return -ENOMEM;
	s->n_value = 2;
	s->value[0] = (int64_t)count;
	s->value[1] = (int64_t)(count * o->period_ns);
	for (size_t i = 0; i < roots; i++) {
		int r = root_labels(b, s, collapse_frame_name(b->c, st->ids[i]),
				    &have_process);
		if (r < 0)
			return r;
	}
	if (!have_process && o->process_name) {
		int r = add_label(b, s, "process_name", o->process_name, 0);

		if (r < 0)
			return r;
	}
	/* Frames come root first; pprof wants the leaf first. Group each
	 * physical frame with the inlined frames above it. */
	for (size_t end = n; end > 0;) {
		size_t start = end - 1;
		uint64_t lid;

		while (start > 0 &&
		       is_inline(collapse_frame_name(b->c, ids[start])))
			start--;
		lid = location_of(b, ids + start, end - start);
		if (!lid)
			return -ENOMEM;
		s->location_id[s->n_location_id++] = lid;
		end = start;
	}
	return 0;
}

static void free_vec(struct ptr_vec *vec)
{
	free(vec->v);
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->svec.n; i++) {
		pb_sample *s = b->svec.v[i];

		for (size_t k = 0; k < s->n_label; k++)
			free(s->label[k]);
		free(s->label);
		free(s->value);
		free(s->location_id);
		free(s);
	}
	for (size_t i = 0; i < b->lvec.n; i++) {
		pb_location *l = b->lvec.v[i];

		for (size_t k = 0; k < l->n_line; k++)
			free(l->line[k]);
		free(l->line);
		free(l);
	}
	for (size_t i = 0; i < b->fvec.n; i++)
		free(b->fvec.v[i]);
	for (size_t i = 0; i < b->mvec.n; i++)
		free(b->mvec.v[i]);
	free_vec(&b->svec);
	free_vec(&b->lvec);
	free_vec(&b->fvec);
	free_vec(&b->mvec);
	base_map_free(&b->funcs);
	base_map_free(&b->mappings);
	base_map_free(&b->locs);
	collapse_free(b->strs);
}

/* gzip of in[0..len-1] into a new buffer. */
static int gzip_buffer(const uint8_t *in, size_t len, void **out,
		       size_t *out_len)
{
	z_stream z;
	size_t cap;
	uint8_t *buf;
	int r;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer, as pprof files have. */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	/* Room for all of it: one deflate() call. */
	cap = deflateBound(&z, len) + 32;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	r = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (r != Z_STREAM_END) {
		free(buf);
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

int collapse_encode_pprof(const struct collapse *c,
			  const struct collapse_pprof_options *o,
			  void **buf, size_t *len)
{
	struct builder b = { .c = c, .o = o };
	pb_profile prof;
	pb_value_type vt[3], *vtp[2];
	struct collapse_stack st;
	size_t cursor = 0, index = 0;
	char **table = NULL;
	size_t ntable = 0;
	uint8_t *raw = NULL;
	size_t nraw;
	int r = -ENOMEM;

	*buf = NULL;
	*len = 0;
	if (!c || !o)
		return -EINVAL;
	b.strs = collapse_new();
	if (!b.strs || str_id(&b, "") != 0)
		goto out;
	perftools__profiles__profile__init(&prof);
	for (int i = 0; i < 3; i++)
		perftools__profiles__value_type__init(&vt[i]);
	vt[0].type = str_id(&b, "samples");
	vt[0].unit = str_id(&b, "count");
	vt[1].type = str_id(&b, o->wall ? "wall" : "cpu");
	vt[1].unit = str_id(&b, "nanoseconds");
	vt[2] = vt[1];
	if (vt[0].type < 0 || vt[0].unit < 0 || vt[1].type < 0 || vt[1].unit < 0)
		goto out;
	vtp[0] = &vt[0];
	vtp[1] = &vt[1];

	while (collapse_next(c, &cursor, &st)) {
		uint64_t count = st.count;

		if (o->base && index < o->nbase)
			count = count > o->base[index] ? count - o->base[index] : 0;
		index++;
		if (count && (r = add_sample(&b, &st, count)) < 0)
			goto out;
	}
	r = -ENOMEM;

	/* The main binary first (go tool pprof's "File:"). */
	if (o->main_module) {
		int64_t file = collapse_lookup(b.strs, o->main_module);

		for (size_t i = 1; file > 0 && i < b.mvec.n; i++) {
			pb_mapping *m = b.mvec.v[i], *first = b.mvec.v[0];

			if (m->filename != file)
				continue;
			for (size_t k = 0; k < b.lvec.n; k++) {
				pb_location *l = b.lvec.v[k];

				if (l->mapping_id == 1)
					l->mapping_id = m->id;
				else if (l->mapping_id == m->id)
					l->mapping_id = 1;
			}
			first->id = m->id;
			m->id = 1;
			b.mvec.v[0] = m;
			b.mvec.v[i] = first;
			break;
		}
	}
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &vt[2];
	prof.period = (int64_t)o->period_ns;
	prof.default_sample_type = vt[1].type;
	prof.time_nanos = o->time_ns;
	prof.duration_nanos = o->duration_ns;
	prof.n_sample = b.svec.n;
	prof.sample = (pb_sample **)b.svec.v;
	prof.n_location = b.lvec.n;
	prof.location = (pb_location **)b.lvec.v;
	prof.n_function = b.fvec.n;
	prof.function = (pb_function **)b.fvec.v;
	prof.n_mapping = b.mvec.n;
	prof.mapping = (pb_mapping **)b.mvec.v;
	ntable = prof.n_string_table = collapse_distinct_frames(b.strs);
	table = calloc(ntable, sizeof(*table));
	if (!table)
		goto out;
	/* Every string (function, file, module and thread names) by the
	 * rule of every output (text.c): pprof's readers print them raw. */
	for (size_t i = 0; i < ntable; i++) {
		const char *str = collapse_frame_name(b.strs, (uint32_t)i);

		if (collapse_text_escaped_len(str) == strlen(str))
			table[i] = (char *)str;
		else if (!(table[i] = collapse_text_dup(str)))
			goto out;
	}
	prof.string_table = table;

	nraw = perftools__profiles__profile__get_packed_size(&prof);
	raw = malloc(nraw ? nraw : 1);
	if (!raw)
		goto out;
	perftools__profiles__profile__pack(&prof, raw);
	r = gzip_buffer(raw, nraw, buf, len);
out:
	free(raw);
	for (size_t i = 0; table && i < ntable; i++)
		if (table[i] && table[i] != collapse_frame_name(b.strs, (uint32_t)i))
			free(table[i]);
	free(table);
	builder_free(&b);
	return r;
}

int collapse_write_pprof(const struct collapse *c,
			 const struct collapse_pprof_options *o, FILE *out)
{
	void *buf;
	size_t len;
	int r = collapse_encode_pprof(c, o, &buf, &len);

	if (r < 0)
		return r;
	errno = 0;
	if (fwrite(buf, 1, len, out) != len)
		r = errno ? -errno : -EIO;
	free(buf);
	return r;
}

#endif /* HAVE_PROTOBUF_C */
