/* unwind/symtab.c - function names for addresses of one ELF image.
 *
 * The table is built on the first lookup in an image (most mapped libraries
 * are never hit by a sample) and then binary searched.  Its sources, in
 * order: the image's .symtab, a separate debug file (debug-file.c), the
 * MiniDebugInfo (minidebuginfo.c), .dynsym with Go's .gopclntab
 * (gopclntab.c); then the PLT stubs (plt.c).  Each adds to the table
 * being built in sym-build.c (which reads .symtab and .dynsym, and
 * sorts); this file calls them in order and finishes it.  Names point into the
 * string table of the mmap'd file (or of the separate debug file, which the
 * table keeps mapped), so a table is a compact index over the mapped file:
 * 24 bytes a function, the file's pages dropped as they are read.
 * Demangled forms are computed when first asked for and kept aside, so the
 * pointer returned stays valid until the image is freed.
 *
 * The files are the target's (issue 32: a library of 20M symbols): a
 * table holds at most a module's budget of functions, the run's tables
 * together at most the run's (unwind/budget.h), and a build takes at most
 * SYMTAB_BUILD_NS.  A table over one is dropped, said once naming the
 * file, and the module's other sources tried (.dynsym); frames nothing
 * names are shown by module and offset (tests/security-symbols.test).
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "ptrace/clock.h"
#include "unwind/budget.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/sym-build.h"
#include "unwind/symbols.h"
#include "unwind/unwind.h"
#include "unwind/x86-code.h"
#include "unwind/yield.h"

/* A nested symbol (a size-0 label inside a sized function, a cold part
 * placed inside its parent) hides the enclosing one from the plain "greatest
 * start <= vaddr" search; look this far back for an enclosing symbol. */
#define ENCLOSING_LOOKBACK 16

/* How long a module's table may take to build (the entries read, the
 * sort): record's unwinder must name its samples within its 5 s watchdog,
 * and a dump has its deadline. */
#define SYMTAB_BUILD_NS (2 * NS_PER_SEC)
/* Builds that ran out of their time draw on the run's bank of this much,
 * which refills at a tenth of the time that passes: one stack through
 * many hostile libraries must not hold the unwinder past record's
 * watchdog.  An empty bank leaves a build SYMTAB_BUILD_MIN_NS (a table
 * of some 500,000 functions here); tables that fit in their time never
 * draw on it. */
#define SYMTAB_BANK_NS      (3 * NS_PER_SEC)
#define SYMTAB_BUILD_MIN_NS (250 * NS_PER_MS)

#define SYM_DEM_TRIED    0x1
#define SYM_DEM_NP_TRIED 0x2

/* The names made for the symbols looked up: few, so kept aside (by the
 * symbol's position) rather than in every entry. */
struct sym_names {
	char *unversioned;        /* name without "@VERSION"/"@@VERSION", if it had one */
	char *demangled;          /* with parameters, NULL if not mangled */
	char *demangled_noparams;
	unsigned tried;           /* SYM_DEM_* */
};

struct symtab {
	struct sym *v;
	size_t n;
	uint64_t charged;         /* bytes taken from the run's budget */
	struct base_map made;     /* position in v -> position in names */
	struct sym_names *names;
	size_t nnames, names_cap;
	/* Holds the separate debug file the names came from, if any. */
	struct elf_cache debug;
	/* The decompressed .gnu_debugdata (MiniDebugInfo), if names come
	 * from it; malloc'd. */
	unsigned char *minidebug;
	size_t minidebug_len;     /* charged too */
	/* Names of synthesized "func@plt" symbols; malloc'd, one block. */
	char *plt_names;
	size_t plt_names_len;     /* charged too */
};

/* Size-0 symbols whose reach is read from the code, per table (each
 * read decodes up to 8,192 instructions: a hostile file of millions of
 * them must not hold the build), within the build's time; the others
 * keep their reach to the next symbol. */
#define SYMTAB_REACH_MAX 4096u

/* How far the function at vaddr, a symbol without a size that may reach
 * up to end, reaches in img's code: on x86-64, what its branches reach
 * (musl's memset, of size 0, is followed by functions that are hidden:
 * a pc in them is not memset's); elsewhere, or when that is not known,
 * end. */
