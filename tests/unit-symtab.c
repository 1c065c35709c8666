/* tests/unit-symtab.c - the memory map parser, ELF images, load bias and
 * symbol lookup (unwind/maps.c, elf-image.c, symtab.c).
 *
 * Names this program's own functions through /proc/self/maps exactly as
 * stackspy names a target's, libc's through its separate debug file when
 * one is installed, and feeds truncated and corrupted ELF files to the
 * loader, which must fail cleanly and never crash.
 * Exit status: 0 pass, 1 fail, 77 skip.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "arch/arch.h"
#include "tests/check.h"
#include "unwind/budget.h"
#include "unwind/elf-image.h"
#include "unwind/engines.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"
#include "unwind/target.h"
#include "unwind/unwind.h"
#include "unwind/x86-code.h"

static const char *str_or_null(const char *s)
{
	return s ? s : "(null)";
}

static bool str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* ---- functions to find ------------------------------------------------- */

#ifdef __clang__
# define TEST_NOINLINE __attribute__((noinline, used))
#else
# define TEST_NOINLINE __attribute__((noinline, noclone, used))
#endif

/* Called through volatile pointers so that the compiler can neither inline
 * them nor emit a renamed clone in place of the address we look up. */
TEST_NOINLINE static int unit_static_fn(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

int unit_global_fn(int x);
TEST_NOINLINE int unit_global_fn(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 + unit_static_fn(x);
}

/* Symbols with exact, known extents (never executed): a 1-byte function
 * followed by 31 bytes that no symbol covers, a function without .size that
 * reaches the next symbol, and mangled C++ and Rust names (the last followed
 * by another uncovered gap). */
__asm__(
	".pushsection .text\n"
	".p2align 6\n"
	".globl unit_sized_fn\n"
	".hidden unit_sized_fn\n"
	".type unit_sized_fn, STT_FUNC\n"
	"unit_sized_fn:\n"
	".byte 0\n"
	".size unit_sized_fn, 1\n"
	".skip 31\n"
	".globl unit_nosize_fn\n"
	".hidden unit_nosize_fn\n"
	".type unit_nosize_fn, STT_FUNC\n"
	"unit_nosize_fn:\n"
	".skip 32\n"
	".globl _ZN4unit7mangledEi\n"
	".hidden _ZN4unit7mangledEi\n"
	".type _ZN4unit7mangledEi, STT_FUNC\n"
	"_ZN4unit7mangledEi:\n"
	".skip 16\n"
	".size _ZN4unit7mangledEi, 16\n"
	".globl _ZN4unit4rust5thing17h0123456789abcdefE\n"
	".hidden _ZN4unit4rust5thing17h0123456789abcdefE\n"
	".type _ZN4unit4rust5thing17h0123456789abcdefE, STT_FUNC\n"
	"_ZN4unit4rust5thing17h0123456789abcdefE:\n"
	".skip 16\n"
	".size _ZN4unit4rust5thing17h0123456789abcdefE, 16\n"
	".skip 16\n"
	/* Aliases: GLOBAL beats WEAK and LOCAL, then fewer underscores. */
	"unit_alias_a:\n"
	".type unit_alias_a, STT_FUNC\n"
	".weak unit_alias_b\n"
	".type unit_alias_b, STT_FUNC\n"
	"unit_alias_b:\n"
	".globl __unit_alias_c\n"
	".type __unit_alias_c, STT_FUNC\n"
	"__unit_alias_c:\n"
	".globl _unit_alias_d\n"
	".type _unit_alias_d, STT_FUNC\n"
	"_unit_alias_d:\n"
	".skip 16\n"
	".size unit_alias_a, 16\n"
	".size unit_alias_b, 16\n"
	".size __unit_alias_c, 16\n"
	".size _unit_alias_d, 16\n"
	".skip 16\n"
	".popsection\n");
extern const char _unit_alias_d[];
extern const char unit_sized_fn[], unit_nosize_fn[];
extern const char _ZN4unit7mangledEi[];
extern const char _ZN4unit4rust5thing17h0123456789abcdefE[];

/* ---- maps parsing ------------------------------------------------------ */

static const char maps_sample[] =
	"00400000-00452000 r-xp 00000000 fd:01 1234       /usr/bin/prog with  spaces\n"
	"garbage line\n"
	"7f0000000000-7f0000001000 rw-p 00001000 08:02 42 /tmp/x (deleted)\n"
	"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
	"7fff00000000-7fff00002000 r-xp 00000000 00:00 0   [vdso]\n"
	"00600000-00601000 rw-p 00000000 00:00 0 \n"
	"00700000-00701000 rw-s 00000000 00:00 0\n"
	"00800000-007f0000 r--p 00000000 00:00 0\n"
	"00800000-00800000 r--p 00000000 00:00 0\n"
	"zzzz-00801000 r--p 00000000 00:00 0\n"
	"00900000-00901000 rwzp 00000000 00:00 0\n"
	"00a00000-00a01000 r--p 00000000 fd01 0\n"
	"00b00000-00b01000 r--p 00000000 fd:01\n"
	"00c00000-00c01000 r--p 00000000 fd:01 12x /p\n"
	"00c10000-00c11000 r--p -0000001 fd:01 12 /p\n"
	"ffffffffffffffffff-1 r--p 00000000 00:00 0\n"
	"00450000-00460000 r--p 00000000 00:00 0 /overlaps/the/first\n"
	"\n"
	"   \n"
	"00d00000-00d01000 r--p\n"
	"00e00000-00e01000 r--p 00000000 103:02 99 /last (deleted) no newline";

static void test_maps_parse(void)
{
	struct module_map mm;
	struct mapping *m;
	int r;

	CHECK(unwind_module_map_parse(NULL, &mm) == -EINVAL, "NULL text accepted");

	r = unwind_module_map_parse(maps_sample, &mm);
	CHECK(r == 0, "unwind_module_map_parse: %d", r);
	if (r != 0)
		return;
	CHECK(mm.n == 7, "parsed %zu mappings, want 7", mm.n);
	for (size_t i = 1; i < mm.n; i++)
		CHECK(mm.v[i - 1].end <= mm.v[i].start, "not sorted/disjoint at %zu", i);

	m = unwind_module_map_find(&mm, 0x400000);
	CHECK(m && str_eq(m->path, "/usr/bin/prog with  spaces"),
	      "path with spaces: '%s'", m ? str_or_null(m->path) : "no mapping");
	if (m) {
		CHECK(m->dev == makedev(0xfd, 1), "dev fd:01");
		CHECK(m->inode == 1234, "inode %ju", (uintmax_t)m->inode);
		CHECK(m->perms == (MAPPING_R | MAPPING_X), "perms %#x", m->perms);
		CHECK(!m->deleted && !m->image && !m->image_tried, "fresh fields");
		CHECK(unwind_module_map_find(&mm, 0x451fff) == m, "last byte of mapping");
	}
	CHECK(unwind_module_map_find(&mm, 0x452000) == NULL, "end is exclusive");
	CHECK(unwind_module_map_find(&mm, 0x3fffff) == NULL, "below the first mapping");
	CHECK(unwind_module_map_find(&mm, 0x450000) == m, "overlapping line dropped");
	CHECK(unwind_module_map_find(&mm, UINT64_MAX) == NULL, "top of address space");

	m = unwind_module_map_find(&mm, 0x7f0000000800);
	CHECK(m && str_eq(m->path, "/tmp/x") && m->deleted && m->offset == 0x1000 &&
	      m->dev == makedev(8, 2) && m->perms == (MAPPING_R | MAPPING_W),
	      "deleted mapping: '%s'", m ? str_or_null(m->path) : "no mapping");
	m = unwind_module_map_find(&mm, 0x7ffc00000000);
	CHECK(m && str_eq(m->path, "[stack]") && !m->deleted, "[stack]");
	m = unwind_module_map_find(&mm, 0x7fff00001fff);
	CHECK(m && str_eq(m->path, "[vdso]"), "[vdso]");
	m = unwind_module_map_find(&mm, 0x600000);
	CHECK(m && m->path == NULL, "anonymous with a trailing blank");
	m = unwind_module_map_find(&mm, 0x700000);
	CHECK(m && m->path == NULL && m->perms == (MAPPING_R | MAPPING_W), "anonymous shared");
	m = unwind_module_map_find(&mm, 0xe00000);
	CHECK(m && str_eq(m->path, "/last (deleted) no newline") && !m->deleted &&
	      m->dev == makedev(0x103, 2) && m->inode == 99,
	      "last line without newline: '%s'", m ? str_or_null(m->path) : "no mapping");
	for (uint64_t a = 0x800000; a < 0xd02000; a += 0x1000)
		CHECK(unwind_module_map_find(&mm, a) == NULL,
		      "malformed line at %#" PRIx64 " kept", a);
	unwind_module_map_free(&mm);
	CHECK(mm.v == NULL && mm.n == 0, "unwind_module_map_free resets");
	unwind_module_map_free(&mm);

	CHECK(unwind_module_map_parse("", &mm) == 0 && mm.n == 0, "empty text");
	unwind_module_map_free(&mm);
}

/* Random text made of maps-like characters: no crash, and whatever comes
 * out is sorted and disjoint. */
static void test_maps_fuzz(unsigned seed)
{
	static const char alphabet[] = "0123456789abcdef-:  rwxps/\n()deleted[]";
	char buf[sizeof(maps_sample)];

	srand(seed);
	for (int iter = 0; iter < 2000; iter++) {
		struct module_map mm;
		size_t len = (size_t)rand() % (sizeof(buf) - 1);

		if (iter % 2 == 0) {
			for (size_t i = 0; i < len; i++)
				buf[i] = alphabet[(size_t)rand() % (sizeof(alphabet) - 1)];
			buf[len] = '\0';
		} else {
			/* Mutations of a valid sample are closer to the edge. */
			memcpy(buf, maps_sample, sizeof(maps_sample));
			len = sizeof(maps_sample) - 1;
			for (int k = 0; k < 4; k++)
				buf[(size_t)rand() % len] = alphabet[(size_t)rand() % (sizeof(alphabet) - 1)];
		}
		if (unwind_module_map_parse(buf, &mm) != 0) {
			CHECK(0, "unwind_module_map_parse failed on fuzz input");
			continue;
		}
		for (size_t i = 0; i < mm.n; i++) {
			CHECK(mm.v[i].start < mm.v[i].end, "empty mapping kept");
			if (i > 0)
				CHECK(mm.v[i - 1].end <= mm.v[i].start, "fuzz: overlap");
			CHECK(unwind_module_map_find(&mm, mm.v[i].start) == &mm.v[i], "fuzz: find");
		}
		unwind_module_map_free(&mm);
	}
}

/* ---- our own symbols ----------------------------------------------------- */

/* The image and bias of the mapping containing addr. */
static struct elf_image *image_at(struct elf_cache *c, const struct module_map *mm,
				  uint64_t addr, uint64_t *bias, const struct mapping **out)
{
	const struct mapping *m = unwind_module_map_find(mm, addr);
	struct elf_image *img;
	int err = 0, r;

	CHECK(m != NULL, "%#" PRIx64 " is in no mapping", addr);
	if (!m)
		return NULL;
	CHECK(m->perms & MAPPING_X, "code at %#" PRIx64 " not executable", addr);
	img = unwind_elf_cache_get(c, getpid(), m, &err);
	CHECK(img != NULL, "unwind_elf_cache_get(%s): %s", str_or_null(m->path), strerror(-err));
	if (!img)
		return NULL;
	r = unwind_elf_image_bias(img, m, bias);
	CHECK(r == 0, "unwind_elf_image_bias(%s): %d", str_or_null(m->path), r);
	if (r != 0)
		return NULL;
	if (out)
		*out = m;
	return img;
}

static void expect_name(struct elf_image *img, uint64_t vaddr, unsigned flags,
			const char *want, uint64_t want_off, int line)
{
	uint64_t off = UINT64_MAX;
	const char *got = unwind_elf_image_lookup(img, vaddr, flags, &off);

	if (!want) {
		check_at(!got, __FILE__, line, "expect_name",
			 " %#" PRIx64 " named '%s', want none",
			 vaddr, str_or_null(got));
		return;
	}
	check_at(str_eq(got, want) && off == want_off, __FILE__, line,
		 "expect_name", " %#" PRIx64 " flags %u: got '%s'+%#" PRIx64
		 ", want '%s'+%#" PRIx64, vaddr, flags, str_or_null(got),
		 off, want, want_off);
}

#define EXPECT_NAME(img, vaddr, flags, want, off) \
	expect_name(img, vaddr, flags, want, off, __LINE__)

static bool has_symtab(const struct elf_image *img)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool found = false;

	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	while (e && !found && (scn = elf_nextscn(e, scn)) != NULL)
		found = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
	if (e)
		elf_end(e);
	return found;
}

