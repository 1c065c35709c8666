/* unwind/symtab.c - function names for addresses of one ELF image.
 *
 * The table is built on the first lookup in an image (most mapped libraries
 * are never hit by a sample) and then binary searched.  Its sources, in
 * order: the image's .symtab, a separate debug file (debug-file.c), the
 * MiniDebugInfo (minidebuginfo.c), .dynsym with Go's .gopclntab
 * (gopclntab.c); then the PLT stubs (plt.c).  Names point into the
 * string table of the mmap'd file (or of the separate debug file, which the
 * table keeps mapped), so a table costs one small entry per function.
 * Demangled forms are computed when first asked for and kept in the entry,
 * so the pointer returned stays valid until the image is freed.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"
#include "unwind/unwind.h"
#include "unwind/yield.h"

/* A nested symbol (a size-0 label inside a sized function, a cold part
 * placed inside its parent) hides the enclosing one from the plain "greatest
 * start <= vaddr" search; look this far back for an enclosing symbol. */
#define ENCLOSING_LOOKBACK 16

#define SYM_DEM_TRIED    0x1
#define SYM_DEM_NP_TRIED 0x2

struct sym {
	uint64_t start;
	uint64_t end;             /* exclusive */
	const char *name;         /* in a string table we keep mapped */
	char *unversioned;        /* name without "@VERSION"/"@@VERSION", if it had one */
	char *demangled;          /* with parameters, NULL if not mangled */
	char *demangled_noparams;
	unsigned tried;           /* SYM_DEM_* */
};

struct symtab {
	struct sym *v;
	size_t n;
	/* Holds the separate debug file the names came from, if any. */
	struct elf_cache debug;
	/* The decompressed .gnu_debugdata (MiniDebugInfo), if names come
	 * from it; malloc'd. */
	unsigned char *minidebug;
	/* Names of synthesized "func@plt" symbols; malloc'd, one block. */
	char *plt_names;
};

struct raw_sym *
raw_sym_append(struct raw_sym **raw, size_t *n, size_t *cap)
{
	if (BASE_GROW(*raw, *cap, *n + 1, 1024) < 0)
		return NULL;
	return &(*raw)[(*n)++];
}

static unsigned leading_underscores(const char *s)
{
	unsigned n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->underscores != y->underscores)
		return x->underscores < y->underscores ? -1 : 1;
	/* Makes the choice among equals independent of qsort's order. */
	return strcmp(x->name, y->name);
}

/* Append the functions of the first section of type `type` (SHT_SYMTAB or
 * SHT_DYNSYM) of the ELF at data/size to *out.  Returns the number added,
 * 0 when there is no such section or it is unusable, -ENOMEM. */
static long collect(const unsigned char *data, size_t size, Elf64_Word type,
		    struct raw_sym **out, size_t *n, size_t *cap)
{
	Elf *e;
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	Elf_Data *d;
	const char *strtab;
	size_t entsize, count, added = 0;
	long ret = 0;

	if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)data, size);
	if (!e)
		return 0;
	if (elf_kind(e) != ELF_K_ELF)
		goto out;

	while ((scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			break;
	}
	if (!scn || (sh.sh_flags & SHF_COMPRESSED) ||
	    !span_inside(size, sh.sh_offset, sh.sh_size))
		goto out;

	/* The string table is used in place: check it lies in the file, so
	 * that a name is valid iff it is NUL-terminated inside it. */
	strscn = elf_getscn(e, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB || (strsh.sh_flags & SHF_COMPRESSED) ||
	    strsh.sh_size == 0 || !span_inside(size, strsh.sh_offset, strsh.sh_size))
		goto out;
	strtab = (const char *)data + strsh.sh_offset;

	d = elf_getdata(scn, NULL);
	entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	if (!d || entsize == 0)
		goto out;
	count = d->d_size / entsize;

	for (size_t i = 1; i < count; i++) {
		GElf_Sym s;
		struct raw_sym *r;
		unsigned t;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		unwind_yield();
		t = GELF_ST_TYPE(s.st_info);
		if (t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_NOTYPE)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_value == 0)
			continue;
		/* An assembly label without .type (musl's _start, __clone):
		 * a function when it is global and in code. */
		if (t == STT_NOTYPE) {
			Elf_Scn *ss = s.st_shndx < SHN_LORESERVE ? elf_getscn(e, s.st_shndx) : NULL;
			GElf_Shdr ssh;

			if (GELF_ST_BIND(s.st_info) == STB_LOCAL || !ss || !gelf_getshdr(ss, &ssh) ||
			    !(ssh.sh_flags & SHF_EXECINSTR))
				continue;
		}
		if (s.st_name == 0 || s.st_name >= strsh.sh_size ||
		    !memchr(strtab + s.st_name, '\0', strsh.sh_size - s.st_name))
			continue;

		r = raw_sym_append(out, n, cap);
		if (!r) {
			ret = -ENOMEM;
			goto out;
		}
		r->start = s.st_value;
		r->size = s.st_size;
		r->name = strtab + s.st_name;
		r->rank = t == STT_NOTYPE ? 3 :   /* a typed alias is preferred */
			  GELF_ST_BIND(s.st_info) == STB_GLOBAL ? 0 :
			  GELF_ST_BIND(s.st_info) == STB_WEAK ? 1 : 2;
		r->underscores = leading_underscores(r->name);
		r->sec_end = 0;
		/* The section bounds how far a size-0 symbol may reach. */
		if (s.st_size == 0 && s.st_shndx < SHN_LORESERVE) {
			Elf_Scn *ss = elf_getscn(e, s.st_shndx);
			GElf_Shdr ssh;

			if (ss && gelf_getshdr(ss, &ssh) && (ssh.sh_flags & SHF_ALLOC) &&
			    ssh.sh_addr + ssh.sh_size > ssh.sh_addr &&
			    s.st_value >= ssh.sh_addr &&
			    s.st_value < ssh.sh_addr + ssh.sh_size)
				r->sec_end = ssh.sh_addr + ssh.sh_size;
		}
		added++;
	}
	ret = (long)added;
