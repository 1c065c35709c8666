/* unwind/target-open.c - a target's life: opened (its map read, the
 * vdso copied, the engines' states made) and freed with everything built
 * on it (the engines' states, the perf map, the names, the DWARF handles,
 * the images), and the counts it keeps of what it dropped.  Above every
 * file it frees; nothing in unwind/ but core-target.c calls it (the
 * low part of the target, which they all use, is target.c). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptrace/procfs.h"
#include "unwind/elf-image.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/perf-map.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

/* Copy the vdso now: it is the same for the life of the process, and its
 * code and unwind tables are needed for every clock_gettime sample. */
static void
copy_vdso(struct unwind_target *t)
{
	for (size_t i = 0; i < t->maps.n; i++) {
		struct mapping *m = &t->maps.v[i];
		if (!m->path || strcmp(m->path, "[vdso]") != 0)
			continue;
		size_t len = (size_t)(m->end - m->start);
		void *buf = malloc(len);
		if (!buf)
			return;
		if (t->ops->read_live(t, m->start, buf, len) < 0) {
			free(buf);
			return;
		}
		t->vdso = unwind_elf_image_from_memory(&t->elves, buf, len, "[vdso]");
		if (t->vdso) {
			t->vdso_start = m->start;
			t->vdso_end = m->end;
		}
		return;
	}
}

/* A live process: its memory as it is now (ptrace/procfs.c's reader). */
static int
live_read(struct unwind_target *t, uint64_t addr, void *buf, size_t len)
{
	return ptrace_read_memory(t->pid, addr, buf, len);
}

static int
live_read_maps(struct unwind_target *t, struct module_map *out)
{
	return unwind_module_map_read(t->pid, out);
}

/* /proc/PID/map_files names the file mapped there now: the same inode is
 * the same file. */
static int
live_mapping_same(struct unwind_target *t, const struct mapping *m)
{
	char path[96];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)t->pid, m->start, m->end);
	if (stat(path, &st) == 0)
		return st.st_ino == m->inode;
	return errno == EPERM || errno == EACCES ? -EPERM : 0;
}

static struct elf_image *
live_open_image(struct unwind_target *t, const struct mapping *m, int *err)
{
	return unwind_elf_cache_get(&t->elves, t->pid, m, err);
}

static const char *
live_jit_name(struct unwind_target *t, uint64_t addr, uint64_t *offset)
{
	return unwind_perf_map_lookup(&t->perf_map, t->pid, addr, offset);
}

static const struct target_ops live_ops = {
	.read_live = live_read,
	.read_maps = live_read_maps,
	.mapping_same = live_mapping_same,
	.open_image = live_open_image,
	.jit_name = live_jit_name,
};

struct unwind_target *
unwind_target_open(pid_t pid, int *err)
{
	struct unwind_target *t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->pid = pid;
	t->ops = &live_ops;
	int r = unwind_module_map_read(pid, &t->maps);
	if (r < 0) {
		free(t);
		*err = r;
		return NULL;
	}
	copy_vdso(t);
	unwind_target_state_init(t);
	return t;
}

void
unwind_target_free(struct unwind_target *t)
{
	if (!t)
		return;
	unwind_target_state_fini(t);
	unwind_perf_map_free(t->perf_map);
	unwind_py_state_free(t->python);
	unwind_name_pool_free(t->names);
	/* libdw reads the images' mmaps: close it before they are unmapped. */
	unwind_source_cache_free(t->source);
	unwind_module_map_free(&t->maps);
	for (size_t i = 0; i < t->nretired; i++)
		unwind_module_map_free(&t->retired[i]);
	free(t->retired);
	unwind_elf_cache_free(&t->elves);
	if (t->ops && t->ops->release)
		t->ops->release(t);
	free(t);
}

/* Each slot's state is made by its owner's init and recorded with it in
 * the target (state_owner), so that target.c's reload of the map
 * flushes it without naming an engine: the engines call target.c. */
const struct unwinder *const unwind_state_owners[UNWIND_STATE_SLOTS] = {
	[UNWIND_STATE_CFI] = &unwinder_cfi,
};

void
unwind_target_state_init(struct unwind_target *t)
{
	for (int i = 0; i < UNWIND_STATE_SLOTS; i++) {
		const struct unwinder *u = unwind_state_owners[i];
		t->state_owner[i] = u;
		t->state[i] = u && u->init ? u->init(t) : NULL;
	}
}

void
unwind_target_state_fini(struct unwind_target *t)
{
	for (int i = 0; i < UNWIND_STATE_SLOTS; i++) {
		const struct unwinder *u = t->state_owner[i];
		if (u && u->fini && t->state[i])
			u->fini(t->state[i]);
		t->state[i] = NULL;
	}
}

void
unwind_target_dropped(const struct unwind_target *t, struct unwind_dropped *out)
{
	struct perf_map_usage u;

	*out = t->dropped;
	unwind_perf_map_usage(t->perf_map, &u);
	out->perf_map_lines = u.dropped;
	out->perf_map_bad = u.bad;
	out->perf_map_unread = u.unread;
	out->perf_map_refused = u.refused;
	out->perf_map_owner = u.refused_uid;
}

unsigned
unwind_target_generation(const struct unwind_target *t)
{
	/* All only grow: the sum changes when one does. */
	return t->generation + unwind_perf_map_generation(t->perf_map) +
	       unwind_py_generation(t->python);
}