static uint64_t self_text_vaddr;  /* unit_global_fn's ELF vaddr, for later */

static void test_self(struct elf_cache *c, const struct module_map *mm)
{
	int (*volatile gfn)(int) = unit_global_fn;
	int (*volatile sfn)(int) = unit_static_fn;
	const struct mapping *m = NULL, *m0 = NULL;
	struct elf_image *img;
	uint64_t bias, bias0, g, s;
	int err;

	CHECK(gfn(1) == 9, "unit_global_fn(1)");
	img = image_at(c, mm, (uintptr_t)gfn, &bias, &m);
	if (!img)
		return;
	CHECK(unwind_elf_cache_get(c, getpid(), m, &err) == img, "image not cached");

	/* The mapping at file offset 0 must give the same bias as the text. */
	for (size_t i = 0; i < mm->n; i++) {
		if (mm->v[i].inode == m->inode && mm->v[i].dev == m->dev &&
		    mm->v[i].offset == 0) {
			m0 = &mm->v[i];
			break;
		}
	}
	if (m0) {
		CHECK(unwind_elf_image_bias(img, m0, &bias0) == 0 && bias0 == bias,
		      "bias of offset-0 mapping %#" PRIx64 " != text's %#" PRIx64,
		      bias0, bias);
	}

	/* LDFLAGS=-s leaves only .dynsym, where none of these are. */
	if (!has_symtab(img)) {
		printf("SKIP own symbols: %s has no .symtab (stripped)\n", img->path);
		return;
	}

	g = (uintptr_t)gfn - bias;
	s = (uintptr_t)sfn - bias;
	self_text_vaddr = g;
	EXPECT_NAME(img, g, 0, "unit_global_fn", 0);
	EXPECT_NAME(img, g + 1, 0, "unit_global_fn", 1);
	EXPECT_NAME(img, g, UNWIND_SYM_NO_DEMANGLE, "unit_global_fn", 0);
	EXPECT_NAME(img, s, 0, "unit_static_fn", 0);
	EXPECT_NAME(img, s + 2, UNWIND_SYM_NO_PARAMS, "unit_static_fn", 2);

	/* st_size is honoured; size-0 symbols reach the next symbol. */
	EXPECT_NAME(img, (uintptr_t)unit_sized_fn - bias, 0, "unit_sized_fn", 0);
	for (uint64_t k = 1; k < 32; k++)
		EXPECT_NAME(img, (uintptr_t)unit_sized_fn - bias + k, 0, NULL, 0);
	EXPECT_NAME(img, (uintptr_t)unit_nosize_fn - bias, 0, "unit_nosize_fn", 0);
	EXPECT_NAME(img, (uintptr_t)unit_nosize_fn - bias + 31, 0, "unit_nosize_fn", 31);

	/* Mangled names, and the demangled strings are cached (same pointer). */
	{
		uint64_t cxx = (uintptr_t)_ZN4unit7mangledEi - bias;
		uint64_t rs = (uintptr_t)_ZN4unit4rust5thing17h0123456789abcdefE - bias;
		const char *a, *b;

		EXPECT_NAME(img, cxx + 3, UNWIND_SYM_NO_DEMANGLE, "_ZN4unit7mangledEi", 3);
#ifdef HAVE_DEMANGLE
		EXPECT_NAME(img, cxx + 3, 0, "unit::mangled(int)", 3);
		EXPECT_NAME(img, cxx, UNWIND_SYM_NO_PARAMS, "unit::mangled", 0);
		EXPECT_NAME(img, rs + 15, UNWIND_SYM_NO_PARAMS, "unit::rust::thing", 15);
		EXPECT_NAME(img, rs, 0, "unit::rust::thing", 0);
		a = unwind_elf_image_lookup(img, cxx, 0, NULL);
		b = unwind_elf_image_lookup(img, cxx + 1, 0, NULL);
		CHECK(a && a == b, "demangled name not cached");
#else
		EXPECT_NAME(img, cxx, 0, "_ZN4unit7mangledEi", 0);
		(void)rs;
		(void)a;
		(void)b;
#endif
		EXPECT_NAME(img, rs + 16, UNWIND_SYM_NO_DEMANGLE, NULL, 0);
	}
	EXPECT_NAME(img, (uintptr_t)_unit_alias_d - bias + 5, 0, "_unit_alias_d", 5);
}

