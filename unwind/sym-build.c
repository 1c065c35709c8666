/* unwind/sym-build.c - a symbol table being built (unwind/sym-build.h):
 * the functions added by every source (unwind_symtab_add: the ELF tables read
 * here, plt.c, gopclntab.c) within the module's and the run's budgets,
 * the reader of .symtab and .dynsym, and the sort.  Below the sources:
 * symtab.c, which calls them in order and finishes the table, was both
 * called by plt.c and gopclntab.c (unwind_symtab_add) and calling them. */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "ptrace/clock.h"
#include "unwind/budget.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/sym-build.h"
#include "unwind/symbols.h"
#include "unwind/yield.h"

/* Entries of a table, or names, read between two releases of their
 * pages: a fault maps up to 16 pages around it, so at most 16 x 2 x 1,024
 * pages of names (128 MiB) are resident between two, whatever the file
 * does to spread them. */
#define SYMTAB_RELEASE_EVERY (8u << 10)
#define SYMTAB_NAMES_RELEASE_EVERY 1024u

static unsigned leading_underscores(const char *s)
{
	unsigned n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

int
unwind_symtab_add(struct sym_build *b, uint64_t start, uint64_t size, uint64_t sec_end,
	   const char *name, unsigned rank)
{
	if (b->over)
		return -E2BIG;
	if (b->n >= b->max_funcs) {
		b->over = SYM_OVER_MODULE;
		return -E2BIG;
	}
	if (b->n == b->cap) {
		size_t ncap = b->cap ? 2 * b->cap : 1024;
		if (ncap > b->max_funcs)
			ncap = (size_t)b->max_funcs;
		uint64_t more = (uint64_t)(ncap - b->cap) * sizeof(*b->v);
		if (!unwind_budget_take(UNWIND_BUDGET_SYMBOLS, more)) {
			b->over = SYM_OVER_RUN;
			return -E2BIG;
		}
		/* Large blocks grow by mremap: no second copy. */
		struct sym *nv = realloc(b->v, ncap * sizeof(*nv));
		if (!nv) {
			unwind_budget_give(UNWIND_BUDGET_SYMBOLS, more);
			return -ENOMEM;
		}
		b->v = nv;
		b->cap = ncap;
		b->charged += more;
	}
	struct sym *s = &b->v[b->n++];
	s->start = start;
	s->name = name;
	s->info = rank & SYM_RANK_MASK;
	if (size > 0) {
		s->len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	} else {
		uint64_t reach = sec_end > start ? sec_end - start : 0;
		s->len = reach > UINT32_MAX ? UINT32_MAX : (uint32_t)reach;
		s->info |= SYM_REACH;
	}
	return 0;
}

/* The build's time is up (checked every few thousand entries). */
static bool build_late(struct sym_build *b)
{
	if (ptrace_clock_monotonic_ns() <= b->deadline)
		return false;
	b->over = SYM_OVER_TIME;
	return true;
}

/* Pages of the mapped file read while a table is built: dropped from our
 * memory as we go (the page cache keeps them; a later read faults one
 * back), so that a .symtab of hundreds of MiB is never resident at once. */
static void release_pages(const struct elf_image *img, const void *p, size_t len)
{
	if (img && img->mmapped)
		unwind_elf_image_release(img, p, len);
}

/* Is name "NAME@VERSION" (an older version: not "@@", not "@plt")? */
static bool old_version(const char *name)
{
	const char *at = strchr(name, '@');
	return at && at != name && at[1] != '@' && strcmp(at, "@plt") != 0;
}

static inline int cmp_sym(struct sym_build *b, const struct sym *x, const struct sym *y)
{
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* The same entry (the pivot's copy): its name is not read (its
	 * page would be faulted in for nothing). */
	if (x->name == y->name)
		return 0;
	unsigned rx = x->info & SYM_RANK_MASK, ry = y->info & SYM_RANK_MASK;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	/* Names are read: their pages dropped every so many. */
	if (++b->name_reads >= SYMTAB_NAMES_RELEASE_EVERY) {
		b->name_reads = 0;
		for (unsigned k = 0; k < b->nstrs; k++)
			release_pages(b->strs[k].img, b->strs[k].p, b->strs[k].len);
	}
	/* A name of the default version or of none before one of an older
	 * version ("free@@GLIBC_2.2.5" before "cfree@GLIBC_2.2.5" in a
	 * debug file's .symtab, where both are global). */
	bool ox = old_version(x->name), oy = old_version(y->name);
	if (ox != oy)
		return ox ? 1 : -1;
	/* Fewer leading underscores first ("memcpy" before "__memcpy"):
	 * counted here, for the few aliases, not for every function. */
	unsigned ux = leading_underscores(x->name), uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	/* Makes the choice among equals independent of the sort's order. */
	return strcmp(x->name, y->name);
}

static void sym_swap(struct sym *a, struct sym *b)
{
	struct sym t = *a;
	*a = *b;
	*b = t;
}

static void sift_down(struct sym_build *b, struct sym *v, size_t root, size_t n)
{
	for (size_t c; (c = 2 * root + 1) < n; root = c) {
		if (c + 1 < n && cmp_sym(b, &v[c], &v[c + 1]) < 0)
			c++;
		if (cmp_sym(b, &v[root], &v[c]) >= 0)
			return;
		sym_swap(&v[root], &v[c]);
	}
}

static void heap_sort(struct sym_build *b, struct sym *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(b, v, i, n);
	for (size_t i = n; i-- > 1;) {
		sym_swap(&v[0], &v[i]);
		sift_down(b, v, 0, i);
	}
}

/* Sort v in place (glibc's qsort would copy a large table whole for its
 * merge sort): quicksort on the median of three, heapsort past a depth
 * that a hostile order could force, insertion sort for short runs.
 * false when the build's time ran out first (b->over). */
bool unwind_symtab_sort(struct sym_build *b, struct sym *v, size_t n, unsigned depth)
{
	while (n > 16) {
		unwind_yield();
		if (build_late(b))
			return false;
		if (depth-- == 0) {
			heap_sort(b, v, n);
			return true;
		}
		size_t mid = n / 2;
		if (cmp_sym(b, &v[mid], &v[0]) < 0)
			sym_swap(&v[mid], &v[0]);
		if (cmp_sym(b, &v[n - 1], &v[0]) < 0)
			sym_swap(&v[n - 1], &v[0]);
		if (cmp_sym(b, &v[n - 1], &v[mid]) < 0)
			sym_swap(&v[n - 1], &v[mid]);
		struct sym pivot = v[mid];
		size_t i = 0, j = n - 1;
		for (;;) {
			while (cmp_sym(b, &v[i], &pivot) < 0)
				i++;
			while (cmp_sym(b, &pivot, &v[j]) < 0)
				j--;
			if (i >= j)
				break;
			sym_swap(&v[i], &v[j]);
			i++;
			j--;
		}
		/* The smaller side by recursion, the larger by the loop. */
		if (j + 1 < n - j - 1) {
			if (!unwind_symtab_sort(b, v, j + 1, depth))
				return false;
			v += j + 1;
			n -= j + 1;
		} else {
			if (!unwind_symtab_sort(b, v + j + 1, n - j - 1, depth))
				return false;
			n = j + 1;
		}
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && cmp_sym(b, &v[k], &v[k - 1]) < 0; k--)
			sym_swap(&v[k], &v[k - 1]);
	return true;
}

/* One entry of .symtab or .dynsym, the fields the collector uses. */
struct raw_sym {
	uint32_t name;
	unsigned info, shndx;
	uint64_t value, size;
};

/* Entry p of a table in the file's byte order be and class is64 (its
 * bounds checked by the caller: the whole table lies in the file). */
static inline void read_sym(const unsigned char *p, bool be, bool is64, struct raw_sym *s)
{
	const bool host_be = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

	if (be == host_be && is64) {
		/* The common case, in one copy. */
		Elf64_Sym es;
		memcpy(&es, p, sizeof(es));
		s->name = es.st_name;
		s->info = es.st_info;
		s->shndx = es.st_shndx;
		s->value = es.st_value;
		s->size = es.st_size;
	} else if (is64) {
		s->name = (uint32_t)arch_get_uint(p, 4, be);
		s->info = p[4];
		s->shndx = (unsigned)arch_get_uint(p + 6, 2, be);
		s->value = arch_get_uint(p + 8, 8, be);
		s->size = arch_get_uint(p + 16, 8, be);
	} else {
		s->name = (uint32_t)arch_get_uint(p, 4, be);
		s->value = arch_get_uint(p + 4, 4, be);
		s->size = arch_get_uint(p + 8, 4, be);
		s->info = p[12];
		s->shndx = (unsigned)arch_get_uint(p + 14, 2, be);
	}
}

/* .dynsym's versions: an entry whose version is hidden is a
 * compatibility alias (glibc's cfree@GLIBC_2.2.5 beside
 * free@@GLIBC_2.2.5), not the name programs call it by.  The
 * SHT_GNU_versym section of table scn (count entries) in the file, or
 * NULL. */
static const unsigned char *find_versym(Elf *e, Elf_Scn *scn, const unsigned char *data,
					size_t size, size_t count)
{
	Elf_Scn *vs = NULL;
	GElf_Shdr vsh;

	while ((vs = elf_nextscn(e, vs)) != NULL) {
		if (gelf_getshdr(vs, &vsh) && vsh.sh_type == SHT_GNU_versym &&
		    vsh.sh_link == elf_ndxscn(scn) && !(vsh.sh_flags & SHF_COMPRESSED) &&
		    vsh.sh_size / 2 >= count && span_inside(size, vsh.sh_offset, vsh.sh_size))
			return data + vsh.sh_offset;
	}
	return NULL;
}

/* Is section shndx code?  An assembly label without .type (musl's
 * _start, __clone) is a function when it is global and in code. */
static bool in_code(Elf *e, unsigned shndx)
{
	Elf_Scn *ss = shndx < SHN_LORESERVE ? elf_getscn(e, shndx) : NULL;
	GElf_Shdr ssh;

	return ss && gelf_getshdr(ss, &ssh) && (ssh.sh_flags & SHF_EXECINSTR);
}

/* The section bounds how far a size-0 symbol may reach: the end of
 * section shndx when it is loaded and holds value, else 0. */
static uint64_t section_end(Elf *e, unsigned shndx, uint64_t value)
{
	if (shndx >= SHN_LORESERVE)
		return 0;
	Elf_Scn *ss = elf_getscn(e, shndx);
	GElf_Shdr ssh;

	if (ss && gelf_getshdr(ss, &ssh) && (ssh.sh_flags & SHF_ALLOC) &&
	    ssh.sh_addr + ssh.sh_size > ssh.sh_addr &&
	    value >= ssh.sh_addr && value < ssh.sh_addr + ssh.sh_size)
		return ssh.sh_addr + ssh.sh_size;
	return 0;
}

/* Append the functions of the first section of type `type` (SHT_SYMTAB or
 * SHT_DYNSYM) of the ELF at data/size to b; img is the mapped file they
 * are in (NULL: our memory).  The entries are read in place (either byte
 * order), at most the module's budget of them.  Returns the number added,
 * 0 when there is no such section or it is unusable, -E2BIG over a budget
 * (b->over), -ENOMEM. */
long unwind_symtab_collect(struct sym_build *b, const struct elf_image *img,
		    const unsigned char *data, size_t size, Elf64_Word type)
{
	Elf *e;
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	const char *strtab;
	size_t entsize, count, added = 0;
	bool reading = false, registered = false;
	long ret = 0;

	if (size <= EI_DATA || memcmp(data, ELFMAG, SELFMAG) != 0)
		return 0;
	bool be = data[EI_DATA] == ELFDATA2MSB, is64 = data[EI_CLASS] == ELFCLASS64;
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
	bool str_ends = strtab[strsh.sh_size - 1] == '\0';
	if (img && img->mmapped && b->nstrs < sizeof(b->strs) / sizeof(b->strs[0])) {
		b->strs[b->nstrs++] = (struct sym_strings){ img, strtab, strsh.sh_size };
		registered = true;
	}

	entsize = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	count = sh.sh_size / entsize;
	/* Too many to look at: not read at all (its pages never touched). */
	if (count > b->max_funcs * SYMTAB_ENTRIES_RATIO) {
		b->over = SYM_OVER_MODULE;
		ret = -E2BIG;
		goto out;
	}
	const unsigned char *base = data + sh.sh_offset;
	size_t released = 0;
	reading = true;

	const unsigned char *versym =
		type == SHT_DYNSYM ? find_versym(e, scn, data, size, count) : NULL;

	for (size_t i = 1; i < count; i++) {
		struct raw_sym es;

		if ((i & (UNWIND_YIELD_EVERY - 1)) == 0 && build_late(b)) {
			ret = -E2BIG;
			goto out;
		}
		if (i - released >= SYMTAB_RELEASE_EVERY) {
			release_pages(img, base + released * entsize, (i - released) * entsize);
			if (!str_ends)   /* every name was read */
				release_pages(img, strtab, strsh.sh_size);
			released = i;
		}
		unwind_yield();
		read_sym(base + i * entsize, be, is64, &es);
		unsigned t = GELF_ST_TYPE(es.info), bind = GELF_ST_BIND(es.info);
		if (t != STT_FUNC && t != STT_GNU_IFUNC && t != STT_NOTYPE)
			continue;
		if (es.shndx == SHN_UNDEF || es.value == 0)
			continue;
		if (t == STT_NOTYPE && (bind == STB_LOCAL || !in_code(e, es.shndx)))
			continue;
		/* A string table that ends in a NUL ends every name in it:
		 * its pages are then not touched to check each one. */
		if (es.name == 0 || es.name >= strsh.sh_size ||
		    (!str_ends && !memchr(strtab + es.name, '\0', strsh.sh_size - es.name)))
			continue;

		uint64_t sec_end = es.size == 0 ? section_end(e, es.shndx, es.value) : 0;
		/* A typed alias is preferred, and one of the default version
		 * (a hidden version ranks as a local name). */
		unsigned rank = t == STT_NOTYPE ? 3 : bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
		if (versym && rank < 2 && (arch_get_uint(versym + 2 * i, 2, be) & 0x8000))
			rank = 2;
		int r = unwind_symtab_add(b, es.value, es.size, sec_end, strtab + es.name, rank);
		if (r < 0) {
			ret = r;
			goto out;
		}
		added++;
	}
	ret = (long)added;
out:
	/* A file that gave nothing may be unmapped next (a debug file
	 * not taken). */
	if (registered && ret <= 0)
		b->nstrs--;
	if (reading) {
		release_pages(img, data + sh.sh_offset, sh.sh_size);
		release_pages(img, data + strsh.sh_offset, strsh.sh_size);
	}
	elf_end(e);
	return ret;
}

int
unwind_symtab_charge_names(size_t len)
{
	return unwind_budget_take(UNWIND_BUDGET_SYMBOLS, len) ? 0 : -E2BIG;
}

void
unwind_symtab_uncharge_names(size_t len)
{
	unwind_budget_give(UNWIND_BUDGET_SYMBOLS, len);
}