static uint64_t code_reach(const struct elf_image *img, uint64_t vaddr, uint64_t end)
{
	if (!img || img->size <= 0x13 || img->data[EI_CLASS] != ELFCLASS64 ||
	    img->data[EI_DATA] != ELFDATA2LSB ||
	    (img->data[0x12] | (unsigned)img->data[0x13] << 8) != EM_X86_64)
		return end;
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *sg = &img->segs[i];
		if (!(sg->flags & PF_X) || vaddr < sg->vaddr || vaddr - sg->vaddr >= sg->filesz ||
		    !span_inside(img->size, sg->offset, sg->filesz))
			continue;
		uint64_t off = vaddr - sg->vaddr, avail = sg->filesz - off;
		uint64_t reach = end - vaddr;
		if (avail > reach + 16)
			avail = reach + 16;
		if (reach > avail)
			reach = avail;
		uint64_t r = unwind_x86_code_reach(img->data + sg->offset + off, (size_t)avail,
						   reach, vaddr);
		return r ? vaddr + r : end;
	}
	return end;
}

/* Sort, pick one name per address and compute each symbol's end into
 * st (size-0 ones from the code of img, the image looked up, NULL for
 * none).  0, -E2BIG (out of time: b->over) or -ENOMEM. */
static int finish(struct symtab *st, struct sym_build *b, const struct elf_image *img)
{
	struct sym *v = b->v;
	size_t n = b->n, k = 0;
	unsigned depth = 0;

	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	if (n > 0 && !unwind_symtab_sort(b, v, n, depth))
		return -E2BIG;

	/* Aliases: the first of a run of equal starts is the preferred name;
	 * if it has no size, borrow the largest size of its aliases. */
	for (size_t i = 0; i < n; ) {
		size_t j = i + 1;

		while (j < n && v[j].start == v[i].start) {
			if ((v[i].info & SYM_REACH) && !(v[j].info & SYM_REACH)) {
				v[i].len = v[j].len;
				v[i].info &= ~SYM_REACH;
			} else if ((v[i].info & SYM_REACH) && v[i].len == 0) {
				v[i].len = v[j].len;
			}
			j++;
		}
		v[k++] = v[i];
		i = j;
	}
	unsigned refined = 0;
	uint64_t covered = 0;     /* the end of the sized symbols so far */
	size_t kept = 0;
	for (size_t i = 0; i < k; i++) {
		struct sym *s = &v[i];
		uint64_t end;

		/* A label without a size inside a function whose size is
		 * known (qemu's safe_syscall_end, right after the syscall
		 * in safe_syscall_base) names no code: the function does. */
		if ((s->info & SYM_REACH) && s->start < covered)
			continue;
		if (!(s->info & SYM_REACH)) {
			end = s->start + s->len;
			if (end < s->start)
				end = UINT64_MAX;
		} else {
			/* Hand-written assembly often has no .size: it covers
			 * up to the next function, within its section. */
			end = i + 1 < k ? v[i + 1].start : UINT64_MAX;
			uint64_t sec_end = s->len ? s->start + s->len : 0;
			if (sec_end > s->start && sec_end < end)
				end = sec_end;
			if (end == UINT64_MAX)
				end = s->start + 1;
			else if (end - s->start > 1 && refined < SYMTAB_REACH_MAX &&
				 ptrace_clock_monotonic_ns() <= b->deadline) {
				end = code_reach(img, s->start, end);
				refined++;
			}
		}
		if (!(s->info & SYM_REACH) && end > covered)
			covered = end;
		s->len = end - s->start > UINT32_MAX ? UINT32_MAX : (uint32_t)(end - s->start);
		s->info = 0;
		v[kept++] = *s;
	}
	k = kept;
	/* What the aliases and the growth left unused goes back. */
	if (k < b->cap) {
		struct sym *nv = k ? realloc(v, k * sizeof(*v)) : NULL;
		if (nv || k == 0) {
			if (k == 0)
				free(v);
			uint64_t back = (uint64_t)(b->cap - k) * sizeof(*v);
			unwind_budget_give(UNWIND_BUDGET_SYMBOLS, back);
			b->charged -= back;
			v = nv;
			b->cap = k;
		}
	}
	st->v = v;
	st->n = k;
	st->charged += b->charged;
	b->v = NULL;
	b->n = b->cap = 0;
	b->charged = 0;
	return 0;
}