/* Load bias on made-up layouts where p_vaddr != p_offset and segments
 * share file pages. */
static void test_bias(void)
{
	/* Old non-PIE layout: text and data share file page 0. */
	struct elf_segment old[] = {
		{ .vaddr = 0x400000, .memsz = 0x7a4, .offset = 0, .filesz = 0x7a4,
		  .flags = PF_R | PF_X },
		{ .vaddr = 0x600db8, .memsz = 0x300, .offset = 0xdb8, .filesz = 0x260,
		  .flags = PF_R | PF_W },
	};
	/* A PIE library whose data sits one page above its file offset. */
	struct elf_segment lib[] = {
		{ .vaddr = 0, .memsz = 0x26000, .offset = 0, .filesz = 0x26000,
		  .flags = PF_R },
		{ .vaddr = 0x26000, .memsz = 0x155000, .offset = 0x26000,
		  .filesz = 0x155000, .flags = PF_R | PF_X },
		{ .vaddr = 0x1d1ef0, .memsz = 0xd000, .offset = 0x1d0ef0,
		  .filesz = 0x6000, .flags = PF_R | PF_W },
	};
	struct elf_image img = { .segs = old, .nsegs = 2 };
	struct mapping m = { .start = 0x400000, .end = 0x401000, .offset = 0,
			     .perms = MAPPING_R | MAPPING_X };
	uint64_t bias = 1;
	int r;

	r = unwind_elf_image_bias(&img, &m, &bias);
	CHECK(r == 0 && bias == 0, "old text: %d %#" PRIx64, r, bias);
	m.start = 0x600000;
	m.perms = MAPPING_R | MAPPING_W;
	r = unwind_elf_image_bias(&img, &m, &bias);
	CHECK(r == 0 && bias == 0, "old data: %d %#" PRIx64, r, bias);
	m.perms = MAPPING_R;        /* RELRO, made read-only after relocation */
	r = unwind_elf_image_bias(&img, &m, &bias);
	CHECK(r == 0 && bias == 0, "old relro: %d %#" PRIx64, r, bias);

	img.segs = lib;
	img.nsegs = 3;
	m.start = 0x7f0000027000;   /* text, second page */
	m.offset = 0x27000;
	m.perms = MAPPING_R | MAPPING_X;
	r = unwind_elf_image_bias(&img, &m, &bias);
	CHECK(r == 0 && bias == 0x7f0000000000, "lib text: %d %#" PRIx64, r, bias);
	m.start = 0x7f00001d5000;   /* data, at offset 0x1d4000 */
	m.offset = 0x1d4000;
	m.perms = MAPPING_R | MAPPING_W;
	r = unwind_elf_image_bias(&img, &m, &bias);
	CHECK(r == 0 && bias == 0x7f0000000000, "lib data: %d %#" PRIx64, r, bias);
	m.offset = 0x1d7000;        /* past every segment's file bytes */
	CHECK(unwind_elf_image_bias(&img, &m, &bias) == -ENOENT, "offset in no segment");
	img.nsegs = 0;
	CHECK(unwind_elf_image_bias(&img, &m, &bias) == -ENOENT, "no segments");
}

/* Our own vdso, copied as unwind.c copies a target's: an image in memory,
 * mapped at offset 0, named through .dynsym. */
static void test_vdso(const struct module_map *mm)
{
	struct elf_cache c = { NULL };
	const struct mapping *m = NULL;
	struct elf_image *img;
	uint64_t bias;
	void *copy;
	bool named = false;

	for (size_t i = 0; i < mm->n && !m; i++)
		if (str_eq(mm->v[i].path, "[vdso]"))
			m = &mm->v[i];
	if (!m) {
		printf("SKIP vdso: none mapped\n");
		return;
	}
	copy = malloc(m->end - m->start);
	if (!copy)
		return;
	memcpy(copy, (const void *)(uintptr_t)m->start, m->end - m->start);
	img = unwind_elf_image_from_memory(&c, copy, m->end - m->start, "[vdso]");
	CHECK(img != NULL, "vdso copy is not ELF");
	if (!img)
		return;
	CHECK(unwind_elf_image_bias(img, m, &bias) == 0, "vdso bias");
	CHECK(img->build_id_len > 0, "vdso build-id");
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (!(s->flags & PF_X))
			continue;
		for (uint64_t a = s->vaddr; a < s->vaddr + s->memsz && !named; a += 4) {
			const char *n = unwind_elf_image_lookup(img, a, 0, NULL);

			named = n && (strstr(n, "gettimeofday") || strstr(n, "clock_"));
		}
	}
	CHECK(named, "no vdso function named");
	unwind_elf_cache_free(&c);
}

