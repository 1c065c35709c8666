/* unwind/maps.h - the memory map of a target (one struct mapping per line
 * of /proc/PID/maps) and the one binary search of every table of address
 * ranges.  Defined in unwind/maps.c, the lowest file of unwind/ (it calls
 * only base/).
 *
 * Private to unwind/ (and its unit tests).  A struct mapping handed out by a
 * target is valid only as long as unwind/target.h says.
 */
#ifndef STACKSPY_UNWIND_MAPS_H
#define STACKSPY_UNWIND_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#define MAPPING_R 0x1
#define MAPPING_W 0x2
#define MAPPING_X 0x4

struct elf_image;

/* One line of /proc/PID/maps. */
struct mapping {
	uint64_t start, end;      /* [start, end) */
	uint64_t offset;          /* file offset of start */
	dev_t dev;                /* makedev(major, minor) of the maps line */
	ino_t inode;
	unsigned perms;           /* MAPPING_R|W|X */
	char *path;               /* NULL for anonymous; "[vdso]", "[stack]"... */
	bool deleted;             /* path ended in " (deleted)" (stripped here) */
	/* Filled lazily by target.c: */
	struct elf_image *image;  /* NULL if not an ELF file or not openable */
	bool image_tried;
	bool bias_known;
	uint64_t bias;            /* runtime address = ELF vaddr + bias */
	uint64_t checked;         /* the epoch it was last found still the
				     same file (unwind_target_maps_current) */
	unsigned char go;         /* its image is a Go binary's: 1 yes, 2 no,
				     0 not asked yet (go-stack.c) */
};

/* Code generated at run time (a JIT's, a JVM's interpreter, qemu's
 * translated blocks): executable memory of no ELF image, anonymous
 * ("[anon:...]" names it) or a file that is none (a JIT's memfd), but not
 * the kernel's [vdso] and the like. */
static inline bool
unwind_mapping_generated(const struct mapping *m)
{
	return !m->image && !(m->path && m->path[0] == '[' && strncmp(m->path, "[anon", 5) != 0);
}

struct module_map {
	struct mapping *v;        /* sorted by start, non-overlapping */
	size_t n;
};

/* Parse /proc/PID/maps.  Returns 0 or -errno (-ESRCH if the process is gone). */
int unwind_module_map_read(pid_t pid, struct module_map *out);
/* Parse maps text (for tests and core files). Returns 0 or -EINVAL. */
int unwind_module_map_parse(const char *text, struct module_map *out);
void unwind_module_map_free(struct module_map *m);
/* Binary search; NULL if addr is in no mapping. */
struct mapping *unwind_module_map_find(const struct module_map *m, uint64_t addr);

/* In v, n elements of stride bytes sorted by the uint64_t start at byte
 * offset start_off, how many start at or below addr (so the candidate that
 * may hold addr is element count - 1): the one binary search of every
 * table of address ranges (maps, symbols, perf maps, core segments). */
size_t unwind_spans_upto(const void *v, size_t n, size_t stride, size_t start_off, uint64_t addr);

/* Do [off, off + len) lie inside size bytes?  Overflow-safe: off and len
 * come from files we do not trust. */
static inline bool
span_inside(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

#endif