out:
	elf_end(e);
	return ret;
}

/* Sort, pick one name per address and compute each symbol's end. */
static int finish(struct symtab *st, struct raw_sym *raw, size_t n)
{
	size_t k = 0;

	if (n == 0)
		return 0;
	qsort(raw, n, sizeof(*raw), cmp_raw);

	/* Aliases: the first of a run of equal starts is the preferred name;
	 * if it has no size, borrow the largest size of its aliases. */
	for (size_t i = 0; i < n; ) {
		size_t j = i + 1;

		while (j < n && raw[j].start == raw[i].start) {
			if (raw[i].size == 0 && raw[j].size > 0)
				raw[i].size = raw[j].size;
			if (raw[i].sec_end == 0)
				raw[i].sec_end = raw[j].sec_end;
			j++;
		}
		raw[k++] = raw[i];
		i = j;
	}

	st->v = calloc(k, sizeof(*st->v));
	if (!st->v)
		return -ENOMEM;
	for (size_t i = 0; i < k; i++) {
		struct sym *s = &st->v[i];
		uint64_t end;

		s->start = raw[i].start;
		s->name = raw[i].name;
		if (raw[i].size > 0) {
			end = raw[i].start + raw[i].size;
			if (end < raw[i].start)
				end = UINT64_MAX;
		} else {
			/* Hand-written assembly often has no .size: it covers
			 * up to the next function, within its section. */
			end = i + 1 < k ? raw[i + 1].start : UINT64_MAX;
			if (raw[i].sec_end > raw[i].start && raw[i].sec_end < end)
				end = raw[i].sec_end;
			if (end == UINT64_MAX)
				end = raw[i].start + 1;
		}
		s->end = end;
	}
	st->n = k;
	return 0;
}

struct symtab_take {
	struct symtab *st;
	struct raw_sym **raw;
	size_t *n, *cap;
};

/* A debug file's .symtab, when it has one: the file then stays mapped in
 * st->debug (the names point into it). */
static long symtab_take_debug(void *arg, struct elf_cache *file,
			      struct elf_image *dbg)
{
	struct symtab_take *a = arg;
	long added = collect(dbg->data, dbg->size, SHT_SYMTAB, a->raw, a->n, a->cap);

	if (added > 0)
		a->st->debug = *file;
	return added;
}

/* MiniDebugInfo (Fedora, and others since): .gnu_debugdata is an xz-packed
 * ELF file whose .symtab holds the functions that are not in .dynsym, so
 * both are taken.  Returns the number added (0 without one), or -ENOMEM. */
static long from_minidebuginfo(struct symtab *st, const struct elf_image *img,
			       struct raw_sym **raw, size_t *n, size_t *cap)
{
	unsigned char *mini;
	size_t len;
	long added, dyn;

	len = minidebuginfo_read(img, &mini);
	if (len == 0)
		return 0;
	added = collect(mini, len, SHT_SYMTAB, raw, n, cap);
	if (added <= 0) {
		free(mini);
		return added;
	}
	st->minidebug = mini;
	dyn = collect(img->data, img->size, SHT_DYNSYM, raw, n, cap);
	return dyn < 0 ? dyn : added + dyn;
}