/* ---- demangling ------------------------------------------------------------ */

static void expect_demangle(const char *mangled, bool params, const char *want, int line)
{
	char *got = unwind_symbol_demangle(mangled, params);

	check_at(want ? str_eq(got, want) : got == NULL, __FILE__, line,
		 "expect_demangle", " unwind_symbol_demangle(%s, %d) = '%s', want '%s'",
		 mangled, params, str_or_null(got), str_or_null(want));
	free(got);
}

static void test_demangle(void)
{
#ifdef HAVE_DEMANGLE
	expect_demangle("_ZN3foo3barEi", true, "foo::bar(int)", __LINE__);
	expect_demangle("_ZN3foo3barEi", false, "foo::bar", __LINE__);
	expect_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", false,
			"std::vector<int, std::allocator<int> >::push_back", __LINE__);
	/* Rust legacy (the hash is dropped) and v0. */
	expect_demangle("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", false,
			"core::ptr::drop_in_place", __LINE__);
	expect_demangle("_RNvNtCs1234_7mycrate3foo3bar", false, "mycrate::foo::bar",
			__LINE__);
	expect_demangle("main", true, NULL, __LINE__);
	expect_demangle("", true, NULL, __LINE__);
	expect_demangle("_Z", true, NULL, __LINE__);
#else
	expect_demangle("_ZN3foo3barEi", true, NULL, __LINE__);
	printf("SKIP demangling checks: built without libiberty\n");
#endif
}

/* ---- libc through /usr/lib/debug/.build-id ---------------------------------- */

/* The LOCAL function of .symtab of the ELF file at path with the largest
 * size, alone at its address: only a symbol table from the debug file can
 * name it.  false if none. */
static bool pick_local_func(const char *path, char *name, size_t name_size,
			    uint64_t *value, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool found = false;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			break;
	}
	if (scn) {
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d && sh.sh_entsize ? d->d_size / sh.sh_entsize : 0;
		GElf_Sym best = { 0 }, s, t;

		for (size_t i = 1; i < n; i++) {
			bool alone = true;

			if (!gelf_getsym(d, (int)i, &s) ||
			    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    GELF_ST_BIND(s.st_info) != STB_LOCAL ||
			    s.st_shndx == SHN_UNDEF || s.st_size <= best.st_size)
				continue;
			for (size_t j = 1; j < n && alone; j++)
				if (j != i && gelf_getsym(d, (int)j, &t) &&
				    t.st_value == s.st_value)
					alone = false;
			if (alone)
				best = s;
		}
		if (best.st_size > 0) {
			const char *nm = elf_strptr(e, sh.sh_link, best.st_name);

			if (nm && strlen(nm) < name_size) {
				strcpy(name, nm);
				*value = best.st_value;
				*size = best.st_size;
				found = true;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static void test_libc_debug(struct elf_cache *c, const struct module_map *mm)
{
	const struct mapping *libc = NULL;
	struct elf_image *img;
	char path[256], hex[130], name[256];
	uint64_t bias, value, size, off;
	const char *got;
	int err;

	for (size_t i = 0; i < mm->n && !libc; i++) {
		const char *p = mm->v[i].path;
		const char *base = p ? strrchr(p, '/') : NULL;

		if (base && (strncmp(base, "/libc.so", 8) == 0 ||
			     strncmp(base, "/libc-", 6) == 0) &&
		    (mm->v[i].perms & MAPPING_X))
			libc = &mm->v[i];
	}
	if (!libc) {
		printf("SKIP libc debug symbols: libc not found in maps\n");
		return;
	}
	img = unwind_elf_cache_get(c, getpid(), libc, &err);
	CHECK(img != NULL, "unwind_elf_cache_get(%s): %s", libc->path, strerror(-err));
	if (!img)
		return;
	CHECK(unwind_elf_image_bias(img, libc, &bias) == 0, "bias of libc");
	if (img->build_id_len < 2) {
		printf("SKIP libc debug symbols: libc has no build-id\n");
		return;
	}
	for (size_t i = 0; i < img->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", img->build_id[i]);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (access(path, R_OK) != 0) {
		printf("SKIP libc debug symbols: no %s (install libc6-dbg)\n", path);
		return;
	}
	if (!pick_local_func(path, name, sizeof(name), &value, &size)) {
		printf("SKIP libc debug symbols: no local function in %s\n", path);
		return;
	}
	printf("libc: looking for %s at %#" PRIx64 " (from %s)\n", name, value, path);
	got = unwind_elf_image_lookup(img, value + size / 2, UNWIND_SYM_NO_DEMANGLE, &off);
	CHECK(str_eq(got, name) && off == size / 2,
	      "libc %#" PRIx64 ": got '%s', want '%s' from %s", value + size / 2,
	      str_or_null(got), name, path);
	got = unwind_elf_image_lookup(img, value + size, UNWIND_SYM_NO_DEMANGLE, &off);
	CHECK(!str_eq(got, name), "libc: '%s' named past its end", name);

	/* The same through a live address: getpid is ours only when this is a
	 * PIE (otherwise &getpid is a PLT slot of the executable). */
	if (unwind_module_map_find(mm, (uintptr_t)getpid) == libc) {
		got = unwind_elf_image_lookup(img, (uintptr_t)getpid - bias, 0, &off);
		CHECK(got && strstr(got, "getpid") && off == 0,
		      "libc getpid named '%s'+%#" PRIx64, str_or_null(got), off);
	}
}

/* ---- truncated and corrupted files -------------------------------------------- */

static unsigned char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *buf = NULL;
	struct stat st;
	size_t done = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    (buf = malloc((size_t)st.st_size)) != NULL) {
		while (done < (size_t)st.st_size) {
			ssize_t r = read(fd, buf + done, (size_t)st.st_size - done);

			if (r <= 0)
				break;
			done += (size_t)r;
		}
	}
	close(fd);
	if (buf && done != (size_t)st.st_size) {
		free(buf);
		return NULL;
	}
	*len = done;
	return buf;
}

static bool write_file(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0)
		return false;
	while (done < len) {
		ssize_t r = write(fd, buf + done, len - done);

		if (r <= 0)
			break;
		done += (size_t)r;
	}
	return close(fd) == 0 && done == len;
}

static volatile unsigned sink;

/* Everything a caller may do with an image: bias for mappings over each
 * segment, reads of the segment bytes, lookups with every flag. */
