/* unwind/maps.c - the target's memory map, from /proc/PID/maps.
 *
 * The parser trusts nothing: a line that does not have the shape
 * "start-end perms offset major:minor inode [path]" is skipped, so a kernel
 * that adds a field, a truncated read or a hand-written core-file map never
 * makes us fail or crash (tests/unit-symtab.c feeds it malformed lines).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/base.h"
#include "unwind/maps.h"

#define DELETED_SUFFIX " (deleted)"

/* Unsigned hex number at *p; advances *p.  strtoull is not used because it
 * accepts a sign and leading spaces, which would let "- 1" through. */
static bool parse_hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	for (;; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX >> 4))
			return false;   /* overflow: not a maps line */
		v = (v << 4) | (uint64_t)d;
	}
	if (digits == 0)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool parse_dec(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;

	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (digits == 0)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool skip_blanks(const char **p)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (s == *p)
		return false;
	*p = s;
	return true;
}

/* Parse one line [line, eol) into m (path malloc'd).  Returns 1 on success,
 * 0 if the line is malformed, -ENOMEM. */
static int parse_line(const char *line, const char *eol, struct mapping *m)
{
	/* The fields are parsed from a NUL-terminated copy so that the number
	 * parsers can never run past the end of the line. */
	size_t len = (size_t)(eol - line);
	char *buf = malloc(len + 1);
	const char *p;
	uint64_t start, end, offset, major, minor, inode;
	unsigned perms = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, line, len);
	buf[len] = '\0';
	p = buf;

	if (!parse_hex(&p, &start) || *p++ != '-' || !parse_hex(&p, &end))
		goto out;
	if (start >= end || !skip_blanks(&p))
		goto out;

	/* perms: exactly four characters, "rwxp" or "rwxs" with '-' holes */
	if (!p[0] || !p[1] || !p[2] || !p[3])
		goto out;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		goto out;
	if (p[0] == 'r')
		perms |= MAPPING_R;
	if (p[1] == 'w')
		perms |= MAPPING_W;
	if (p[2] == 'x')
		perms |= MAPPING_X;
	p += 4;

	if (!skip_blanks(&p) || !parse_hex(&p, &offset))
		goto out;
	if (!skip_blanks(&p) || !parse_hex(&p, &major) || *p++ != ':' ||
	    !parse_hex(&p, &minor))
		goto out;
	if (major > 0xfffff || minor > 0xfffff)
		goto out;
	if (!skip_blanks(&p) || !parse_dec(&p, &inode))
		goto out;
	if (*p && *p != ' ' && *p != '\t')
		goto out;

	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->offset = offset;
	m->dev = makedev((unsigned)major, (unsigned)minor);
	m->inode = (ino_t)inode;
	m->perms = perms;

	/* The path is everything after the padding, spaces included: file
	 * names may contain spaces, and the kernel pads with spaces only. */
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		size_t plen = strlen(p);
		size_t slen = strlen(DELETED_SUFFIX);

		while (plen > 0 && (p[plen - 1] == '\r' || p[plen - 1] == ' '))
			plen--;
		if (plen > slen && memcmp(p + plen - slen, DELETED_SUFFIX, slen) == 0) {
			plen -= slen;
			m->deleted = true;
		}
		if (plen > 0) {
			m->path = strndup(p, plen);
			if (!m->path) {
				ret = -ENOMEM;
				goto out;
			}
		}
	}
	ret = 1;
out:
	free(buf);
	return ret;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int unwind_module_map_parse(const char *text, struct module_map *out)
{
	struct mapping *v = NULL;
	size_t n = 0, cap = 0, kept;
	const char *line, *eol;

	if (!text || !out)
		return -EINVAL;
	out->v = NULL;
	out->n = 0;

	for (line = text; *line; line = *eol ? eol + 1 : eol) {
		struct mapping m;
		int r;

		eol = strchr(line, '\n');
		if (!eol)
			eol = line + strlen(line);
		if (BASE_GROW(v, cap, n + 1, 64) < 0)
			goto nomem;
		r = parse_line(line, eol, &m);
		if (r < 0)
			goto nomem;
		if (r > 0)
			v[n++] = m;
	}

	/* The kernel's lines are sorted and disjoint; text from elsewhere may
	 * not be, and unwind_module_map_find relies on both. */
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_mapping);
	kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (kept > 0 && v[i].start < v[kept - 1].end) {
			free(v[i].path);
			continue;
		}
		v[kept++] = v[i];
	}
	if (kept == 0) {
		free(v);
		v = NULL;
	}
	out->v = v;
	out->n = kept;
	return 0;

nomem:
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
	return -ENOMEM;
}

int unwind_module_map_read(pid_t pid, struct module_map *out)
{
	char path[64];
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd, ret;

	if (!out)
		return -EINVAL;
	out->v = NULL;
	out->n = 0;

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;

	/* Read it whole before parsing: the kernel builds the text per read,
	 * and parsing as we go would not make it any more consistent. */
	for (;;) {
		ssize_t r;

		if (BASE_GROW(buf, cap, len + 4096, 65536) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	ret = unwind_module_map_parse(buf, out);
	/* A zombie (or a process that exited between open and read) has an
	 * empty map. */
	if (ret == 0 && out->n == 0)
		ret = -ESRCH;
out:
	free(buf);
	close(fd);
	return ret;
}

void unwind_module_map_free(struct module_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

struct mapping *unwind_module_map_find(const struct module_map *m, uint64_t addr)
{
	size_t lo;

	if (!m || !m->v)
		return NULL;
	/* Greatest start <= addr. */
	lo = unwind_spans_upto(m->v, m->n, sizeof(*m->v), offsetof(struct mapping, start), addr);
	if (lo == 0)
		return NULL;
	if (addr < m->v[lo - 1].end)
		return &m->v[lo - 1];
	return NULL;
}

size_t
unwind_spans_upto(const void *v, size_t n, size_t stride, size_t start_off, uint64_t addr)
{
	const unsigned char *base = v;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t start;

		memcpy(&start, base + mid * stride + start_off, sizeof(start));
		if (start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
