/* unwind/perf-map.c - names of JIT code from the target's /tmp/perf-PID.map.
 *
 * perf's convention for JITs (V8 --perf-basic-prof, the JVM's perf-map-agent,
 * LuaJIT, .NET): one line per piece of code, "START SIZE NAME", hex, START
 * may have a 0x; a later line for the same address wins (code is
 * re-jitted in place).
 *
 * The file only grows while the JIT runs, for as long as it runs: it is
 * read incrementally, only the lines appended since the last look (a file
 * that shrank, was rewritten or replaced is read again whole), and a new
 * line replaces every older entry its range overlaps, so that the entries
 * stay sorted and disjoint and their number follows the code that exists,
 * not the lines ever written.  Names are interned: a function re-jitted a
 * thousand times is one string.  Both are capped (unwind.h); what the caps
 * leave out is counted (tests/symbols-perfmap-grow.test, unit-perfmap).
 *
 * One look reads to the end the file had when the look began (a JIT that
 * appends faster than we read cannot hold it), bounded by the entry cap,
 * not by a slice of bytes: twice max_entries lines, 256 bytes a line of
 * max_entries, 2 s.  A map of 250,000 lines (15 MB, tests/symbols-
 * perfmap-big.test) is thus read whole at the first look, as a dump has
 * no other; a larger or slower one goes on at the next looks, where the
 * last stopped, after a pause nine times as long as the look took (at
 * most a tenth of the time goes to reading a map that never ends, a
 * sparse file of a terabyte of zeros).  Lines not in perf's format and
 * lines too long are counted as bad, the bytes not read yet as unread.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/perf-map.h"
#include "unwind/target.h"
#include "unwind/unwind.h"
#include "unwind/yield.h"

#define CHUNK      (64 * 1024)    /* bytes read at a time */
#define MAX_LINE   4096           /* longer lines are skipped */
#define BATCH      65536          /* lines parsed, then merged at once */
#define TAIL       64             /* bytes before the read offset kept to
				     notice a file rewritten in place */
#define LOOK_BYTES_PER_ENTRY 256  /* bytes read at one look, at most: this
				     many per entry of the cap (128 MiB by
				     default; the rest at the next looks) */
#define LOOK_LINES_PER_ENTRY 2    /* lines parsed at one look, at most:
				     twice the cap (a later line replaces
				     those it overlaps) */
#define READ_BUDGET_NS (2 * NS_PER_SEC) /* and at most this long (a file on a
				     slow file system) */
#define PACE       9              /* a look cut short: the next that goes
				     on waits this many times as long */
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC  0x9fa0
#endif
#ifndef SYSFS_MAGIC
#define SYSFS_MAGIC       0x62656572
#endif
#ifndef DEBUGFS_MAGIC
#define DEBUGFS_MAGIC     0x64626720
#endif

struct perf_map_entry {
	uint64_t start, end;
	const char *name;         /* in pm->names; NULL: evicted (merge only) */
	uint64_t seq;             /* line number: the later line wins */
};

struct perf_map {
	bool tried;
	pid_t nspid;              /* the PID the target knows itself by */
	uid_t uids[4];            /* the target's real, effective, saved, fs uids */
	int nuids;
	const char *refused;      /* why the file was not read, or NULL */
	long refused_uid;         /* its owner, for "owned by" */
	/* The file as last read. */
	dev_t dev;
	ino_t ino;                /* 0: none read */
	off_t size;
	struct timespec mtime;
	off_t offset;             /* up to the end of the last whole line read */
	bool skipping;            /* inside a line longer than MAX_LINE */
	bool more;                /* a look stopped at its bounds: more to read */
	uint64_t resume_ns;       /* ... from this time on (PACE) */
	off_t unread;             /* bytes left when it stopped */
	unsigned generation;      /* looks that went on where one stopped */
	unsigned pace;            /* PACE; 0 in tests */
	unsigned char tail[TAIL]; /* the tail_len bytes before offset */
	size_t tail_len;
	uint64_t seq;             /* lines read so far */
	/* Sorted by start, disjoint. */
	struct perf_map_entry *v;
	size_t n, cap;
	/* Every name handed out, until unwind_perf_map_free (callers keep them). */
	struct name_pool *names;
	size_t max_entries, max_name_bytes, read_max;
	uint64_t dropped;         /* lines left out at the caps */
	uint64_t bad;             /* lines not in perf's format, or too long */
	/* Lines parsed, not merged yet (file order). */
	struct perf_map_entry *batch;
	size_t nbatch;
};