static void exercise(struct elf_image *img, uint64_t known_vaddr)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		struct mapping m = { 0 };
		uint64_t bias;

		CHECK(s->offset + s->filesz >= s->offset &&
		      (s->filesz == 0 || s->offset + s->filesz <= img->size),
		      "segment %zu [%#" PRIx64 ", +%#" PRIx64 ") outside the file (%zu)",
		      i, s->offset, s->filesz, img->size);
		if (s->filesz > 0 && s->offset + s->filesz <= img->size)
			sink += img->data[s->offset] + img->data[s->offset + s->filesz - 1];
		m.start = 0x10000000;
		m.end = 0x20000000;
		m.offset = s->offset & ~(uint64_t)4095;
		m.perms = MAPPING_R | MAPPING_X;
		if (unwind_elf_image_bias(img, &m, &bias) == 0)
			sink += (unsigned)bias;
		for (uint64_t a = s->vaddr; a < s->vaddr + s->memsz && a >= s->vaddr;
		     a += (s->memsz / 64) + 1) {
			for (unsigned f = 0; f < 4; f++) {
				const char *n = unwind_elf_image_lookup(img, a, f, NULL);

				if (n)
					sink += (unsigned)strlen(n);
			}
		}
	}
	for (unsigned f = 0; f < 4; f++) {
		const char *n = unwind_elf_image_lookup(img, known_vaddr, f, NULL);

		if (n)
			sink += (unsigned)strlen(n);
		n = unwind_elf_image_lookup(img, UINT64_MAX, f, NULL);
		CHECK(n == NULL, "UINT64_MAX named '%s'", n);
	}
}

/* Load buf[0, len) both from a file and from memory (where the sanitizer
 * sees any read past the end). */
static unsigned damaged_tried, damaged_loaded;

static void load_damaged(const char *path, const unsigned char *buf, size_t len,
			 uint64_t known_vaddr, bool must_work)
{
	struct elf_cache c = { NULL };
	struct elf_image *img;
	unsigned char *copy;
	int err = 0;

	if (!write_file(path, buf, len)) {
		CHECK(0, "cannot write %s: %s", path, strerror(errno));
		return;
	}
	img = unwind_elf_cache_open_path(&c, path, &err);
	CHECK(img || err < 0, "NULL image without an error");
	CHECK(!must_work || img, "intact copy not loaded: %s", strerror(-err));
	damaged_tried++;
	if (img) {
		damaged_loaded++;
		exercise(img, known_vaddr);
	}
	if (must_work && img) {
		const char *n = unwind_elf_image_lookup(img, known_vaddr, 0, NULL);

		CHECK(str_eq(n, "unit_global_fn"), "intact copy names '%s'", str_or_null(n));
	}
	unwind_elf_cache_free(&c);
	unlink(path);

	copy = malloc(len ? len : 1);
	if (!copy)
		return;
	memcpy(copy, buf, len);
	img = unwind_elf_image_from_memory(&c, copy, len, "[damaged]");
	if (img)
		exercise(img, known_vaddr);
	unwind_elf_cache_free(&c);
}

static void test_damaged(unsigned seed)
{
	char dir[] = "/tmp/unit-symtab.XXXXXX";
	char path[sizeof(dir) + 16];
	unsigned char *orig, *buf;
	size_t len;
	Elf64_Ehdr eh;

	orig = read_file("/proc/self/exe", &len);
	if (!orig || len < sizeof(eh)) {
		printf("SKIP damaged ELF: cannot read /proc/self/exe\n");
		free(orig);
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		free(orig);
		return;
	}
	snprintf(path, sizeof(path), "%s/elf", dir);

	for (size_t k = 0; k <= 16; k++)
		load_damaged(path, orig, len * k / 16, self_text_vaddr, k == 16);
	/* Just the headers, cut at odd places. */
	for (size_t l = 1; l < 256 && l < len; l += 7)
		load_damaged(path, orig, l, self_text_vaddr, false);

	buf = malloc(len);
	if (!buf) {
		free(orig);
		rmdir(dir);
		return;
	}
	memcpy(&eh, orig, sizeof(eh));
	srand(seed);
	for (int iter = 0; iter < 400; iter++) {
		int flips = 1 + rand() % 8;

		memcpy(buf, orig, len);
		for (int f = 0; f < flips; f++) {
			uint64_t base = 0, span = sizeof(eh);

			/* ELF header, program headers or section headers. */
			switch (rand() % 3) {
			case 1:
				base = eh.e_phoff;
				span = (uint64_t)eh.e_phnum * eh.e_phentsize;
				break;
			case 2:
				base = eh.e_shoff;
				span = (uint64_t)eh.e_shnum * eh.e_shentsize;
				break;
			}
			if (base >= len || span == 0)
				continue;
			if (span > len - base)
				span = len - base;
			buf[base + (uint64_t)rand() % span] ^= (unsigned char)(1 + rand() % 255);
		}
		load_damaged(path, buf, len, self_text_vaddr, false);
	}
	free(buf);
	free(orig);
	printf("damaged ELF: %u of %u copies loaded, none crashed\n",
	       damaged_loaded, damaged_tried);
	unlink(path);
	if (rmdir(dir) != 0)
		CHECK(0, "rmdir %s: %s", dir, strerror(errno));
}

/* ---- .gnu_debuglink ----------------------------------------------------------- */

/* Does a note of the summary (unwind_skipped_next) hold text? */
static bool noted(const char *text)
{
	size_t it = 0;

	for (const char *l; (l = unwind_skipped_next(&it));)
		if (strstr(l, text))
			return true;
	return false;
}

/* The symbol tables' budgets (unwind/budget.h): a table is charged to the
 * run's while it lives and given back whole; one over the module's budget
 * (lowered with STACKSPY_TEST_SYMBOL_BUDGET) or the run's is not taken,
 * said naming the file, and what was charged for it goes back. */
static void test_budgets(void)
{
	uint64_t before = unwind_budget_used(UNWIND_BUDGET_SYMBOLS);
	struct elf_cache c = { NULL };
	struct elf_image *img;
	const char *n;
	char path[64];
	int err;

	img = unwind_elf_cache_open_path(&c, "/proc/self/exe", &err);
	CHECK(img != NULL, "open /proc/self/exe: %s", strerror(-err));
	if (!img)
		return;
	n = unwind_elf_image_lookup(img, self_text_vaddr, UNWIND_SYM_NO_DEMANGLE, NULL);
	CHECK(n && strcmp(n, "unit_global_fn") == 0, "own table: %s", n ? n : "(none)");
	CHECK(unwind_budget_used(UNWIND_BUDGET_SYMBOLS) > before, "a table is charged");
	unwind_elf_cache_free(&c);
	CHECK(unwind_budget_used(UNWIND_BUDGET_SYMBOLS) == before, "and given back whole");

	/* Its .symtab has more than 4 x 10 entries: not read. */
	setenv("STACKSPY_TEST_SYMBOL_BUDGET", "10", 1);
	img = unwind_elf_cache_open_path(&c, "/proc/self/exe", &err);
	n = img ? unwind_elf_image_lookup(img, self_text_vaddr,
					  UNWIND_SYM_NO_DEMANGLE, NULL) : NULL;
	CHECK(img && !n, "a table over the module's budget names nothing: %s", n ? n : "(none)");
	CHECK(noted("/proc/self/exe not read: its .symtab holds more than the 10 functions"),
	      "the module's budget is said, naming the file");
	unwind_elf_cache_free(&c);
	unsetenv("STACKSPY_TEST_SYMBOL_BUDGET");
	CHECK(unwind_budget_used(UNWIND_BUDGET_SYMBOLS) == before, "nothing kept for it");

	/* The run's tables hold all but a little: the next table is refused
	 * as it grows, and what it took goes back. */
	uint64_t rest = unwind_budget_limit(UNWIND_BUDGET_SYMBOLS) - before;
	CHECK(unwind_budget_take(UNWIND_BUDGET_SYMBOLS, rest - 1000), "fill the run's budget");
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)getpid());
	img = unwind_elf_cache_open_path(&c, path, &err);
	n = img ? unwind_elf_image_lookup(img, self_text_vaddr,
					  UNWIND_SYM_NO_DEMANGLE, NULL) : NULL;
	CHECK(img && !n, "a table over the run's budget names nothing: %s", n ? n : "(none)");
	char want[160];
	snprintf(want, sizeof(want), "%s not read: the symbol tables of this run hold their limit",
		 path);
	CHECK(noted(want), "the run's budget is said, naming the file");
	unwind_elf_cache_free(&c);
	unwind_budget_give(UNWIND_BUDGET_SYMBOLS, rest - 1000);
	CHECK(unwind_budget_used(UNWIND_BUDGET_SYMBOLS) == before, "the run's budget back");
	CHECK(!unwind_budget_take(UNWIND_BUDGET_SYMBOLS, UINT64_MAX) &&
	      unwind_budget_used(UNWIND_BUDGET_SYMBOLS) == before, "a charge that cannot fit");
}

