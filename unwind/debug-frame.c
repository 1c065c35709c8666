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
 * .eh_frame, expressions included.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "unwind/unwind-internal.h"

#define DW_EH_PE_absptr  0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2  0x02
#define DW_EH_PE_udata4  0x03
#define DW_EH_PE_udata8  0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2  0x0a
#define DW_EH_PE_sdata4  0x0b
#define DW_EH_PE_sdata8  0x0c
#define DW_EH_PE_pcrel   0x10
#define DW_EH_PE_omit    0xff

/* A decompressed .debug_frame larger than this is not believed. */
#define DEBUG_FRAME_MAX (256u << 20)

struct df_section {
	const unsigned char *p;
	size_t len;
	unsigned char *owned;     /* decompressed copy, or NULL */
	uint64_t vaddr;           /* sh_addr: where .eh_frame is mapped (its
				     pc-relative pointers count from there) */
};

/* What the rewrite needs to know about the module. */
struct df_job {
	uint64_t bias, base;      /* load bias; address the buffer is served at */
	uint64_t lo, hi;          /* ELF vaddr range of its PT_LOADs */
	struct debug_frame *out;
	int err;                  /* of the last attempt */
};

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Inflate an SHF_COMPRESSED section (ELFCOMPRESS_ZLIB).  0 or -errno. */
static int inflate_section(const unsigned char *p, size_t len, int elf_class,
			   struct df_section *out)
{
	uint32_t type;
	uint64_t size;
	size_t hdr;
	uLongf dlen;

	if (elf_class == ELFCLASS64) {
		Elf64_Chdr ch;

		if (len < sizeof(ch))
			return -EINVAL;
		memcpy(&ch, p, sizeof(ch));
		type = ch.ch_type;
		size = ch.ch_size;
		hdr = sizeof(ch);
	} else {
		Elf32_Chdr ch;

		if (len < sizeof(ch))
			return -EINVAL;
		memcpy(&ch, p, sizeof(ch));
		type = ch.ch_type;
		size = ch.ch_size;
		hdr = sizeof(ch);
	}
	if (type != ELFCOMPRESS_ZLIB || size == 0 || size > DEBUG_FRAME_MAX)
		return -EINVAL;
	out->owned = malloc(size);
	if (!out->owned)
		return -ENOMEM;
	dlen = size;
	if (uncompress(out->owned, &dlen, p + hdr, len - hdr) != Z_OK ||
	    dlen != size) {
		free(out->owned);
		out->owned = NULL;
		return -EINVAL;
	}
	out->p = out->owned;
	out->len = size;
	return 0;
}

/* img's section `want` (.debug_frame or .eh_frame), decompressed if need
 * be.  0, -ENOENT or -errno. */
static int section_get(const struct elf_image *img, const char *want, struct df_section *out)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (img->size < EI_NIDENT || memcmp(img->data, ELFMAG, SELFMAG) != 0)
		return -ENOENT;
	elf_version(EV_CURRENT);
	/* Only read: gelf_getshdr copies the headers out (elf-image.c). */
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return -ENOENT;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, want) != 0)
			continue;
		out->vaddr = sh.sh_addr;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0 ||
		    !span_inside(img->size, sh.sh_offset, sh.sh_size))
			break;
		if (sh.sh_flags & SHF_COMPRESSED) {
			ret = inflate_section(img->data + sh.sh_offset, sh.sh_size,
					      gelf_getclass(e), out);
		} else {
			out->p = img->data + sh.sh_offset;
			out->len = sh.sh_size;
			ret = 0;
		}
		break;
	}
out:
	elf_end(e);
	return ret;
}

/* Growing output buffer. */
struct df_buf {
	unsigned char *p;
	size_t len, cap;
	bool failed;
};

