/* unwind/py-code.c - CPython code objects as stackspy names them: the
 * qualified name, the file, and the line of an instruction from the
 * location table (3.11 and later).  Cached per target by address; the
 * target's memory is hostile: every string and table is read with a
 * bound and checked against its type object first. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace/clock.h"
#include "unwind/python.h"
#include "unwind/target.h"

int
unwind_py_read(struct unwind_target *t, uint64_t addr, void *buf, size_t len)
{
	if (addr + len < addr)
		return -EFAULT;
	if (t->ops->read_own && t->ops->read_own(t, addr, buf, len) == 0)
		return 0;
	return t->ops->read_live ? t->ops->read_live(t, addr, buf, len) : -EFAULT;
}

/* An entry of the location table starts with a byte with bit 7 set:
 * code in bits 3-6, its length in code units - 1 in bits 0-2. */
enum {
	LOC_NONE = 15,            /* no line */
	LOC_LONG = 14,            /* line delta, end line, columns: varints */
	LOC_NO_COLUMNS = 13,      /* line delta */
	LOC_ONE_LINE0 = 10,       /* 10..12: delta code - 10, two column bytes */
};

/* A varint of the table: 6 bits a byte, bit 6 says more follow.  false
 * past the end, or longer than 32 bits. */
static bool
read_varint(const unsigned char *tab, size_t len, size_t *at, unsigned *out)
{
	unsigned v = 0;
	for (unsigned shift = 0; shift < 32; shift += 6) {
		if (*at >= len)
			return false;
		unsigned char b = tab[(*at)++];
		v |= (unsigned)(b & 63) << shift;
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool
read_svarint(const unsigned char *tab, size_t len, size_t *at, int *out)
{
	unsigned v;
	if (!read_varint(tab, len, at, &v))
		return false;
	*out = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
	return true;
}

/* The line delta of the entry whose first byte is at *at (moved past
 * the entry); *has_line false for LOC_NONE.  false when malformed. */
static bool
entry_delta(const unsigned char *tab, size_t len, size_t *at, unsigned code, int *delta,
	    bool *has_line)
{
	unsigned skip;
	*has_line = true;
	*delta = 0;
	if (code == LOC_NONE) {
		*has_line = false;
		return true;
	}
	if (code == LOC_LONG) {
		return read_svarint(tab, len, at, delta) && read_varint(tab, len, at, &skip) &&
		       read_varint(tab, len, at, &skip) && read_varint(tab, len, at, &skip);
	}
	if (code == LOC_NO_COLUMNS)
		return read_svarint(tab, len, at, delta);
	if (code >= LOC_ONE_LINE0) {
		*delta = (int)code - LOC_ONE_LINE0;
		*at += 2;
	} else {
		*at += 1;             /* a short form: one byte of columns */
	}
	return *at <= len;
}

int
unwind_py_line(const unsigned char *tab, size_t len, int firstlineno, long lasti)
{
	if (lasti < 0)
		return firstlineno;
	long line = firstlineno, start = 0;
	size_t at = 0;
	/* Every entry covers at least one code unit and takes at least a
	 * byte: the loop ends within len entries. */
	while (at < len) {
		unsigned char b = tab[at++];
		if (!(b & 0x80))
			return -1;
		unsigned code = (b >> 3) & 15;
		long units = (b & 7) + 1;
		int delta;
		bool has_line;
		if (!entry_delta(tab, len, &at, code, &delta, &has_line))
			return -1;
		line += delta;
		if (line < 0 || line > 0x7fffffff)
			return -1;
		if (lasti < start + units)
			return has_line ? (int)line : -1;
		start += units;
	}
	return -1;
}

/* A str object's text (UTF-8, control characters as '?') into buf, or
 * false when addr is no str of this interpreter. */
static bool
read_string(struct unwind_target *t, const struct py_layout *L, uint64_t unicode_type,
	    uint64_t addr, char *buf, size_t cap)
{
	unsigned char head[128];
	if (!addr || (addr & 7) || L->str_compact > sizeof(head) ||
	    unwind_py_read(t, addr, head, L->str_ascii) < 0)
		return false;
	uint64_t type, length;
	uint32_t state;
	memcpy(&type, head + L->ob_type, 8);
	memcpy(&length, head + L->str_length, 8);
	memcpy(&state, head + L->str_state, 4);
	unsigned kind = (state >> 2) & 7;
	bool compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (type != unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
		return false;
	/* A name or a path this long is no name: a damaged object. */
	if (length > PY_MAX_STRING_SEEN)
		return false;
	if (length > PY_MAX_STRING)
		length = PY_MAX_STRING;
	unsigned char raw[PY_MAX_STRING * 4];
	uint64_t data = addr + (ascii ? L->str_ascii : L->str_compact);
	if (length && unwind_py_read(t, data, raw, (size_t)length * kind) < 0)
		return false;
	size_t o = 0;
	for (uint64_t i = 0; i < length; i++) {
		uint32_t c = kind == 1 ? raw[i] :
			     kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) :
			     (uint32_t)(raw[4 * i] | raw[4 * i + 1] << 8 |
					raw[4 * i + 2] << 16 | (uint32_t)raw[4 * i + 3] << 24);
		unsigned char u[4];
		size_t k;
		if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff) {
			u[0] = '?'; k = 1;
		} else if (c < 0x80) {
			u[0] = (unsigned char)c; k = 1;
		} else if (c < 0x800) {
			u[0] = (unsigned char)(0xc0 | c >> 6); u[1] = (unsigned char)(0x80 | (c & 63)); k = 2;
		} else if (c < 0x10000) {
			u[0] = (unsigned char)(0xe0 | c >> 12); u[1] = (unsigned char)(0x80 | ((c >> 6) & 63));
			u[2] = (unsigned char)(0x80 | (c & 63)); k = 3;
		} else {
			u[0] = (unsigned char)(0xf0 | c >> 18); u[1] = (unsigned char)(0x80 | ((c >> 12) & 63));
			u[2] = (unsigned char)(0x80 | ((c >> 6) & 63)); u[3] = (unsigned char)(0x80 | (c & 63));
			k = 4;
		}
		if (o + k >= cap)
			break;
		memcpy(buf + o, u, k);
		o += k;
	}
	buf[o] = '\0';
	return true;
}

/* A bytes object's contents, malloc'd in *out (at most PY_MAX_LINETABLE
 * bytes), or false. */
static bool
read_bytes(struct unwind_target *t, const struct py_layout *L, uint64_t bytes_type,
	   uint64_t addr, unsigned char **out, uint32_t *len)
{
	unsigned char head[64];
	if (!addr || (addr & 7) || L->bytes_sval > sizeof(head) ||
	    unwind_py_read(t, addr, head, L->bytes_sval) < 0)
		return false;
	uint64_t type;
	int64_t size;
	memcpy(&type, head + L->ob_type, 8);
	memcpy(&size, head + L->bytes_size, 8);
	if (type != bytes_type || size < 0 || size > (int64_t)PY_MAX_LINETABLE)
		return false;
	unsigned char *b = malloc(size ? (size_t)size : 1);
	if (!b)
		return false;
	if (size && unwind_py_read(t, addr + L->bytes_sval, b, (size_t)size) < 0) {
		free(b);
		return false;
	}
	*out = b;
	*len = (uint32_t)size;
	return true;
}

/* The fields of the code object at addr that name it: false when it is
 * no code object. */
struct code_head {
	uint64_t filename, qualname, linetable;
	int firstlineno;
};

static bool
read_code_head(struct unwind_target *t, const struct py_layout *L, uint64_t code_type,
	       uint64_t addr, struct code_head *h)
{
	unsigned char raw[256];
	if (!addr || (addr & 7) || L->co_size > sizeof(raw) ||
	    unwind_py_read(t, addr, raw, L->co_size) < 0)
		return false;
	uint64_t type;
	int32_t first;
	memcpy(&type, raw + L->ob_type, 8);
	if (type != code_type)
		return false;
	memcpy(&h->filename, raw + L->co_filename, 8);
	memcpy(&h->qualname, raw + L->co_qualname, 8);
	memcpy(&h->linetable, raw + L->co_linetable, 8);
	memcpy(&first, raw + L->co_firstlineno, 4);
	h->firstlineno = first;
	return true;
}

static const char *
pool_name(struct unwind_target *t, struct py_codes *c, const struct py_layout *L,
	  uint64_t unicode_type, uint64_t addr)
{
	char buf[PY_MAX_STRING * 4 + 1];
	if (!read_string(t, L, unicode_type, addr, buf, sizeof(buf)))
		return "?";
	const char *s = unwind_name_pool_intern(&c->names, buf, PY_MAX_NAME_BYTES);
	return s ? s : "?";
}

/* Names the code object at addr into *e (which is not yet in the cache). */
static bool
name_code(struct unwind_target *t, struct py_codes *c, const struct py_layout *L,
	  const uint64_t types[3], uint64_t addr, struct py_code *e)
{
	struct code_head h;
	if (!read_code_head(t, L, types[0], addr, &h))
		return false;
	memset(e, 0, sizeof(*e));
	e->addr = addr;
	e->qualname = pool_name(t, c, L, types[1], h.qualname);
	e->file = pool_name(t, c, L, types[1], h.filename);
	e->firstlineno = h.firstlineno;
	e->qualname_ptr = h.qualname;
	e->file_ptr = h.filename;
	e->code_start = addr + L->co_code;
	if (c->linetable_bytes < PY_MAX_LINETABLES &&
	    read_bytes(t, L, types[2], h.linetable, &e->linetable, &e->linetable_len))
		c->linetable_bytes += e->linetable_len;
	return true;
}

const struct py_code *
unwind_py_code(struct unwind_target *t, struct py_codes *c, const struct py_layout *L,
	       uint64_t code_type, uint64_t unicode_type, uint64_t bytes_type, uint64_t addr,
	       uint64_t now_ns)
{
	const uint64_t types[3] = { code_type, unicode_type, bytes_type };
	uint32_t at;
	if (base_map_get(&c->index, addr, &at)) {
		struct py_code *e = &c->v[at];
		if (now_ns - e->checked_ns < NS_PER_SEC)
			return e;
		/* The object may have been freed and another made there. */
		struct code_head h;
		if (read_code_head(t, L, code_type, addr, &h) &&
		    h.firstlineno == e->firstlineno && h.qualname == e->qualname_ptr &&
		    h.filename == e->file_ptr) {
			e->checked_ns = now_ns;
			return e;
		}
		c->linetable_bytes -= e->linetable_len;
		free(e->linetable);
		/* Names cached by this address elsewhere go too
		 * (unwind_target_generation). */
		c->replaced++;
		if (!name_code(t, c, L, types, addr, e)) {
			e->qualname = "?";
			e->file = "?";
			e->linetable = NULL;
			e->linetable_len = 0;
			return NULL;
		}
		e->checked_ns = now_ns;
		return e;
	}
	struct py_code e;
	if (!name_code(t, c, L, types, addr, &e))
		return NULL;
	e.checked_ns = now_ns;
	if (c->n < PY_MAX_CODES && BASE_GROW(c->v, c->cap, c->n + 1, 256) == 0 &&
	    base_map_put(&c->index, addr, (uint32_t)c->n) == 0) {
		c->v[c->n] = e;
		return &c->v[c->n++];
	}
	/* Not kept (a bound, out of memory): named for this frame only. */
	c->linetable_bytes -= e.linetable_len;
	free(c->scratch.linetable);
	c->scratch = e;
	return &c->scratch;
}

void
unwind_py_codes_free(struct py_codes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].linetable);
	free(c->scratch.linetable);
	free(c->v);
	base_map_free(&c->index);
	unwind_name_pool_free(c->names);
	memset(c, 0, sizeof(*c));
}