static const char *lookup_in(const char *path, uint64_t vaddr)
{
	static char name[64];
	struct elf_cache c = { NULL };
	struct elf_image *img;
	const char *n;
	int err;

	img = unwind_elf_cache_open_path(&c, path, &err);
	if (!img)
		return NULL;
	n = unwind_elf_image_lookup(img, vaddr, UNWIND_SYM_NO_DEMANGLE, NULL);
	snprintf(name, sizeof(name), "%s", n ? n : "");
	unwind_elf_cache_free(&c);
	return n ? name : NULL;
}

/* A stripped copy of this program with a .gnu_debuglink to its debug
 * symbols, found next to it, then in .debug/, and refused when the CRC
 * does not match.  Needs objcopy. */
static void test_debuglink(void)
{
	char dir[] = "/tmp/unit-symtab.XXXXXX";
	char cmd[1024], exe[64], dbg[64], dotdebug[64], moved[80];
	const char *n;
	FILE *f;

	if (system("objcopy --version >/dev/null 2>&1") != 0) {
		printf("SKIP debuglink: no objcopy\n");
		return;
	}
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(exe, sizeof(exe), "%s/prog", dir);
	snprintf(dbg, sizeof(dbg), "%s/prog.dbg", dir);
	snprintf(dotdebug, sizeof(dotdebug), "%s/.debug", dir);
	snprintf(moved, sizeof(moved), "%s/prog.dbg", dotdebug);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug /proc/%d/exe %s && "
		 "objcopy --strip-all --add-gnu-debuglink=%s /proc/%d/exe %s",
		 (int)getpid(), dbg, dbg, (int)getpid(), exe);
	if (system(cmd) != 0) {
		printf("SKIP debuglink: objcopy failed\n");
		goto out;
	}
	n = lookup_in(exe, self_text_vaddr);
	CHECK(str_eq(n, "unit_global_fn"), "debuglink next to the file: '%s'", str_or_null(n));

	if (mkdir(dotdebug, 0700) == 0 && rename(dbg, moved) == 0) {
		n = lookup_in(exe, self_text_vaddr);
		CHECK(str_eq(n, "unit_global_fn"), "debuglink in .debug/: '%s'", str_or_null(n));
		/* One more byte: still ELF, not the file the link's CRC names,
		 * but with the module's build-id, which decides (as elfutils
		 * does: the CRC would read the whole file). */
		f = fopen(moved, "a");
		if (f) {
			fputc(0, f);
			fclose(f);
			n = lookup_in(exe, self_text_vaddr);
			CHECK(str_eq(n, "unit_global_fn"), "debug file of the same build-id: '%s'",
			      str_or_null(n));
		}
		/* Neither with a build-id: the CRC decides, and a file that is
		 * not the one the link names is not used. */
		snprintf(cmd, sizeof(cmd),
			 "objcopy --remove-section=.note.gnu.build-id %s %s.nb && mv %s.nb %s && "
			 "objcopy --remove-section=.note.gnu.build-id %s %s.nb && "
			 "objcopy --remove-section=.gnu_debuglink --add-gnu-debuglink=%s %s.nb %s",
			 moved, moved, moved, moved, exe, exe, moved, exe, exe);
		if (system(cmd) == 0) {
			n = lookup_in(exe, self_text_vaddr);
			CHECK(str_eq(n, "unit_global_fn"), "no build-id, the CRC right: '%s'",
			      str_or_null(n));
			f = fopen(moved, "a");
			if (f) {
				fputc(0, f);
				fclose(f);
				n = lookup_in(exe, self_text_vaddr);
				CHECK(n == NULL, "debug file with a bad CRC used: '%s'", n);
			}
		} else {
			CHECK(0, "objcopy could not remove the build-ids");
		}
		snprintf(cmd, sizeof(cmd), "%s.nb", exe);
		unlink(cmd);
	} else {
		CHECK(0, "cannot move the debug file: %s", strerror(errno));
	}
out:
	unlink(exe);
	unlink(dbg);
	unlink(moved);
	rmdir(dotdebug);
	if (rmdir(dir) != 0)
		CHECK(0, "rmdir %s: %s", dir, strerror(errno));
}

/* ---- replaced and deleted files ----------------------------------------------- */

static const struct mapping *mapping_of(struct module_map *mm, const void *addr)
{
	unwind_module_map_free(mm);
	if (unwind_module_map_read(getpid(), mm) != 0)
		return NULL;
	return unwind_module_map_find(mm, (uintptr_t)addr);
}

/* Map a copy of this program from a file whose name has spaces, then check
 * that a different file at the mapped path is never used, and that the
 * mapping is still named once its file is deleted (through map_files, which
 * needs privileges: skipped without them). */