/* NULL only when out of memory; an image without symbols gets an empty
 * table, so that it is not searched again. */
static struct symtab *symtab_build(struct elf_image *img)
{
	struct symtab *st = calloc(1, sizeof(*st));
	struct raw_sym *raw = NULL;
	size_t n = 0, cap = 0;
	long added;

	if (!st)
		return NULL;
	/* .symtab is a superset of .dynsym: no need to merge them. */
	added = collect(img->data, img->size, SHT_SYMTAB, &raw, &n, &cap);
	if (added == 0) {
		struct symtab_take a = { st, &raw, &n, &cap };

		added = elf_debug_file_search(img, symtab_take_debug, &a);
	}
	if (added == 0)
		added = from_minidebuginfo(st, img, &raw, &n, &cap);
	if (added == 0) {
		added = collect(img->data, img->size, SHT_DYNSYM, &raw, &n, &cap);
		/* A stripped Go binary still has the runtime's own table. */
		if (added >= 0) {
			long go = gopclntab_symbols(img, &raw, &n, &cap);

			added = go < 0 ? go : added + go;
		}
	}
	/* The PLT lives in the running file, not in a debug file. */
	if (added >= 0) {
		long plt = plt_symbols(img, &raw, &n, &cap, &st->plt_names);

		added = plt < 0 ? plt : added + plt;
	}
	if (added < 0 || finish(st, raw, n) < 0) {
		free(raw);
		symtab_free(st);
		return NULL;
	}
	free(raw);
	return st;
}

static const struct sym *find(const struct symtab *st, uint64_t vaddr)
{
	size_t lo = spans_upto(st->v, st->n, sizeof(*st->v), offsetof(struct sym, start), vaddr);
	for (size_t i = lo, k = 0; i > 0 && k < ENCLOSING_LOOKBACK; i--, k++) {
		if (vaddr < st->v[i - 1].end)
			return &st->v[i - 1];
	}
	return NULL;
}

static const char *lookup_locked(struct elf_image *img, uint64_t vaddr,
				 unsigned flags, uint64_t *offset)
{
	struct sym *s;

	if (!img->symtab_tried) {
		/* Past the dump's time limit, a table not read yet is not
		 * begun (the module's frames are named module+offset). */
		if (unwind_deadline_passed())
			return NULL;
		img->symtab_tried = true;
		img->symtab = symtab_build(img);
	}
	if (!img->symtab)
		return NULL;
	s = (struct sym *)find(img->symtab, vaddr);
	if (!s)
		return NULL;
	if (offset)
		*offset = vaddr - s->start;
	/* Versioned names from a debug file's .symtab ("memcpy@@GLIBC_2.14"):
	 * the version is not part of the function's name. */
	const char *name = s->name;
	const char *at = strchr(name, '@');
	/* ... but "@plt" (plt_symbols()) says where the frame is. */
	if (at && at != name && strcmp(at, "@plt") != 0) {
		if (!s->unversioned)
			s->unversioned = strndup(name, (size_t)(at - name));
		if (s->unversioned)
			name = s->unversioned;
	}
	if (flags & UNWIND_SYM_NO_DEMANGLE)
		return name;
	if (flags & UNWIND_SYM_NO_PARAMS) {
		if (!(s->tried & SYM_DEM_NP_TRIED)) {
			s->demangled_noparams = symbol_demangle(name, false);
			s->tried |= SYM_DEM_NP_TRIED;
		}
		return s->demangled_noparams ? s->demangled_noparams : name;
	}
	if (!(s->tried & SYM_DEM_TRIED)) {
		s->demangled = symbol_demangle(name, true);
		s->tried |= SYM_DEM_TRIED;
	}
	return s->demangled ? s->demangled : name;
}

/* The table and the names are built on first use, and a pooled image is
 * shared by dump's two threads: under the image lock (uncontended but in
 * dump, and a build is once per file). */
const char *elf_image_lookup(struct elf_image *img, uint64_t vaddr,
			     unsigned flags, uint64_t *offset)
{
	if (!img)
		return NULL;
	elf_image_lock();
	const char *name = lookup_locked(img, vaddr, flags, offset);
	elf_image_unlock();
	return name;
}

void symtab_free(struct symtab *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].demangled);
		free(s->v[i].demangled_noparams);
		free(s->v[i].unversioned);
	}
	free(s->v);
	free(s->minidebug);
	free(s->plt_names);
	elf_cache_free(&s->debug);
	free(s);
}
