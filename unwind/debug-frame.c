/* unwind/debug-frame.c - the CFI of .debug_frame, rewritten in .eh_frame's
 * form for libunwind's remote API (engine-cfi.c serves it).
 *
 * Go binaries, and C built with -fno-asynchronous-unwind-tables -g, keep
 * their CFI in .debug_frame only (Go's compressed, SHF_COMPRESSED), in the
 * binary or in its separate debug file.  libunwind 1.6 reads .debug_frame
 * only through dwarf_find_debug_frame, which Debian does not export, and
 * its UNW_INFO_FORMAT_TABLE path takes a private structure whose layout
 * changed after 1.8; what is more, it reads the CFI from our own memory but
 * evaluates DW_CFA_*expression bytes through the remote accessors.  So the
 * section is rewritten instead: each CIE gets the .eh_frame id 0 and the
 * augmentation "zR" with absolute 8-byte FDE addresses (emit_cie), each
 * FDE a CIE pointer relative to itself and its start relocated by the
 * load bias;
 * the CFA instructions are the same in both sections and are copied as
 * they are.  A sorted (start, FDE) table follows, in the format of
 * .eh_frame_hdr's (UNW_INFO_FORMAT_REMOTE_TABLE).  engine-cfi.c places the
 * whole at an address no process can map and serves reads there from
 * this buffer, so libunwind parses it with the accessors it uses for
 * .eh_frame, expressions included.  The entries are read by cfi-read.c
 * (the one CIE/FDE reader); this file writes them again.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "unwind/budget.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"
#include "unwind/symbols.h"

/* What the rewrite needs to know about the module. */
struct df_job {
	uint64_t bias, base;      /* load bias; address the buffer is served at */
	uint64_t lo, hi;          /* ELF vaddr range of its PT_LOADs */
	uint64_t max;             /* bytes the rewrite and its tables may take
				     (unwind_budget_cfi_module of the module) */
	const char *path;         /* the module, for a note */
	struct debug_frame *out;
	int err;                  /* of the last attempt */
};

/* Growing output buffer. */
struct df_buf {
	unsigned char *p;
	size_t len, cap;
	size_t max;               /* what the rewrite may take (job's max less
				     its tables of CIEs and FDEs) */
	bool failed;
	bool too_big;             /* failed by max, not ENOMEM */
};

static unsigned char *buf_grow(struct df_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	/* b->len <= b->max: the subtraction cannot wrap */
	if (n > b->max - b->len) {
		b->failed = b->too_big = true;
		return NULL;
	}
	if (BASE_GROW(b->p, b->cap, b->len + n, 4096) < 0) {
		b->failed = true;
		return NULL;
	}
	b->len += n;
	return b->p + b->len - n;
}

static void buf_put(struct df_buf *b, const void *src, size_t n)
{
	unsigned char *d = buf_grow(b, n);

	if (d)
		memcpy(d, src, n);
}

static void buf_put32(struct df_buf *b, uint32_t v)
{
	buf_put(b, &v, 4);
}

static void buf_put64(struct df_buf *b, uint64_t v)
{
	buf_put(b, &v, 8);
}

struct cie_map {
	uint64_t in_off;          /* offset in the section */
	uint64_t out_off;         /* offset of the rewritten CIE */
	struct cfi_cie cie;
};

struct fde_ent {
	uint64_t start;           /* ELF vaddr */
	uint64_t out_off;
};

/* Write a CIE in the one form both rewrites give (libunwind reads it as
 * .eh_frame's): id 0, the version (1: a byte for the return address
 * column, else 3), augmentation "zR" ("zRS" for a signal frame) with FDE
 * addresses absolute and 8 bytes, then the fields (alignment factors and
 * return address column) and the initial instructions as they were.
 * Returns false when out of memory. */