static unsigned char *buf_grow(struct df_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (n > b->cap - b->len) {
		size_t cap = b->cap ? b->cap : 4096;

		while (n > cap - b->len) {
			if (cap > DEBUG_FRAME_MAX) {
				b->failed = true;
				return NULL;
			}
			cap *= 2;
		}
		unsigned char *np = realloc(b->p, cap);

		if (!np) {
			b->failed = true;
			return NULL;
		}
		b->p = np;
		b->cap = cap;
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

/* Length of the LEB128 number at p (at most end - p bytes), 0 if it runs
 * past end. */
static size_t leb_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = 0;

	while (p + n < end) {
		if (!(p[n++] & 0x80))
			return n;
	}
	return 0;
}

struct cie_map {
	uint64_t in_off;          /* offset in the section */
	uint64_t out_off;         /* offset of the rewritten CIE */
	unsigned fde_enc;         /* .eh_frame: how its FDEs' addresses are
				     encoded (DW_EH_PE_*) */
	bool aug_data;            /* .eh_frame: its FDEs have augmentation
				     data ('z') */
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
	buf_put(b, (const unsigned char[]){ 1, DW_EH_PE_absptr }, 2);
	buf_put(b, ins, nins);
	if (b->failed)
		return false;
	uint32_t len = (uint32_t)(b->len - len_at - 4);

	memcpy(b->p + len_at, &len, 4);
	return true;
}

/* Rewrite the .debug_frame CIE whose body (after the id) is [p, end).
 * true if it could be: versions 1, 3 and 4 with 8-byte addresses and no
 * augmentation, which is what GCC, gas and Go write. */
static bool rewrite_cie(struct df_buf *b, const unsigned char *p,
			const unsigned char *end)
{
	unsigned version;
	size_t at = 0, n, start;

	if (end - p < 2)
		return false;
	version = p[at++];
	if (version != 1 && version != 3 && version != 4)
		return false;
	if (p[at++] != '\0')
		return false;   /* augmentation string: none expected here */
	if (version == 4) {
		if (end - p < (ptrdiff_t)at + 2 || p[at] != 8 || p[at + 1] != 0)
			return false;
		at += 2;
	}
	start = at;
	/* code alignment, data alignment */
	for (int i = 0; i < 2; i++) {
		n = leb_len(p + at, end);
		if (!n)
			return false;
		at += n;
	}
	/* return address column: a byte in version 1, else LEB128 */
	if (version == 1) {
		if (p + at >= end)
			return false;
		at++;
	} else {
		n = leb_len(p + at, end);
		if (!n)
			return false;
		at += n;
	}
	return emit_cie(b, version, false, p + start, at - start, p + at, (size_t)(end - p) - at);
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
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : first;
		void *nv = realloc(*v, ncap * sz);

		if (!nv)
			return NULL;
		*v = nv;
		*cap = ncap;
	}
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
 * table and hand b over to job->out.  0, -ENOENT (no FDE), -ENOMEM or
 * -EFBIG. */
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
		return b->cap > DEBUG_FRAME_MAX ? -EFBIG : -ENOMEM;
	if (b->len > INT32_MAX)
		return -EFBIG;
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


/* Decode the value encoded as enc at p (before end); `at` is p's ELF
 * vaddr, for pc-relative values; relative: apply the pc-relative part
 * (not for an FDE's address range).  Returns the bytes read, 0 when it
 * cannot (an encoding stackspy does not take, or the end). */
static size_t read_encoded(const unsigned char *p, const unsigned char *end, unsigned enc,
			   uint64_t at, bool relative, uint64_t *val)
{
	size_t n;
	uint64_t v = 0;

	if (enc == DW_EH_PE_omit || (enc & 0x80))
		return 0;       /* indirect: not in FDE addresses */
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2: {
		unsigned low = enc & 0x07;      /* 0, 4: 8 bytes; 3: 4; 2: 2 */

		n = low == 2 ? 2 : low == 3 ? 4 : 8;
		if ((size_t)(end - p) < n)
			return 0;
		if (n == 8) {
			v = get64(p);
		} else if (n == 4) {
			v = get32(p);
			if (enc & 0x08)
				v = (uint64_t)(int64_t)(int32_t)v;
		} else {
			uint16_t h;

			memcpy(&h, p, 2);
			v = (enc & 0x08) ? (uint64_t)(int64_t)(int16_t)h : h;
		}
		break;
	}
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128: {
		unsigned shift = 0;

		n = leb_len(p, end);
		if (!n || n > 10)
			return 0;
		for (size_t i = 0; i < n; i++, shift += 7)
			v |= (uint64_t)(p[i] & 0x7f) << shift;
		if ((enc & 0x0f) == DW_EH_PE_sleb128 && shift < 64 && (p[n - 1] & 0x40))
			v |= ~(uint64_t)0 << shift;
		break;
	}
	default:
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		if (relative)
			v += at;
		break;
	default:
		return 0;       /* datarel, textrel, funcrel: not on these ABIs */
	}
	*val = v;
	return n;
}