/* The run's bank of time for builds that run out of theirs (under the
 * image lock, as builds are). */
static uint64_t bank_ns = SYMTAB_BANK_NS, bank_at;

/* The time a build starting now may take: SYMTAB_BUILD_NS, less when the
 * bank is low. */
static uint64_t build_time(uint64_t now)
{
	if (bank_at)
		bank_ns += (now - bank_at) / 10;
	if (bank_ns > SYMTAB_BANK_NS)
		bank_ns = SYMTAB_BANK_NS;
	bank_at = now;
	uint64_t t = bank_ns < SYMTAB_BUILD_NS ? bank_ns : SYMTAB_BUILD_NS;
	return t < SYMTAB_BUILD_MIN_NS ? SYMTAB_BUILD_MIN_NS : t;
}

/* A build ran out of its time (started at started): drawn from the bank. */
static void bank_draw(uint64_t started)
{
	uint64_t spent = ptrace_clock_monotonic_ns() - started;
	bank_ns = spent < bank_ns ? bank_ns - spent : 0;
}

/* Drop what b collected (a table over a budget). */
static void build_drop(struct sym_build *b)
{
	free(b->v);
	unwind_budget_give(UNWIND_BUDGET_SYMBOLS, b->charged);
	b->v = NULL;
	b->n = b->cap = 0;
	b->nstrs = 0;
	b->charged = 0;
}

/* Say why the table of path (a module or its debug file) was not taken,
 * and start b again for the next source of names. */
static void note_over(struct sym_build *b, const char *path, const char *what)
{
	char sz[32];

	switch (b->over) {
	case SYM_OVER_MODULE:
		unwind_note_skipped(path, "not read: its %s holds more than the %llu functions "
				    "a module may have; frames there are named from what else it "
				    "has, or by module and offset", what,
				    (unsigned long long)b->max_funcs);
		break;
	case SYM_OVER_RUN:
		unwind_note_skipped(path, "not read: the symbol tables of this run hold their "
				    "limit (%s); frames there are named from what else it has, or "
				    "by module and offset",
				    unwind_size_text(unwind_budget_limit(UNWIND_BUDGET_SYMBOLS),
						     sz, sizeof(sz)));
		break;
	case SYM_OVER_TIME:
		unwind_note_skipped(path, "not read: its %s was not indexed within %llu ms; frames "
				    "there are named from what else it has, or by module and offset",
				    what, (unsigned long long)((b->deadline - b->started) / NS_PER_MS));
		bank_draw(b->started);
		b->started = ptrace_clock_monotonic_ns();
		break;
	case SYM_FITS:
		break;
	}
	build_drop(b);
	b->over = SYM_FITS;
}

struct symtab_take {
	struct symtab *st;
	struct sym_build *b;
};

/* A debug file's .symtab, when it has one: the file then stays mapped in
 * st->debug (the names point into it). */
static long symtab_take_debug(void *arg, struct elf_cache *file,
			      struct elf_image *dbg)
{
	struct symtab_take *a = arg;
	long added = unwind_symtab_collect(a->b, dbg, dbg->data, dbg->size, SHT_SYMTAB);

	if (added == -E2BIG) {
		/* The next candidate, and the module's other sources. */
		note_over(a->b, dbg->path, "symbol table");
		return 0;
	}
	if (added > 0)
		a->st->debug = *file;
	return added;
}

/* MiniDebugInfo (Fedora, and others since): .gnu_debugdata is an xz-packed
 * ELF file whose .symtab holds the functions that are not in .dynsym, so
 * both are taken.  Returns the number added (0 without one), -E2BIG or
 * -ENOMEM. */
static long from_minidebuginfo(struct symtab *st, const struct elf_image *img,
			       struct sym_build *b)
{
	unsigned char *mini;
	size_t len;
	long added, dyn;

	len = unwind_minidebuginfo_read(img, &mini);
	if (len == 0)
		return 0;
	/* Kept while the table is: the run's symbol budget holds it. */
	if (!unwind_budget_take(UNWIND_BUDGET_SYMBOLS, len)) {
		free(mini);
		b->over = SYM_OVER_RUN;
		return -E2BIG;
	}
	added = unwind_symtab_collect(b, NULL, mini, len, SHT_SYMTAB);
	if (added <= 0) {
		free(mini);
		unwind_budget_give(UNWIND_BUDGET_SYMBOLS, len);
		return added;
	}
	st->minidebug = mini;
	st->minidebug_len = len;
	dyn = unwind_symtab_collect(b, img, img->data, img->size, SHT_DYNSYM);
	return dyn < 0 ? dyn : added + dyn;
}