static bool emit_cie(struct df_buf *b, unsigned version, bool signal,
		     const unsigned char *fields, size_t nfields,
		     const unsigned char *ins, size_t nins)
{
	uint64_t len_at = b->len;

	buf_put32(b, 0);                        /* length, below */
	buf_put32(b, 0);                        /* .eh_frame's CIE id */
	buf_put(b, (const unsigned char[]){ version == 1 ? 1 : 3 }, 1);
	buf_put(b, signal ? "zRS" : "zR", signal ? 4 : 3);
	buf_put(b, fields, nfields);
	buf_put(b, (const unsigned char[]){ 1, CFI_PE_absptr }, 2);
	buf_put(b, ins, nins);
	if (b->failed)
		return false;
	uint32_t len = (uint32_t)(b->len - len_at - 4);

	memcpy(b->p + len_at, &len, 4);
	return true;
}

/* Rewrite CIE c (cfi-read.c read it) into b.  false when out of memory. */
static bool rewrite_cie(struct df_buf *b, const struct cfi_cie *c)
{
	return emit_cie(b, c->version, c->signal, c->fields, (size_t)(c->fields_end - c->fields),
			c->ins, (size_t)(c->end - c->ins));
}

/* Write an FDE of the CIE rewritten at cie_off: the code [start + bias,
 * + range) and its instructions. */
static void emit_fde(struct df_buf *b, uint64_t cie_off, uint64_t start, uint64_t range,
		     const unsigned char *ins, size_t nins)
{
	uint64_t at = b->len;

	buf_put32(b, (uint32_t)(4 + 16 + 1 + nins));
	/* relative to the pointer field itself */
	buf_put32(b, (uint32_t)(at + 4 - cie_off));
	buf_put64(b, start);
	buf_put64(b, range);
	buf_put(b, "", 1);                      /* no augmentation data */
	buf_put(b, ins, nins);
}

/* One more slot at the end of the array *v of *n elements of size sz
 * (capacity *cap, doubled from first): its address, or NULL (ENOMEM). */
static void *grow_one(void **v, size_t *n, size_t *cap, size_t sz, size_t first)
{
	if (base_grow(v, cap, *n + 1, sz, first) < 0)
		return NULL;
	return (char *)*v + (*n)++ * sz;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->out_off < y->out_off ? -1 : x->out_off > y->out_off;
}