/* Rewrite the .eh_frame CIE whose body (after the id) is [p, end), at ELF
 * vaddr `at`, into b; its FDEs' encoding into c.  false if it cannot be. */
static bool rewrite_eh_cie(struct df_buf *b, const unsigned char *p, const unsigned char *end,
			   uint64_t at, struct cie_map *c)
{
	size_t i = 0, n, fields, aug_end = 0;
	const char *aug;
	bool signal = false;
	uint64_t ignored;

	if (end - p < 3)
		return false;
	unsigned version = p[i++];
	if (version != 1 && version != 3)
		return false;
	aug = (const char *)p + i;
	n = strnlen(aug, (size_t)(end - p) - i);
	if (i + n >= (size_t)(end - p))
		return false;
	i += n + 1;
	if (aug[0] && aug[0] != 'z')
		return false;   /* "eh" and other ancient forms */
	fields = i;
	for (int k = 0; k < 3; k++) {
		/* code and data alignment; return address column */
		if (k == 2 && version == 1) {
			if (p + i >= end)
				return false;
			i++;
			continue;
		}
		n = leb_len(p + i, end);
		if (!n)
			return false;
		i += n;
	}
	size_t fields_end = i;
	c->fde_enc = DW_EH_PE_absptr;
	c->aug_data = aug[0] == 'z';
	if (c->aug_data) {
		uint64_t alen;

		n = read_encoded(p + i, end, DW_EH_PE_uleb128, 0, false, &alen);
		if (!n || alen > (uint64_t)(end - p) - i - n)
			return false;
		i += n;
		aug_end = i + alen;
		for (const char *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R':
				if (i >= aug_end)
					return false;
				c->fde_enc = p[i++];
				break;
			case 'L':
				if (i >= aug_end)
					return false;
				i++;    /* the FDEs' LSDA: skipped with their data */
				break;
			case 'P': {
				unsigned penc;

				if (i >= aug_end)
					return false;
				penc = p[i++];
				n = read_encoded(p + i, p + aug_end, penc & 0x7f, at + i, false,
						 &ignored);
				if (!n)
					return false;
				i += n;
				break;
			}
			case 'S':
				signal = true;
				break;
			case 'B':       /* aarch64 BTI, 'G' MTE: no data */
			case 'G':
				break;
			default:
				return false;
			}
		}
		i = aug_end;
	}
	return emit_cie(b, version, signal, p + fields, fields_end - fields, p + i,
			(size_t)(end - p) - i);
}

/* An FDE's code range and instructions: fixed 8-byte words in
 * .debug_frame, encoded as its CIE says in .eh_frame (pc-relative to
 * body_at, with augmentation data to skip).  false if it cannot be read. */
static bool fde_fields(bool eh, const struct cie_map *c, const unsigned char *body,
		       const unsigned char *end, uint64_t body_at, uint64_t *start,
		       uint64_t *range, const unsigned char **ins)
{
	size_t n1, n2, skip = 0;

	if (!eh) {
		if (end - body < 16)
			return false;
		*start = get64(body);
		*range = get64(body + 8);
		*ins = body + 16;
		return true;
	}
	n1 = read_encoded(body, end, c->fde_enc, body_at, true, start);
	n2 = n1 ? read_encoded(body + n1, end, c->fde_enc & 0x0f, 0, false, range) : 0;
	if (!n2)
		return false;
	if (c->aug_data) {
		uint64_t alen;
		size_t k = read_encoded(body + n1 + n2, end, DW_EH_PE_uleb128, 0, false, &alen);

		if (!k || alen > (uint64_t)(end - body) - n1 - n2 - k)
			return false;
		skip = k + (size_t)alen;
	}
	*ins = body + n1 + n2 + skip;
	return true;
}

/* Rewrite sec (.debug_frame, or .eh_frame when eh) into job->out.  0,
 * -ENOENT (no usable FDE), -ENOMEM or -EFBIG. */