/* From /proc/PID/status: the target's PID in its own PID namespace (last
 * field of NSpid:), which is the name a containerized JIT gives its map,
 * and its uids (whose files the map may be). */
static void read_status(struct perf_map *pm, pid_t pid)
{
	char text[128], *p, *end;

	pm->nspid = pid;
	/* One number per nested PID namespace, the innermost last. */
	if (ptrace_proc_status_text(pid, 0, "NSpid", text, sizeof(text)) == 0)
		for (p = text;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			pm->nspid = (pid_t)v;
		}
	if (ptrace_proc_status_text(pid, 0, "Uid", text, sizeof(text)) == 0)
		for (p = text; pm->nuids < 4; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			pm->uids[pm->nuids++] = (uid_t)v;
		}
}

/* Is the file one the target (or root) wrote, on a real file system?
 * NULL if so, else why not (*owner: its uid). */
static const char *map_refusal(const struct perf_map *pm, int fd, const struct stat *sb,
			       long *owner)
{
	struct statfs sf;

	*owner = (long)sb->st_uid;
	if (fstatfs(fd, &sf) == 0 && (sf.f_type == PROC_SUPER_MAGIC ||
				      sf.f_type == SYSFS_MAGIC || sf.f_type == DEBUGFS_MAGIC))
		return "it is a kernel file (proc, sys or debugfs)";
	if (sb->st_uid == 0)
		return NULL;
	for (int i = 0; i < pm->nuids; i++)
		if (sb->st_uid == pm->uids[i])
			return NULL;
	return "it is owned by another user than the target's or root";
}

static struct perf_map *perf_map_get(struct perf_map **pmp)
{
	struct perf_map *pm = *pmp;

	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm)
			return NULL;
		pm->max_entries = UNWIND_PERF_MAP_MAX_ENTRIES;
		pm->max_name_bytes = UNWIND_PERF_MAP_MAX_NAME_BYTES;
		pm->read_max = (size_t)UNWIND_PERF_MAP_MAX_ENTRIES * LOOK_BYTES_PER_ENTRY;
		pm->pace = PACE;
		*pmp = pm;
	}
	return pm;
}

/* Forget the file: the next look reads it whole.  Names stay. */
static void perf_map_forget(struct perf_map *pm)
{
	pm->n = 0;
	pm->nbatch = 0;
	pm->ino = 0;
	pm->dev = 0;
	pm->size = 0;
	pm->offset = 0;
	pm->skipping = false;
	pm->more = false;
	pm->unread = 0;
	pm->tail_len = 0;
}

/* ---- merging a batch ---------------------------------------------------- */

/* A prefix-maximum Fenwick tree over positions 0..n-1 (values: ends). */
static void fen_raise(uint64_t *fen, size_t n, size_t pos, uint64_t v)
{
	for (size_t j = pos + 1; j <= n; j += j & -j)
		if (fen[j] < v)
			fen[j] = v;
}

static uint64_t fen_max(const uint64_t *fen, size_t k)
{
	uint64_t r = 0;

	for (size_t j = k; j > 0; j -= j & -j)
		if (r < fen[j])
			r = fen[j];
	return r;
}

static const struct perf_map_entry *sort_base;