/* One source of names: unwind_symtab_collect's answer, a table over a budget said (for
 * path) and dropped as if there were none. */
static long source_done(struct sym_build *b, long added, const char *path, const char *what)
{
	if (added != -E2BIG)
		return added;
	note_over(b, path, what);
	return 0;
}

/* Collect the functions of img into b, from its sources in order (with
 * all false: only .dynsym, .gopclntab and the PLT, the sources of a
 * second try).  Returns the number added, or -E2BIG (the time is up:
 * b->over) or -ENOMEM. */
static long names_from(struct symtab *st, struct elf_image *img, struct sym_build *b, bool all)
{
	long added = 0;

	if (all) {
		/* .symtab is a superset of .dynsym: no need to merge them. */
		added = unwind_symtab_collect(b, img, img->data, img->size, SHT_SYMTAB);
		added = source_done(b, added, img->path, ".symtab");
		if (added == 0) {
			struct symtab_take a = { st, b };

			added = unwind_elf_debug_file_search(img, symtab_take_debug, &a);
		}
		if (added == 0) {
			added = from_minidebuginfo(st, img, b);
			added = source_done(b, added, img->path, "MiniDebugInfo");
			if (added == 0 && st->minidebug) {
				free(st->minidebug);
				unwind_budget_give(UNWIND_BUDGET_SYMBOLS, st->minidebug_len);
				st->minidebug = NULL;
				st->minidebug_len = 0;
			}
		}
	}
	if (added == 0) {
		added = unwind_symtab_collect(b, img, img->data, img->size, SHT_DYNSYM);
		added = source_done(b, added, img->path, ".dynsym");
		/* A stripped Go binary still has the runtime's own table. */
		if (added >= 0) {
			long go = unwind_gopclntab_symbols(img, b);

			go = source_done(b, go, img->path, ".gopclntab");
			added = go < 0 ? go : added + go;
		}
	}
	/* The PLT lives in the running file, not in a debug file. */
	if (added >= 0) {
		long plt = unwind_plt_symbols(img, b, &st->plt_names, &st->plt_names_len);

		/* Over a budget here, the functions found so far are kept
		 * without the stubs. */
		if (plt == -E2BIG && b->over != SYM_OVER_TIME) {
			b->over = SYM_FITS;
			plt = 0;
		}
		added = plt < 0 ? plt : added + plt;
	}
	return added;
}

/* What st keeps for its names, given back (a table dropped). */
static void drop_sources(struct symtab *st)
{
	free(st->minidebug);
	free(st->plt_names);
	unwind_budget_give(UNWIND_BUDGET_SYMBOLS, st->minidebug_len + st->plt_names_len);
	st->minidebug = NULL;
	st->plt_names = NULL;
	st->minidebug_len = st->plt_names_len = 0;
	unwind_elf_cache_free(&st->debug);
}

/* NULL only when out of memory; an image without symbols (or whose
 * tables are over their budgets) gets an empty table, so that it is not
 * searched again. */
static struct symtab *symtab_build(struct elf_image *img)
{
	struct symtab *st = calloc(1, sizeof(*st));
	uint64_t now = ptrace_clock_monotonic_ns(), time = build_time(now);
	struct sym_build b = {
		.max_funcs = unwind_budget_module_funcs(),
		.started = now,
		.deadline = now + time,
	};

	if (!st)
		return NULL;
	for (int all = 1; all >= 0; all--) {
		long added = names_from(st, img, &b, all);

		if (added >= 0 && finish(st, &b, img) == 0)
			return st;
		if (b.over != SYM_OVER_TIME)
			break;
		/* Out of time (a table of millions, or of aliases that only
		 * their names tell apart): said, and the module's small
		 * tables tried in a quarter of the time; then an empty
		 * table. */
		note_over(&b, img->path, "symbol table");
		drop_sources(st);
		if (!all)
			return st;
		b.started = ptrace_clock_monotonic_ns();
		b.deadline = b.started + time / 4;
	}
	build_drop(&b);
	unwind_symtab_free(st);
	return NULL;
}