static int rewrite(const struct df_section *sec, struct df_job *job, bool eh)
{
	/* The two sections tell a CIE by its id, and an FDE's CIE by an
	 * offset in the section (.debug_frame) or back from the pointer's
	 * own place (.eh_frame). */
	const uint32_t cie_id = eh ? 0 : 0xffffffff;
	struct df_buf b = { 0 };
	struct cie_map *cies = NULL;
	struct fde_ent *fdes = NULL;
	size_t ncies = 0, ciecap = 0, nfdes = 0, fdecap = 0;
	int ret;

	/* Pass 1: the CIEs first, so that every FDE follows its CIE as
	 * .eh_frame's backward CIE pointers want. */
	for (int pass = 0; pass < 2; pass++) {
		size_t off = 0;

		while (sec->len - off >= 8) {
			const unsigned char *e = sec->p + off;
			uint32_t len = get32(e);

			if (len == 0 && !eh) {
				off += 4;       /* padding */
				continue;
			}
			/* .eh_frame's terminator; 64-bit DWARF, not written
			 * for these ABIs; a length past the end. */
			if (len == 0 || len == 0xffffffff || len < 4 || len > sec->len - off - 4)
				break;
			uint32_t id = get32(e + 4);
			const unsigned char *body = e + 8, *end = e + 4 + len;
			uint64_t body_at = sec->vaddr + off + 8;

			if (pass == 0 && id == cie_id) {
				struct cie_map c = { .in_off = off, .out_off = b.len };
				bool ok = eh ? rewrite_eh_cie(&b, body, end, body_at, &c) :
					       rewrite_cie(&b, body, end);

				if (ok) {
					struct cie_map *nc = grow_one((void **)&cies, &ncies, &ciecap,
								      sizeof(*cies), 16);

					if (!nc)
						goto nomem;
					*nc = c;
				} else if (!b.failed) {
					b.len = c.out_off;
				}
			} else if (pass == 1 && id != cie_id && (!eh || id <= off + 4)) {
				const struct cie_map *c = cie_find(cies, ncies, eh ? off + 4 - id : id);
				uint64_t start, range;
				const unsigned char *ins;

				/* FDEs of discarded sections (start 0) and of
				 * code outside the module are left out. */
				if (c && fde_fields(eh, c, body, end, body_at, &start, &range, &ins) &&
				    range != 0 && start >= job->lo && start < job->hi &&
				    range <= job->hi - start) {
					struct fde_ent *fe = grow_one((void **)&fdes, &nfdes, &fdecap,
								      sizeof(*fdes), 256);

					if (!fe)
						goto nomem;
					fe->start = start;
					fe->out_off = b.len;
					emit_fde(&b, c->out_off, start + job->bias, range, ins,
						 (size_t)(end - ins));
				}
			}
			if (b.failed)
				goto nomem;
			off += 4 + (size_t)len;
		}
	}
	ret = finish(&b, fdes, nfdes, job);
	goto out;
nomem:
	ret = b.failed && b.cap > DEBUG_FRAME_MAX ? -EFBIG : -ENOMEM;
out:
	free(b.p);
	free(cies);
	free(fdes);
	return ret;
}

/* Rewrite the .debug_frame of img, if it has one.  0 or -errno. */
static int from_image(const struct elf_image *img, struct df_job *job)
{
	struct df_section sec;
	int ret = section_get(img, ".debug_frame", &sec);

	if (ret < 0)
		return ret;
	ret = rewrite(&sec, job, false);
	free(sec.owned);
	return ret;
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
	struct df_section sec;
	int ret;

	if (job_init(&job, img, bias, base, out) < 0 ||
	    img->size < EI_NIDENT || img->data[EI_CLASS] != ELFCLASS64)
		return -ENOENT;         /* 8-byte addresses are written */
	ret = section_get(img, ".eh_frame", &sec);
	if (ret < 0)
		return ret;
	ret = sec.owned ? -ENOENT : rewrite(&sec, &job, true);
	free(sec.owned);
	return ret;
}

void
debug_frame_free(struct debug_frame *df)
{
	free(df->buf);
	memset(df, 0, sizeof(*df));
}