static int cmp_by_start(const void *a, const void *b)
{
	const struct perf_map_entry *x = &sort_base[*(const uint32_t *)a];
	const struct perf_map_entry *y = &sort_base[*(const uint32_t *)b];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* Number of starts[] below addr (starts sorted). */
static size_t count_below(const uint64_t *starts, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (starts[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First entry of the sorted, disjoint v[0..n) that ends after addr. */
static size_t first_ending_after(const struct perf_map_entry *v, size_t n, uint64_t addr)
{
	/* v is sorted by end too (disjoint): those ending at or before
	 * addr come first. */
	return unwind_spans_upto(v, n, sizeof(*v), offsetof(struct perf_map_entry, end), addr);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Over max_entries: keep the newest lines (the code most likely alive),
 * down to 7/8 of the cap so that this sort is not paid per line. */
static void trim_oldest(struct perf_map *pm)
{
	size_t keep = pm->max_entries - pm->max_entries / 8, k = 0;
	uint64_t *seqs, cut;

	if (pm->n <= pm->max_entries)
		return;
	seqs = malloc(pm->n * sizeof(*seqs));
	if (!seqs) {
		/* Cannot choose: drop the highest addresses instead. */
		pm->dropped += pm->n - keep;
		pm->n = keep;
		return;
	}
	for (size_t i = 0; i < pm->n; i++)
		seqs[i] = pm->v[i].seq;
	qsort(seqs, pm->n, sizeof(*seqs), cmp_u64);
	cut = seqs[pm->n - keep];
	free(seqs);
	for (size_t i = 0; i < pm->n; i++)
		if (pm->v[i].seq >= cut)
			pm->v[k++] = pm->v[i];
	pm->dropped += pm->n - k;
	pm->n = k;
}

/* Apply the batch as if its lines came one by one, each replacing the
 * entries it overlaps: an entry stays iff no later line overlaps it.  In
 * the batch, that is a sweep from its last line back, with a Fenwick tree
 * of the ends of later lines by start; in v, the entries that any line of
 * the batch overlaps.  Then v is compacted and the survivors merged in
 * from the back, both from the first place the batch touches: a JIT that
 * places code at rising addresses costs the size of the batch, not of the
 * map, and no copy of v is made.  Returns 0 or -ENOMEM (the batch is
 * lost, counted as dropped). */
static int merge_batch(struct perf_map *pm)
{
	struct perf_map_entry *b = pm->batch;
	size_t m = pm->nbatch, i0, k, nsurv = 0, w, r, bi;
	uint32_t *order = NULL, *rank = NULL;
	uint64_t *starts = NULL, *fen = NULL;
	bool *dead = NULL;
	int ret = -ENOMEM;

	if (m == 0)
		return 0;
	order = malloc(m * sizeof(*order));
	rank = malloc(m * sizeof(*rank));
	starts = malloc(m * sizeof(*starts));
	fen = calloc(m + 1, sizeof(*fen));
	dead = calloc(m, sizeof(*dead));
	if (!order || !rank || !starts || !fen || !dead)
		goto out;
	for (size_t i = 0; i < m; i++)
		order[i] = (uint32_t)i;
	sort_base = b;
	qsort(order, m, sizeof(*order), cmp_by_start);
	for (k = 0; k < m; k++) {
		starts[k] = b[order[k]].start;
		rank[order[k]] = (uint32_t)k;
	}
	for (size_t i = m; i-- > 0;) {
		k = count_below(starts, m, b[i].end);
		dead[i] = fen_max(fen, k) > b[i].start;
		fen_raise(fen, m, rank[i], b[i].end);
		nsurv += !dead[i];
	}
	if (pm->n + nsurv > pm->cap) {
		/* Grown by half, never far past the cap (trimmed below). */
		size_t ncap = pm->cap + pm->cap / 2, limit = pm->max_entries + BATCH;
		struct perf_map_entry *nv;

		if (ncap < 256)
			ncap = 256;
		if (ncap > limit)
			ncap = limit;
		if (ncap < pm->n + nsurv)
			ncap = pm->n + nsurv;
		nv = realloc(pm->v, ncap * sizeof(*nv));
		if (!nv)
			goto out;
		pm->v = nv;
		pm->cap = ncap;
	}
	/* Every old entry a line of the batch overlaps ends after the
	 * lowest start of the batch: at i0 or later. */
	i0 = first_ending_after(pm->v, pm->n, starts[0]);
	for (size_t i = 0; i < m; i++)
		for (size_t j = first_ending_after(pm->v, pm->n, b[i].start);
		     j < pm->n && pm->v[j].start < b[i].end; j++)
			pm->v[j].name = NULL;
	k = i0;
	for (size_t j = i0; j < pm->n; j++)
		if (pm->v[j].name)
			pm->v[k++] = pm->v[j];
	pm->n = k;
	/* From the back: the survivors are disjoint from v's entries. */
	w = pm->n + nsurv;
	r = pm->n;
	bi = m;
	while (w > r) {
		while (dead[order[bi - 1]])
			bi--;
		const struct perf_map_entry *e = &b[order[bi - 1]];

		if (r > i0 && pm->v[r - 1].start > e->start) {
			pm->v[--w] = pm->v[--r];
		} else {
			pm->v[--w] = *e;
			bi--;
		}
	}
	pm->n += nsurv;
	trim_oldest(pm);
	ret = 0;
out:
	if (ret < 0)
		pm->dropped += m;
	free(order);
	free(rank);
	free(starts);
	free(fen);
	free(dead);
	pm->nbatch = 0;
	return ret;
}

/* ---- reading ------------------------------------------------------------ */

/* One line (without its newline, NUL-terminated) into the batch. */
static void parse_line(struct perf_map *pm, char *line)
{
	char *p = line, *end;
	unsigned long long start, size;
	struct perf_map_entry *e;
	const char *name;

	pm->seq++;
	start = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		goto bad;
	p = end + 1;
	size = strtoull(p, &end, 16);
	if (end == p || *end != ' ' || size == 0 || start + size < start)
		goto bad;
	p = end + 1;
	if (!*p)
		goto bad;
	name = unwind_name_pool_intern(&pm->names, p, pm->max_name_bytes);
	if (!name) {
		pm->dropped++;
		return;
	}
	if (pm->nbatch == BATCH && merge_batch(pm) < 0) {
		pm->dropped++;
		return;
	}
	if (!pm->batch) {
		pm->batch = malloc(BATCH * sizeof(*pm->batch));
		if (!pm->batch) {
			pm->dropped++;
			return;
		}
	}
	e = &pm->batch[pm->nbatch++];
	e->start = start;
	e->end = start + size;
	e->name = name;
	e->seq = pm->seq;
	return;
bad:
	/* An empty line too: a JIT writes none. */
	pm->bad++;
}

/* Does the file still hold, just before pm->offset, what we read there?
 * If not, it was rewritten in place ("> FILE"), not appended to. */
static bool tail_matches(const struct perf_map *pm, int fd)
{
	unsigned char now[TAIL];

	if (pm->tail_len == 0)
		return pm->offset == 0;
	return pread(fd, now, pm->tail_len, pm->offset - (off_t)pm->tail_len) ==
		(ssize_t)pm->tail_len && memcmp(now, pm->tail, pm->tail_len) == 0;
}

/* Read the whole lines from pm->offset to end (the file's size when the
 * look began), within the bounds of one look. */
static void read_appended(struct perf_map *pm, int fd, off_t end)
{
	char *buf = malloc(CHUNK + MAX_LINE + 1);
	size_t len = 0;
	off_t pos = pm->offset;         /* file offset of buf[0] */
	uint64_t begin = ptrace_clock_monotonic_ns(), deadline = begin + READ_BUDGET_NS;
	uint64_t seq0 = pm->seq, max_lines = (uint64_t)pm->max_entries * LOOK_LINES_PER_ENTRY;

	if (!buf)
		return;
	if (pm->more)
		pm->generation++;
	pm->more = false;
	for (;;) {
		ssize_t r;
		size_t s = 0, want = CHUNK + MAX_LINE - len;

		if (pos + (off_t)len >= end)
			break;
		if ((size_t)(pos - pm->offset) >= pm->read_max || pm->seq - seq0 >= max_lines ||
		    ptrace_clock_monotonic_ns() > deadline) {
			pm->more = true;
			break;
		}
		if ((off_t)want > end - pos - (off_t)len)
			want = (size_t)(end - pos - (off_t)len);
		r = pread(fd, buf + len, want, pos + (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		for (;;) {
			char *nl = memchr(buf + s, '\n', len - s);

			if (!nl)
				break;
			*nl = '\0';
			unwind_yield();
			if (pm->skipping)
				pm->skipping = false;
			else
				parse_line(pm, buf + s);
			s = (size_t)(nl - buf) + 1;
		}
		if (s == 0 && len == CHUNK + MAX_LINE) {
			/* No newline in a full buffer: a line too long to be
			 * one of a JIT's; skipped up to its end. */
			if (!pm->skipping)
				pm->bad++;
			pm->skipping = true;
			s = len;
		}
		memmove(buf, buf + s, len - s);
		len -= s;
		pos += (off_t)s;
	}
	free(buf);
	pm->offset = pos;
	pm->unread = pm->more ? end - pos : 0;
	if (pm->more)
		pm->resume_ns = ptrace_clock_monotonic_ns() +
				pm->pace * (ptrace_clock_monotonic_ns() - begin);
	pm->tail_len = pos < TAIL ? (size_t)pos : TAIL;
	if (pread(fd, pm->tail, pm->tail_len, pos - (off_t)pm->tail_len) != (ssize_t)pm->tail_len)
		pm->tail_len = 0;       /* cannot tell: read whole next time */
	/* Out of memory: the lines are counted as dropped, not re-read. */
	(void)merge_batch(pm);
}

/* Read what was appended since the last look, or all of it again if the
 * file was replaced, shrank or was rewritten.  Failures leave the map as
 * it was, or empty if the file is gone. */
static void perf_map_refresh(struct perf_map *pm, pid_t pid)
{
	char rel[64];
	struct stat sb;
	const char *why = NULL;
	long owner = -1;
	int fd;

	if (!pm->tried) {
		pm->tried = true;
		read_status(pm, pid);
	}
	/* A look cut short: the next waits (PACE), with what was read. */
	if (pm->more && ptrace_clock_monotonic_ns() < pm->resume_ns)
		return;
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", (int)pm->nspid);
	/* The target names this file and controls /tmp: inside its root
	 * (a container cannot point us at our own files), not through a
	 * symlink (a user's link to a file of root's, to /proc/kmsg), only
	 * a regular file (a FIFO would hang us, O_NONBLOCK), and only one
	 * the target's user or root owns (tests/security-perfmap.test). */
	fd = unwind_elf_open_in_root_nofollow(pid, rel);
	if (fd == -ELOOP)
		why = "it is a symlink";
	else if (fd == -EINVAL)
		why = "it is not a regular file";
	if (fd >= 0 && fstat(fd, &sb) == 0 && !(why = map_refusal(pm, fd, &sb, &owner)))
		goto readable;
	if (why) {
		/* Kept for the summary, which says it once. */
		pm->refused = why;
		pm->refused_uid = owner;
	}
	if (fd >= 0)
		close(fd);
	perf_map_forget(pm);
	return;
readable:
	if (!pm->more && pm->ino == sb.st_ino && pm->dev == sb.st_dev && pm->size == sb.st_size &&
	    pm->mtime.tv_sec == sb.st_mtim.tv_sec &&
	    pm->mtime.tv_nsec == sb.st_mtim.tv_nsec) {
		close(fd);
		return;
	}
	if (pm->ino != sb.st_ino || pm->dev != sb.st_dev || sb.st_size < pm->offset ||
	    !tail_matches(pm, fd))
		perf_map_forget(pm);
	pm->ino = sb.st_ino;
	pm->dev = sb.st_dev;
	pm->size = sb.st_size;
	pm->mtime = sb.st_mtim;
	read_appended(pm, fd, sb.st_size);
	close(fd);
}

const char *unwind_perf_map_lookup(struct perf_map **pmp, pid_t pid, uint64_t addr,
			    uint64_t *offset)
{
	struct perf_map *pm;

	if (pid <= 0 || !(pm = perf_map_get(pmp)))
		return NULL;
	perf_map_refresh(pm, pid);
	return unwind_perf_map_find(pm, addr, offset);
}

const char *unwind_perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *offset)
{
	size_t lo;

	if (!pm)
		return NULL;
	/* The last entry that starts at or below addr: entries are
	 * disjoint, so the only one that can hold it. */
	lo = unwind_spans_upto(pm->v, pm->n, sizeof(*pm->v),
			       offsetof(struct perf_map_entry, start), addr);
	if (lo == 0 || addr >= pm->v[lo - 1].end)
		return NULL;
	if (offset)
		*offset = addr - pm->v[lo - 1].start;
	return pm->v[lo - 1].name;
}

void unwind_perf_map_set_limits(struct perf_map **pmp, size_t max_entries,
			 size_t max_name_bytes, size_t read_max)
{
	struct perf_map *pm = perf_map_get(pmp);

	if (!pm)
		return;
	pm->max_entries = max_entries < 8 ? 8 : max_entries;
	pm->max_name_bytes = max_name_bytes;
	pm->read_max = read_max ? read_max : 1;
	pm->pace = 0;
}

void unwind_perf_map_usage(const struct perf_map *pm, struct perf_map_usage *u)
{
	memset(u, 0, sizeof(*u));
	if (!pm)
		return;
	u->entries = pm->n;
	u->name_bytes = unwind_name_pool_bytes(pm->names);
	u->dropped = pm->dropped;
	u->bad = pm->bad;
	u->unread = pm->more ? (uint64_t)pm->unread : 0;
	u->refused = pm->refused;
	u->refused_uid = pm->refused_uid;
}

unsigned unwind_perf_map_generation(const struct perf_map *pm)
{
	return pm ? pm->generation : 0;
}

void unwind_perf_map_free(struct perf_map *pm)
{
	if (!pm)
		return;
	unwind_name_pool_free(pm->names);
	free(pm->v);
	free(pm->batch);
	free(pm);
}