static const struct sym *find(const struct symtab *st, uint64_t vaddr)
{
	size_t lo = unwind_spans_upto(st->v, st->n, sizeof(*st->v),
				      offsetof(struct sym, start), vaddr);
	for (size_t i = lo, k = 0; i > 0 && k < ENCLOSING_LOOKBACK; i--, k++) {
		if (vaddr - st->v[i - 1].start < st->v[i - 1].len)
			return &st->v[i - 1];
	}
	return NULL;
}

/* The names made for symbol s of st, made on first use; NULL when out of
 * memory. */
static struct sym_names *names_of(struct symtab *st, const struct sym *s)
{
	uint64_t key = (uint64_t)(s - st->v);
	uint32_t at;

	if (base_map_get(&st->made, key, &at))
		return &st->names[at];
	if (BASE_GROW(st->names, st->names_cap, st->nnames + 1, 16) < 0 ||
	    base_map_put(&st->made, key, (uint32_t)st->nnames) < 0)
		return NULL;
	memset(&st->names[st->nnames], 0, sizeof(st->names[0]));
	return &st->names[st->nnames++];
}

static const char *lookup_locked(struct elf_image *img, uint64_t vaddr,
				 unsigned flags, uint64_t *offset)
{
	const struct sym *s;

	if (!img->symtab_tried) {
		/* Past the dump's time limit, a table not read yet is not
		 * begun (the module's frames are named module+offset). */
		if (unwind_deadline_passed())
			return NULL;
		img->symtab_tried = true;
		img->symtab = symtab_build(img);
		img->free_symtab = unwind_symtab_free;
	}
	if (!img->symtab)
		return NULL;
	s = find(img->symtab, vaddr);
	if (!s)
		return NULL;
	if (offset)
		*offset = vaddr - s->start;
	/* Versioned names from a debug file's .symtab ("memcpy@@GLIBC_2.14"):
	 * the version is not part of the function's name. */
	const char *name = s->name;
	const char *at = strchr(name, '@');
	/* ... but "@plt" (unwind_plt_symbols()) says where the frame is. */
	bool versioned = at && at != name && strcmp(at, "@plt") != 0;
	if ((flags & UNWIND_SYM_NO_DEMANGLE) && !versioned)
		return name;
	struct sym_names *sn = names_of(img->symtab, s);
	if (!sn)
		return name;
	if (versioned) {
		if (!sn->unversioned)
			sn->unversioned = strndup(name, (size_t)(at - name));
		if (sn->unversioned)
			name = sn->unversioned;
	}
	if (flags & UNWIND_SYM_NO_DEMANGLE)
		return name;
	if (flags & UNWIND_SYM_NO_PARAMS) {
		if (!(sn->tried & SYM_DEM_NP_TRIED)) {
			sn->demangled_noparams = unwind_symbol_demangle(name, false);
			sn->tried |= SYM_DEM_NP_TRIED;
		}
		return sn->demangled_noparams ? sn->demangled_noparams : name;
	}
	if (!(sn->tried & SYM_DEM_TRIED)) {
		sn->demangled = unwind_symbol_demangle(name, true);
		sn->tried |= SYM_DEM_TRIED;
	}
	return sn->demangled ? sn->demangled : name;
}

/* The table and the names are built on first use, and a pooled image is
 * shared by dump's two threads: under the image lock (uncontended but in
 * dump, and a build is once per file). */
const char *unwind_elf_image_lookup(struct elf_image *img, uint64_t vaddr,
			     unsigned flags, uint64_t *offset)
{
	if (!img)
		return NULL;
	unwind_elf_image_lock();
	const char *name = lookup_locked(img, vaddr, flags, offset);
	unwind_elf_image_unlock();
	return name;
}

void unwind_symtab_free(struct symtab *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nnames; i++) {
		free(s->names[i].demangled);
		free(s->names[i].demangled_noparams);
		free(s->names[i].unversioned);
	}
	free(s->names);
	base_map_free(&s->made);
	free(s->v);
	free(s->minidebug);
	free(s->plt_names);
	unwind_budget_give(UNWIND_BUDGET_SYMBOLS, s->charged + s->minidebug_len + s->plt_names_len);
	unwind_elf_cache_free(&s->debug);
	free(s);
}
