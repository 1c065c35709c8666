/* unwind/target.h - the target object inside unwind/: struct
 * unwind_target, its lifetime rules (who owns what, and until when), the
 * mappings it hands out, its interned names, the engines' states it holds
 * and its architecture.  Defined in unwind/target.c (what the files
 * below its owner use), unwind/target-open.c (its life; and
 * unwind/core-target.c for core files), unwind/symbolize.c (interned
 * names), unwind/name-pool.c (the pools they are in) and
 * unwind/source.c (its DWARF handles).
 *
 * Private to unwind/ (and its unit tests); the public face is unwind/unwind.h.
 */
#ifndef STACKSPY_UNWIND_TARGET_H
#define STACKSPY_UNWIND_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/unwind.h"


struct arch;
struct core_file;
struct perf_map;
struct unwinder;

/* Who owns what (the public side is in unwind.h):
 *
 * - The target owns its memory map (maps), the ELF images (elves, which
 *   outlive any map: a mapping's image pointer stays valid until
 *   unwind_target_free), the vdso copy, the perf map, the DWARF handles and
 *   the interned module names.
 * - A struct mapping (from unwind_target_mapping or unwind_module_map_find on
 *   t->maps) is an element of the current map array.  A reload (a lookup
 *   that misses, at most ten times a second, or unwind_target_reload_maps)
 *   replaces that array; while a public call is running (t->busy > 0) the
 *   old array is only retired and is freed when the outermost public call
 *   returns.  So a mapping pointer is valid until the public call that
 *   obtained it returns, and never beyond: keep values, not the pointer,
 *   across calls.  Every public entry point that can reach
 *   unwind_target_mapping brackets its work with unwind_target_enter/leave.
 */

/* Replaced mappings a target remembers (struct unwind_target's past). */
#define UNWIND_PAST_MAPS 8

/* The engines' per-target states (struct unwinder's slot). */
enum unwind_state_slot {
	UNWIND_STATE_CFI,         /* engine-dwarf.c: cfi and auto */
	UNWIND_STATE_SLOTS,
};
struct name_pool;
struct py_state;
struct stack_snapshot;

/* A target's CPython state, freed with it (python.c). */
void unwind_py_state_free(struct py_state *st);
/* Bumped when a code object cached by address was found to be another:
 * part of unwind_target_generation (python.c). */
unsigned unwind_py_generation(const struct py_state *st);

struct unwind_target {
	pid_t pid;                /* the process (target-open.c's ops read it);
				     a core's is in core */
	struct module_map maps;
	struct module_map *retired;  /* replaced while busy, freed at leave */
	size_t nretired, retired_cap;
	unsigned busy;            /* depth of public calls running on t */
	struct elf_cache elves;
	struct elf_image *vdso;   /* copy taken at open, or NULL */
	uint64_t vdso_start, vdso_end;
	void *state[UNWIND_STATE_SLOTS];  /* the engines' own (struct unwinder's
				     init/flush/fini): cfi's walks kept */
	const struct unwinder *state_owner[UNWIND_STATE_SLOTS];  /* whose
				     hooks made each (unwind_state_owners,
				     at init) */
	uint64_t maps_loaded_ns;  /* CLOCK_MONOTONIC of the last reload */
	bool map_files_denied;    /* /proc/PID/map_files cannot be read */
	struct mapping *last_map; /* last lookup's answer: reads come in runs */
	/* Executable mappings of files a reload of the map replaced, the
	 * last UNWIND_PAST_MAPS (path interned; the image stays in elves):
	 * where a swapped library's code may still be found. */
	struct mapping past[UNWIND_PAST_MAPS];
	unsigned npast;           /* pushed so far (past[npast % N] next) */
	/* During unwind_walk: the range where the code at the stop is not
	 * the map's (unwind_target_code_at_stop), looked up as at_stop (the
	 * past mapping it was found in) or, without one, as unmapped; never
	 * read live.  at_stop stays until the next walk, for
	 * unwind_symbolize_swapped. */
	uint64_t swapped_start, swapped_end;
	struct mapping at_stop;
	bool at_stop_found;
	struct perf_map *perf_map; /* /tmp/perf-PID.map, loaded on first use */
	uint64_t perf_map_miss_ns; /* when it last named nothing, or 0 */
	unsigned generation;      /* bumped by every maps reload */
	const struct target_ops *ops;  /* a live process's or a core's: the
				     only place the two differ */
	struct core_file *core;   /* core-file target (pid 0), else NULL:
				     core-target.c's alone */
	const struct arch *arch;  /* NULL: arch_host() */
	uint64_t pac_mask;        /* the kernel's pointer-authentication
				     mask: a core's, else from a snapshot
				     (unwind_walk); 0: not known */
	bool pac_mask_fixed;      /* the core's: snapshots do not change it */
	struct source_cache *source;  /* DWARF per image (source.c), or NULL */
	struct name_pool *names;  /* module paths handed out (symbolize.c) */
	struct unwind_dropped dropped;  /* perf_map_lines is perf_map's */
	struct py_state *python;  /* its CPython, once looked for (python.c) */
};

