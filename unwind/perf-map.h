/* unwind/perf-map.h - names of JIT code from the target's
 * /tmp/perf-PID.map (perf's format), read with caps.  Defined in
 * unwind/perf-map.c.
 *
 * Private to unwind/ (and its unit tests); the target holds one (symbolize.c).
 */
#ifndef STACKSPY_UNWIND_PERF_MAP_H
#define STACKSPY_UNWIND_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct perf_map;

/* Name of JIT code at addr from the target's /tmp/perf-PID.map (perf's
 * format, PID as the target sees itself), read inside its root on first
 * use, then only what was appended since (read whole again when the file
 * was replaced, shrank or was rewritten); a later line replaces the older
 * entries it overlaps.  Only whole lines count (a JIT writes them whole).
 * *pm is created here, with the caps of unwind.h.  NULL when no line
 * covers addr.  The string belongs to *pm and stays valid until
 * unwind_perf_map_free(). */
const char *unwind_perf_map_lookup(struct perf_map **pm, pid_t pid, uint64_t addr,
			    uint64_t *offset);
/* The same from what was read already, without looking at the file. */
const char *unwind_perf_map_find(const struct perf_map *pm, uint64_t addr, uint64_t *offset);
/* Other caps than unwind.h's, and read_max: the bytes read at one lookup
 * at most (default 256 bytes an entry of the cap; the rest at the next
 * ones, here without a pause between them), for tests; *pm is created
 * here. */
void unwind_perf_map_set_limits(struct perf_map **pm, size_t max_entries,
			 size_t max_name_bytes, size_t read_max);

struct perf_map_usage {
	size_t entries;           /* kept now */
	size_t name_bytes;        /* distinct names kept */
	uint64_t dropped;         /* lines left out at the caps */
	uint64_t bad;             /* lines not in perf's format, or too long */
	uint64_t unread;          /* bytes a look left for the next ones */
	const char *refused;      /* why the file there now was not read (a
				     static string), NULL: read or absent */
	long refused_uid;         /* the owner of the file refused */
};
/* pm may be NULL (all zero). */
void unwind_perf_map_usage(const struct perf_map *pm, struct perf_map_usage *u);
/* Changes when a look goes on reading where an earlier one stopped at its
 * bounds: an address found in no line then may be named now, so names
 * cached by address must be dropped (unwind_target_generation()). */
unsigned unwind_perf_map_generation(const struct perf_map *pm);
void unwind_perf_map_free(struct perf_map *pm);

#endif
