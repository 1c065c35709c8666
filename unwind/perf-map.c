/* unwind/perf-map.c - names of JIT code from the target's /tmp/perf-PID.map.
 *
 * perf's convention for JITs (V8 --perf-basic-prof, the JVM's perf-map-agent,
 * LuaJIT, .NET): one line per piece of code, "START SIZE NAME", hex, START
 * may have a 0x; a later line for the same address wins (code is
 * re-jitted in place).  Read lazily, re-read when the file changes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind/unwind-internal.h"

/* Re-jitted code overlaps older entries: how many entries before an
 * address are searched for the latest one that covers it. */
#define OVERLAP_LOOKBACK 16

struct perf_map_entry {
	uint64_t start, end;
	char *name;
	size_t seq;               /* line number: the later one wins */
};

struct perf_map {
	bool tried;
	pid_t nspid;              /* the PID the target knows itself by */
	struct timespec mtime;
	off_t size;
	ino_t ino;
	struct perf_map_entry *v;
	size_t n;
	/* Names of earlier loads: the strings handed out stay valid until
	 * perf_map_free() (callers keep them across lookups). */
	char **retired;
	size_t nretired;
};

/* The target's PID in its own PID namespace (last field of NSpid:), which
 * is the name a containerized JIT gives its map. */
static pid_t own_nspid(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	pid_t r = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *end;

			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				r = (pid_t)v;
				p = end;
			}
			break;
		}
	}
	fclose(f);
	return r;
}

static int cmp_perf(const void *a, const void *b)
{
	const struct perf_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void perf_map_clear(struct perf_map *pm)
{
	char **nr = pm->n ? realloc(pm->retired, (pm->nretired + pm->n) * sizeof(*nr)) : NULL;

	if (nr)
		pm->retired = nr;
	for (size_t i = 0; i < pm->n; i++) {
		if (nr)
			pm->retired[pm->nretired++] = pm->v[i].name;
		else
			free(pm->v[i].name);
	}
	free(pm->v);
	pm->v = NULL;
	pm->n = 0;
}

/* (Re)load the map if it changed.  Failures leave an empty map. */
static void perf_map_refresh(struct perf_map *pm, pid_t pid)
{
	char rel[64];
	struct stat sb;
	FILE *f;
	int fd;
	char *line = NULL;
	size_t cap = 0, vcap = 0, seq = 0;

	if (!pm->tried) {
		pm->tried = true;
		pm->nspid = own_nspid(pid);
	}
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", (int)pm->nspid);
	/* Inside the target's root, symlinks resolved there: a container
	 * cannot point us at our own files. */
	fd = elf_open_in_root(pid, rel);
	if (fd < 0) {
		perf_map_clear(pm);
		pm->ino = 0;
		return;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		perf_map_clear(pm);
		pm->ino = 0;
		return;
	}
	if (pm->ino == sb.st_ino && pm->size == sb.st_size &&
	    pm->mtime.tv_sec == sb.st_mtim.tv_sec &&
	    pm->mtime.tv_nsec == sb.st_mtim.tv_nsec) {
		close(fd);
		return;
	}
	perf_map_clear(pm);
	pm->ino = sb.st_ino;
	pm->size = sb.st_size;
	pm->mtime = sb.st_mtim;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *end;
		unsigned long long start, size;
		struct perf_map_entry *e;

		unwind_yield();
		start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || size == 0 || start + size < start)
			continue;
		p = end + 1;
		p[strcspn(p, "\n")] = '\0';
		if (!*p)
			continue;
		if (pm->n == vcap) {
			size_t ncap = vcap ? 2 * vcap : 256;
			struct perf_map_entry *nv = realloc(pm->v, ncap * sizeof(*nv));

			if (!nv)
				break;
			pm->v = nv;
			vcap = ncap;
		}
		e = &pm->v[pm->n];
		e->name = strdup(p);
		if (!e->name)
			break;
		e->start = start;
		e->end = start + size;
		e->seq = seq++;
		pm->n++;
	}
	free(line);
	fclose(f);
	qsort(pm->v, pm->n, sizeof(*pm->v), cmp_perf);
}

const char *perf_map_lookup(struct perf_map **pmp, pid_t pid, uint64_t addr,
			    uint64_t *offset)
{
	struct perf_map *pm = *pmp;
	const struct perf_map_entry *best = NULL;
	size_t lo = 0, hi;

	if (pid <= 0)
		return NULL;
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm)
			return NULL;
		*pmp = pm;
	}
	perf_map_refresh(pm, pid);
	hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries may overlap (re-jitted code): the latest line that covers
	 * addr, among the few entries just before it. */
	for (size_t i = lo, k = 0; i > 0 && k < OVERLAP_LOOKBACK; i--, k++) {
		const struct perf_map_entry *e = &pm->v[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return NULL;
	if (offset)
		*offset = addr - best->start;
	return best->name;
}

void perf_map_free(struct perf_map *pm)
{
	if (!pm)
		return;
	perf_map_clear(pm);
	for (size_t i = 0; i < pm->nretired; i++)
		free(pm->retired[i]);
	free(pm->retired);
	free(pm);
}