/* What differs between a live process (target-open.c) and a core file
 * (core-target.c), asked through these and never by testing which one a
 * target is (elfutils' libdwfl reads a process or a core the same way,
 * through Dwfl_Thread_Callbacks). */
struct target_ops {
	/* Memory the target holds itself, read before its files (a core's
	 * dumped segments: relocated GOTs, heap, stacks).  0, or -EFAULT
	 * where it has none. */
	int (*read_own)(struct unwind_target *t, uint64_t addr, void *buf, size_t len);
	/* Memory read from the running process, after its files (heap, JIT
	 * code, a writable mapping).  0, or -EFAULT (a core has none). */
	int (*read_live)(struct unwind_target *t, uint64_t addr, void *buf, size_t len);
	/* What the target owns besides the common parts, freed with it. */
	void (*release)(struct unwind_target *t);
	/* The mappings as they are now, into *out (0 or -errno).  NULL where
	 * they never change (a core): its map is read once, at open. */
	int (*read_maps)(struct unwind_target *t, struct module_map *out);
	/* Whether m still maps the file it was read with: 1 yes, 0 no (read
	 * the map again), -EPERM when that cannot be told.  NULL with
	 * read_maps. */
	int (*mapping_same)(struct unwind_target *t, const struct mapping *m);
	/* m's ELF image, opened (through the target's root) and cached in
	 * t->elves, or NULL with *err.  NULL where every mapping's image is
	 * found at open (a core: core-target.c). */
	struct elf_image *(*open_image)(struct unwind_target *t, const struct mapping *m,
					int *err);
	/* The JIT's name for addr and its offset (the perf map,
	 * /tmp/perf-PID.map), or NULL.  NULL where there is none. */
	const char *(*jit_name)(struct unwind_target *t, uint64_t addr, uint64_t *offset);
};

/* A public call starts / ends on t: see "Who owns what" above. */
void unwind_target_enter(struct unwind_target *t);
void unwind_target_leave(struct unwind_target *t);

/* Set t's swapped range for a walk of snapshot s (its pc): when the code
 * at the pc, as it was just after the stop, is neither in the file mapped there nor in
 * the process's memory now (a library swapped at the same address
 * since), the range of that mapping, with the past mapping (t->past)
 * whose file holds that code if there is one.  Code patched in memory (a
 * breakpoint, a hook) is still there: no range.  Returns whether a range
 * was set. */
bool unwind_target_code_at_stop(struct unwind_target *t, const struct stack_snapshot *s,
				uint64_t pc);

/* The mapping containing addr with its image and bias resolved (image may be
 * NULL for anonymous memory).  NULL if addr is unmapped.  Valid until the
 * public call running on t returns. */
struct mapping *unwind_target_mapping(struct unwind_target *t, uint64_t addr);

/* A copy of s that lives as long as t (module names outlive map reloads).
 * NULL on allocation failure or past UNWIND_MAX_MODULE_NAME_BYTES (counted
 * in t->dropped.module_names). */
const char *unwind_target_intern(struct unwind_target *t, const char *s);

/* A set of strings, created on first use in *p: the pooled copy of s,
 * added if it is new and the strings' sizes stay within max_bytes.  NULL
 * when out of memory or over max_bytes.  The copies live until
 * unwind_name_pool_free (name-pool.c). */
const char *unwind_name_pool_intern(struct name_pool **p, const char *s, size_t max_bytes);
/* The sizes of the strings in p (0 for NULL). */
size_t unwind_name_pool_bytes(const struct name_pool *p);
void unwind_name_pool_free(struct name_pool *p);

/* ---- source positions (source.c) ----------------------------------------- */

struct source_cache;

#ifdef HAVE_LIBDW
/* Close the DWARF handles of unwind_source(); before the images go. */
void unwind_source_cache_free(struct source_cache *c);
#else
static inline void unwind_source_cache_free(struct source_cache *c) { (void)c; }
#endif

/* ---- the target's architecture (target.c) ------------------------------- */

/* The arch/ table of the target: from e_machine/EI_CLASS/EI_DATA for a
 * core file (what lets a MIPS core be unwound on an x86-64 host), else the
 * host's.  NULL when stackspy has no table for it: every engine is then
 * unavailable, with ARCH_UNSUPPORTED_REASON. */
const struct arch *unwind_target_arch(struct unwind_target *t);

/* The bits of a return address that are not address (pointer
 * authentication on aarch64), cleared before it is used: a core's
 * NT_ARM_PAC_MASK note (its insn_mask) when it has one, a live process's
 * NT_ARM_PAC_MASK regset as a stop read it, else the arch/
 * table's conservative mask (every bit above the 48-bit user address
 * space).  0 where there are none. */
uint64_t unwind_target_ra_mask(struct unwind_target *t);

/* Every engine's state of t made (after its map is read: target-open.c),
 * flushed (target.c, at a reload), freed (target-open.c); the target's
 * owner (target-open.c, core-target.c) calls these, never an engine's
 * own functions. */
void unwind_target_state_init(struct unwind_target *t);
void unwind_target_state_flush(struct unwind_target *t);
void unwind_target_state_fini(struct unwind_target *t);

#endif