/* A CIE, as the FDEs that point at it need it. */
static const struct cie_map *cie_find(const struct cie_map *v, size_t n, uint64_t off)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].in_off == off)
			return &v[mid];
		if (v[mid].in_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The entries of b are written: end them, add the sorted (start, FDE)
 * table and hand b over to job->out, charged to the run's CFI budget.
 * 0, -ENOENT (no FDE), -ENOMEM, -EFBIG (over the module's limit) or
 * -ENOSPC (over the run's, said). */
static int finish(struct df_buf *b, struct fde_ent *fdes, size_t nfdes, struct df_job *job)
{
	if (nfdes == 0)
		return -ENOENT;
	qsort(fdes, nfdes, sizeof(*fdes), cmp_fde);
	buf_put32(b, 0);                        /* end of the entries */
	while (b->len % 8)
		buf_put(b, "", 1);
	uint64_t table = b->len;

	/* (start, FDE) pairs, both relative to base (what libunwind calls
	 * segbase) in 32 bits: engine-cfi.c picks base so that the module's
	 * code is within 2 GiB above it. */
	for (size_t i = 0; i < nfdes; i++) {
		buf_put32(b, (uint32_t)(fdes[i].start + job->bias - job->base));
		buf_put32(b, (uint32_t)fdes[i].out_off);
	}
	buf_put64(b, 0);       /* slack: libunwind reads whole words */
	if (b->failed)
		return b->too_big ? -EFBIG : -ENOMEM;
	if (b->len > INT32_MAX)
		return -EFBIG;
	/* Kept while the module is (per target): the run's CFI budget. */
	if (!unwind_budget_take(UNWIND_BUDGET_CFI, b->len)) {
		char a[32];
		unwind_note_skipped(job->path, "not read: the run's CFI copies hold their limit "
				    "(%s); its frames are found without its rewritten CFI",
				    unwind_size_text(unwind_budget_limit(UNWIND_BUDGET_CFI), a,
						     sizeof(a)));
		return -ENOSPC;
	}
	unsigned char *fit = realloc(b->p, b->len);
	if (fit)
		b->p = fit;
	job->out->buf = b->p;
	job->out->len = b->len;
	job->out->table_off = table;
	job->out->count = nfdes;
	b->p = NULL;
	return 0;
}

/* ---- .eh_frame without .eh_frame_hdr --------------------------------------
 * GNU ld writes no .eh_frame_hdr for static links unless asked
 * (--eh-frame-hdr), and neither does musl-gcc's link: libunwind's remote
 * API finds FDEs only through such a table.  So the .eh_frame is
 * rewritten as the .debug_frame is: each CIE keeps its version, alignment
 * factors, return address column and initial instructions, and gets the
 * augmentation "zR" (plus "S" for a signal frame) with absolute 8-byte FDE
 * addresses; personality and LSDA pointers, which unwinding does not use,
 * are dropped.  Each FDE's start is decoded (pc-relative to where the
 * section is mapped, as the linker wrote it) and relocated by the bias.
 * tests/accuracy-builds.test. */


/* Rewrite sec (.debug_frame or .eh_frame) into job->out.  0, -ENOENT (no
 * usable FDE), -ENOMEM or -EFBIG. */
static int rewrite(const struct cfi_section *sec, struct df_job *job)
{
	struct df_buf b = { .max = (size_t)job->max };
	struct cie_map *cies = NULL;
	struct fde_ent *fdes = NULL;
	size_t ncies = 0, ciecap = 0, nfdes = 0, fdecap = 0;
	int ret;

	/* Pass 1: the CIEs first, so that every FDE follows its CIE as
	 * .eh_frame's backward CIE pointers want. */
	for (int pass = 0; pass < 2; pass++) {
		size_t off = 0;
		struct cfi_entry e;

		while (cfi_next_entry(sec, &off, &e) > 0) {
			if (pass == 0 && e.is_cie) {
				struct cie_map c = { .in_off = e.off, .out_off = b.len };

				if (!cfi_cie_parse(sec, &e, &c.cie))
					continue;
				if (!rewrite_cie(&b, &c.cie))
					goto nomem;
				struct cie_map *nc = grow_one((void **)&cies, &ncies, &ciecap,
							      sizeof(*cies), 16);

				if (!nc)
					goto nomem;
				*nc = c;
			} else if (pass == 1 && !e.is_cie) {
				const struct cie_map *c = cie_find(cies, ncies, e.cie_off);
				struct cfi_fde f;

				/* FDEs of discarded sections (start 0) and of
				 * code outside the module are left out. */
				if (c && cfi_fde_parse(sec, &e, &c->cie, &f) &&
				    f.range != 0 && f.start >= job->lo && f.start < job->hi &&
				    f.range <= job->hi - f.start) {
					struct fde_ent *fe = grow_one((void **)&fdes, &nfdes, &fdecap,
								      sizeof(*fdes), 256);

					if (!fe)
						goto nomem;
					fe->start = f.start;
					fe->out_off = b.len;
					emit_fde(&b, c->out_off, f.start + job->bias, f.range, f.ins,
						 (size_t)(f.end - f.ins));
				}
			}
			/* The tables of CIEs and FDEs count too: a section of
			 * a million small CIEs would else take more for them
			 * than the rewrite. */
			if (!b.failed && (uint64_t)ciecap * sizeof(*cies) + (uint64_t)fdecap *
			    sizeof(*fdes) + b.cap > job->max)
				b.failed = b.too_big = true;
			if (b.failed)
				goto nomem;
		}
	}
	ret = finish(&b, fdes, nfdes, job);
	goto out;
nomem:
	ret = b.too_big ? -EFBIG : -ENOMEM;
out:
	free(b.p);
	free(cies);
	free(fdes);
	return ret;
}

/* Rewrite section `name` of img, if it has one: 8-byte little-endian
 * addresses are what the rewrite writes and libunwind reads.  0 or -errno. */
static int from_section(const struct elf_image *img, const char *name, struct df_job *job)
{
	struct cfi_section sec;
	unsigned char *owned;
	int ret = cfi_section_get(img, name, &sec, &owned);

	if (ret < 0)
		return ret;
	/* A compressed .eh_frame is not what the process runs with. */
	if (sec.be || sec.addr_size != 8 || (sec.eh && owned))
		ret = -ENOENT;
	/* Its rewrite is about as large: a section of twice the limit (of
	 * padding, say, which gives nothing) is not walked through. */
	else if (sec.len > 2 * job->max)
		ret = -EFBIG;
	else
		ret = rewrite(&sec, job);
	/* The mapped section was read once: its pages are not kept. */
	if (!owned)
		elf_image_release(img, sec.p, sec.len);
	if (ret == -EFBIG && job->path) {
		char a[32];
		unwind_note_skipped(img->path, "not read: its %s, rewritten for the unwinder, is over "
				    "the limit of %s for the module %s; its frames are found without it",
				    name, unwind_size_text(job->max, a, sizeof(a)), job->path);
	}
	free(owned);
	return ret;
}

/* Rewrite the .debug_frame of img, if it has one.  0 or -errno. */
static int from_image(const struct elf_image *img, struct df_job *job)
{
	return from_section(img, ".debug_frame", job);
}

static long take_debug_file(void *arg, struct elf_cache *file,
			    struct elf_image *dbg)
{
	struct df_job *job = arg;

	job->err = from_image(dbg, job);
	if (job->err == -ENOMEM)
		return -ENOMEM;
	if (job->err < 0)
		return 0;
	/* Nothing of the file is kept: the rewrite is a copy. */
	elf_cache_free(file);
	return 1;
}

/* The job for img loaded with bias, served at base: the range of its
 * PT_LOADs.  0, or -ENOENT when it has none. */
static int job_init(struct df_job *job, const struct elf_image *img, uint64_t bias,
		    uint64_t base, struct debug_frame *out)
{
	memset(job, 0, sizeof(*job));
	memset(out, 0, sizeof(*out));
	job->bias = bias;
	job->base = base;
	job->out = out;
	job->max = unwind_budget_cfi_module(img->size);
	job->path = img->path;
	job->lo = UINT64_MAX;
	for (size_t i = 0; i < img->nsegs; i++) {
		if (img->segs[i].vaddr < job->lo)
			job->lo = img->segs[i].vaddr;
		if (img->segs[i].vaddr + img->segs[i].memsz > job->hi)
			job->hi = img->segs[i].vaddr + img->segs[i].memsz;
	}
	return job->lo < job->hi ? 0 : -ENOENT;
}

int
debug_frame_build(const struct elf_image *img, uint64_t bias, uint64_t base,
		  struct debug_frame *out)
{
	struct df_job job;
	long r;
	int ret;

	if (job_init(&job, img, bias, base, out) < 0)
		return -ENOENT;
	ret = from_image(img, &job);
	if (ret != -ENOENT && ret != -EINVAL)
		return ret;
	r = elf_debug_file_search(img, take_debug_file, &job);
	if (r < 0)
		return (int)r;
	return r > 0 ? 0 : -ENOENT;
}

int
eh_frame_build(const struct elf_image *img, uint64_t bias, uint64_t base,
	       struct debug_frame *out)
{
	struct df_job job;

	if (job_init(&job, img, bias, base, out) < 0)
		return -ENOENT;
	return from_section(img, ".eh_frame", &job);
}

void
debug_frame_free(struct debug_frame *df)
{
	if (df->buf)
		unwind_budget_give(UNWIND_BUDGET_CFI, df->len);
	free(df->buf);
	memset(df, 0, sizeof(*df));
}