static void test_replaced(void)
{
	char dir[] = "/tmp/unit-symtab.XXXXXX";
	char path[80], other[80];
	struct module_map mm = { NULL, 0 };
	struct elf_cache c = { NULL };
	const struct mapping *m;
	struct mapping fake;
	struct elf_image *img;
	unsigned char *orig, *repl;
	size_t len, rlen;
	void *map = MAP_FAILED;
	uint64_t bias;
	const char *n;
	int fd, err = 0;

	orig = read_file("/proc/self/exe", &len);
	repl = read_file("/bin/true", &rlen);
	if (!orig || !repl || !mkdtemp(dir)) {
		printf("SKIP replaced files: cannot read /proc/self/exe or /bin/true\n");
		free(orig);
		free(repl);
		return;
	}
	snprintf(path, sizeof(path), "%s/lib with spaces.so", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	if (!write_file(path, orig, len) || !write_file(other, repl, rlen)) {
		CHECK(0, "cannot write to %s", dir);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
	}
	CHECK(map != MAP_FAILED, "mmap %s: %s", path, strerror(errno));
	if (map == MAP_FAILED)
		goto out;

	m = mapping_of(&mm, map);
	CHECK(m && str_eq(m->path, path) && !m->deleted && m->offset == 0,
	      "maps line of '%s': '%s'", path, m ? str_or_null(m->path) : "none");
	if (!m)
		goto out;
	img = unwind_elf_cache_get(&c, getpid(), m, &err);
	CHECK(img && unwind_elf_image_bias(img, m, &bias) == 0, "mapped copy: %s", strerror(-err));
	n = img ? unwind_elf_image_lookup(img, self_text_vaddr, 0, NULL) : NULL;
	CHECK(str_eq(n, "unit_global_fn"), "mapped copy names '%s'", str_or_null(n));
	unwind_elf_cache_free(&c);

	/* Another file at the mapped path: its inode differs. */
	fake = *m;
	fake.path = other;
	err = 0;
	img = unwind_elf_cache_get(&c, getpid(), &fake, &err);
	n = img ? unwind_elf_image_lookup(img, self_text_vaddr, 0, NULL) : NULL;
	CHECK(img ? str_eq(n, "unit_global_fn") : err == -ESTALE,
	      "replaced file: image %p names '%s', error %d", (void *)img,
	      str_or_null(n), err);
	unwind_elf_cache_free(&c);

	unlink(path);
	m = mapping_of(&mm, map);
	CHECK(m && str_eq(m->path, path) && m->deleted, "deleted: '%s' %d",
	      m ? str_or_null(m->path) : "none", m ? m->deleted : -1);
	if (m) {
		err = 0;
		img = unwind_elf_cache_get(&c, getpid(), m, &err);
		if (img) {
			n = unwind_elf_image_lookup(img, self_text_vaddr, 0, NULL);
			CHECK(str_eq(n, "unit_global_fn"), "deleted copy names '%s'",
			      str_or_null(n));
		} else {
			CHECK(err == -EPERM || err == -EACCES, "deleted: %s", strerror(-err));
			printf("SKIP deleted files: map_files: %s\n", strerror(-err));
		}
		unwind_elf_cache_free(&c);
	}
out:
	if (map != MAP_FAILED)
		munmap(map, len);
	unwind_module_map_free(&mm);
	unlink(path);
	unlink(other);
	if (rmdir(dir) != 0)
		CHECK(0, "rmdir %s: %s", dir, strerror(errno));
	free(orig);
	free(repl);
}

/* ---- small cases -------------------------------------------------------------- */

static void test_edges(struct elf_cache *c)
{
	struct mapping m = { 0 };
	unsigned char *junk;
	int err = 0;

	CHECK(unwind_elf_cache_open_path(c, "/nonexistent/stackspy", &err) == NULL &&
	      err == -ENOENT, "missing file: %d", err);
	err = 0;
	CHECK(unwind_elf_cache_open_path(c, "/proc/self/maps", &err) == NULL && err == -ENOEXEC,
	      "non-regular file: %d", err);
	err = 0;
	CHECK(unwind_elf_cache_open_path(c, "/", &err) == NULL && err < 0, "directory");

	m.start = 0x1000;
	m.end = 0x2000;
	err = 0;
	CHECK(unwind_elf_cache_get(c, getpid(), &m, &err) == NULL && err == -ENOENT,
	      "anonymous mapping: %d", err);
	m.path = (char *)"[vdso]";
	CHECK(unwind_elf_cache_get(c, getpid(), &m, &err) == NULL, "pseudo-path opened");

	junk = malloc(4096);
	if (junk) {
		memset(junk, 0x7f, 4096);
		CHECK(unwind_elf_image_from_memory(c, junk, 4096, "junk") == NULL, "junk is ELF");
	}
	CHECK(unwind_elf_image_from_memory(c, NULL, 0, "null") == NULL, "NULL buffer");
	CHECK(unwind_elf_image_lookup(NULL, 0, 0, NULL) == NULL, "NULL image");
}

/* A PLT stub of our own executable is named "func@plt" (plt.c, with the
 * stub layout of the arch/ table). */
static void test_plt(struct elf_cache *c, const struct module_map *mm)
{
	int (*volatile gfn)(int) = unit_global_fn;
	uint64_t bias;
	Elf64_Shdr plt;
	const struct arch *a = arch_host();
	struct elf_image *img = image_at(c, mm, (uintptr_t)gfn, &bias, NULL);

	if (!img || !a || a->plt_entry == 0)
		return;
	uint64_t first;
	if (unwind_elf_find_section(img->data, img->size, ".plt.sec", &plt))
		first = plt.sh_addr;
	else if (unwind_elf_find_section(img->data, img->size, ".plt", &plt))
		first = plt.sh_addr + a->plt_header;
	else {
		printf("SKIP plt: %s has no .plt\n", img->path);
		return;
	}
	uint64_t off = UINT64_MAX;
	const char *name = unwind_elf_image_lookup(img, first + 4, UNWIND_SYM_NO_DEMANGLE, &off);
	size_t len = name ? strlen(name) : 0;
	CHECK(name && len > 4 && strcmp(name + len - 4, "@plt") == 0 && off == 4,
	      "first PLT stub at %#" PRIx64 " named %s+%" PRIu64, first + 4,
	      str_or_null(name), off);
	/* The last byte of the table is the end of the last stub: a wrong
	 * stub size in the table would leave it unnamed or mid-stub. */
	uint64_t last = plt.sh_addr + plt.sh_size - 1;
	name = unwind_elf_image_lookup(img, last, UNWIND_SYM_NO_DEMANGLE, &off);
	CHECK(name && off == a->plt_entry - 1,
	      "last PLT byte %#" PRIx64 " named %s+%" PRIu64, last, str_or_null(name), off);
}

/* A mapping held during a public call survives a reload of the map
 * (unwind/target.h, "Who owns what"): the old array is retired, not
 * freed, until the outermost call returns; module names outlive reloads. */
static void test_reload_lifetime(void)
{
	int err = 0;
	struct unwind_target *t = unwind_target_open(getpid(), &err);
	CHECK(t != NULL, "unwind_target_open(self): %s", strerror(-err));
	if (!t)
		return;
	uint64_t addr = (uint64_t)(uintptr_t)&test_reload_lifetime;
	struct unwind_symbol sym;
	CHECK(unwind_symbolize(t, addr, false, 0, &sym) == 0 && sym.module,
	      "symbolize self");
	const char *module = sym.module;
	char *copy = module ? strdup(module) : NULL;

	unwind_target_enter(t);
	struct mapping *m = unwind_target_mapping(t, addr);
	CHECK(m != NULL, "own code mapped");
	struct mapping *old_v = t->maps.v;
	uint64_t start = m ? m->start : 0;
	unsigned gen = unwind_target_generation(t);
	CHECK(unwind_target_reload_maps(t) == 0, "reload while busy");
	CHECK(unwind_target_generation(t) != gen, "reload bumps the generation");
	CHECK(t->nretired == 1 && t->retired[0].v == old_v,
	      "old map retired, not freed, while a call runs");
	CHECK(m && m->start == start && m->path, "held mapping still readable");
	unwind_target_leave(t);
	CHECK(t->nretired == 0, "retired maps freed at the safe point");

	CHECK(unwind_target_reload_maps(t) == 0 && t->nretired == 0,
	      "reload outside a call frees at once");
	CHECK(module && copy && strcmp(module, copy) == 0,
	      "module name survives reloads");
	CHECK(unwind_symbolize(t, addr, false, 0, &sym) == 0 && sym.module == module,
	      "module names are interned");
	free(copy);
	unwind_target_free(t);
}

/* How far a symbol of size 0 reaches (unwind_x86_code_reach, which bounds such
 * symbols in symtab.c): the code its branches reach from its start. */
static void test_code_reach(void)
{
	/* musl's memset in small: a branch forward over a ret, a loop by a
	 * backward jump, rep stos; then another (hidden) function. */
	static const unsigned char memset_like[] = {
		0x48, 0x83, 0xfa, 0x7e,             /* 0: cmp $0x7e,%rdx */
		0x77, 0x04,                         /* 4: ja 10 */
		0x48, 0x89, 0xf8,                   /* 6: mov %rdi,%rax */
		0xc3,                               /* 9: ret */
		0xf3, 0x48, 0xab,                   /* 10: rep stos */
		0x85, 0xd2,                         /* 13: test %edx,%edx */
		0x75, 0xf9,                         /* 15: jne 10 */
		0xeb, 0xf3,                         /* 17: jmp 6 */
		0x53,                               /* 19: push %rbx (the next function) */
		0xe8, 0, 0, 0, 0,                   /* 20: call */
		0x5b, 0xc3,                         /* 25: pop %rbx; ret */
	};
	CHECK_EQ_U64(unwind_x86_code_reach(memset_like, sizeof(memset_like), sizeof(memset_like),
					   0x1000), 19);
	/* A tail call out of reach ends the way. */
	static const unsigned char tail[] = {
		0x31, 0xc0,                         /* xor %eax,%eax */
		0xe9, 0x00, 0x10, 0x00, 0x00,       /* jmp far */
		0x90, 0x90, 0xc3,
	};
	CHECK_EQ_U64(unwind_x86_code_reach(tail, sizeof(tail), sizeof(tail), 0x1000), 7);
	/* An indirect jump (a table): not known, the symbol keeps its reach. */
	static const unsigned char table[] = {
		0x41, 0xff, 0xe3,                   /* jmp *%r11 */
		0xc3,
	};
	CHECK_EQ_U64(unwind_x86_code_reach(table, sizeof(table), sizeof(table), 0x1000), 0);
	/* Bytes that run past the reach before any end: not known either. */
	static const unsigned char open_end[] = { 0x90, 0x90, 0x90, 0x90 };
	CHECK_EQ_U64(unwind_x86_code_reach(open_end, sizeof(open_end), sizeof(open_end),
					   0x1000), 0);
}

/* VEX- and EVEX-coded instructions (AVX, AVX-512: x264's and x265's
 * assembly): their lengths, as objdump decodes them; a leaf of them is
 * read to its ret. */
static void test_vex_len(void)
{
	static const struct { unsigned char b[12]; size_t n, len; } v[] = {
		{ { 0xc5, 0xfa, 0x6f, 0x02 }, 4, 4 },                 /* vmovdqu (%rdx),%xmm0 */
		{ { 0xc4, 0x81, 0x71, 0xe0, 0x0c, 0x08 }, 6, 6 },     /* vpavgb (%r8,%r9,1),... */
		{ { 0xc5, 0xf9, 0x7f, 0x0c, 0x37 }, 5, 5 },           /* vmovdqa %xmm1,(%rdi,%rsi,1) */
		{ { 0xc5, 0xf8, 0x77 }, 3, 3 },                       /* vzeroupper */
		{ { 0xc4, 0xe3, 0x79, 0x0f, 0xc1, 0x08 }, 6, 6 },     /* vpalignr $8 (0f3a: imm8) */
		{ { 0xc5, 0xfd, 0x70, 0xc8, 0x1b }, 5, 5 },           /* vpshufd $0x1b (0f 70: imm8) */
		{ { 0xc5, 0xfe, 0x6f, 0x1d, 0x78, 0x56, 0x34, 0x12 }, 8, 8 },  /* rip-relative */
		{ { 0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x00 }, 6, 6 },     /* vmovdqa32 (%rax),%zmm0 */
		{ { 0x62, 0xf1, 0x7d, 0x48, 0x7f, 0x40, 0x01 }, 7, 7 },  /* ... %zmm0,0x40(%rax) */
		{ { 0x62, 0xf3, 0x75, 0x48, 0x25, 0xc2, 0x96 }, 7, 7 },  /* vpternlogd $0x96 */
		{ { 0xc5, 0xfa, 0x6f, 0x1d, 0x78, 0x56 }, 6, 0 },     /* cut short: not decoded */
		{ { 0x62, 0xf9, 0x7d, 0x48, 0x6f, 0x00 }, 6, 0 },     /* EVEX P0 bit 3 set: not one */
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK_EQ_U64(unwind_x86_insn_len(v[i].b, v[i].n, 0x1000), v[i].len);
	/* x264's pixel_avg leaf: two loads, two averages, two stores, three
	 * lea, sub, jg back, ret: its way out is known. */
	static const unsigned char avg[] = {
		0xc5, 0xfa, 0x6f, 0x02, 0xc5, 0xfa, 0x6f, 0x0c, 0x0a,
		0xc4, 0xc1, 0x79, 0xe0, 0x00, 0xc4, 0x81, 0x71, 0xe0, 0x0c, 0x08,
		0xc5, 0xf9, 0x7f, 0x07, 0xc5, 0xf9, 0x7f, 0x0c, 0x37,
		0x48, 0x8d, 0x14, 0x4a, 0x4f, 0x8d, 0x04, 0x48, 0x48, 0x8d, 0x3c, 0x77,
		0x83, 0xe8, 0x02, 0x7f, 0xd2, 0xc3,
	};
	CHECK_EQ_U64(unwind_x86_code_reach(avg, sizeof(avg), sizeof(avg), 0x1000), sizeof(avg));
}

int main(void)
{
	struct module_map mm;
	struct elf_cache cache = { NULL };
	const char *env = getenv("UNIT_SYMTAB_SEED");
	unsigned seed = env ? (unsigned)strtoul(env, NULL, 0) : 20240611u;
	int r;

	printf("seed %u (set UNIT_SYMTAB_SEED to change)\n", seed);
	test_maps_parse();
	test_maps_fuzz(seed);
	test_demangle();
	test_bias();
	test_code_reach();
	test_vex_len();

	r = unwind_module_map_read(getpid(), &mm);
	if (r != 0) {
		printf("SKIP: cannot read /proc/self/maps: %s\n", strerror(-r));
		return check_failures ? 1 : 77;
	}
	test_self(&cache, &mm);
	test_libc_debug(&cache, &mm);
	test_vdso(&mm);
	test_edges(&cache);
	test_plt(&cache, &mm);
	test_reload_lifetime();
	unwind_elf_cache_free(&cache);
	unwind_module_map_free(&mm);

	if (self_text_vaddr) {
		test_budgets();
		test_debuglink();
		test_replaced();
		test_damaged(seed);
	}

	return check_exit_status("unit-symtab");
}
