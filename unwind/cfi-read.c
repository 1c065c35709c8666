/* unwind/cfi-read.c - the one reader of DWARF call frame information.
 *
 * .eh_frame and .debug_frame entries (the CIE's fields and augmentation,
 * the FDE's code range, DW_EH_PE pointer encodings), .eh_frame_hdr's
 * binary-search table, and a sorted table of a module's FDEs built once
 * when the module has no .eh_frame_hdr (static links: GNU ld writes none
 * unless asked; musl-gcc's links).  In either byte order, with 4- or
 * 8-byte addresses.  Every engine finds FDEs here (engine-dwarf.c: the
 * cfi and auto engines); engine-mips.c takes function bounds and the
 * outermost frame from it.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "arch/arch.h"
#include "base/base.h"
#include "unwind/budget.h"
#include "unwind/cfi.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"

static uint64_t
get(const struct cfi_section *s, const unsigned char *p, unsigned size)
{
	return arch_get_uint(p, size, s->be);
}

size_t
unwind_cfi_leb_len(const unsigned char *p, const unsigned char *end)
{
	size_t n = 0;
	while (p + n < end) {
		if (!(p[n++] & 0x80))
			return n;
	}
	return 0;
}

size_t
unwind_cfi_read_encoded(const struct cfi_section *s, const unsigned char *p,
			const unsigned char *end, unsigned enc, uint64_t at, bool relative,
			uint64_t *val)
{
	size_t n;
	uint64_t v = 0;
	if (enc == CFI_PE_omit || (enc & 0x80))
		return 0;       /* indirect: not in FDE addresses */
	switch (enc & 0x0f) {
	case CFI_PE_absptr:
	case CFI_PE_udata2:
	case CFI_PE_sdata2:
	case CFI_PE_udata4:
	case CFI_PE_sdata4:
	case CFI_PE_udata8:
	case CFI_PE_sdata8:
		n = (enc & 0x07) == CFI_PE_absptr ? s->addr_size :
		    (enc & 0x07) == CFI_PE_udata2 ? 2 :
		    (enc & 0x07) == CFI_PE_udata4 ? 4 : 8;
		if ((size_t)(end - p) < n)
			return 0;
		v = get(s, p, (unsigned)n);
		if ((enc & 0x08) && n < 8 && (v >> (8 * n - 1)))
			v |= ~(uint64_t)0 << (8 * n);    /* sdata2, sdata4 */
		break;
	case CFI_PE_uleb128:
	case CFI_PE_sleb128: {
		unsigned shift = 0;
		n = unwind_cfi_leb_len(p, end);
		if (!n || n > 10)
			return 0;
		for (size_t i = 0; i < n; i++, shift += 7)
			v |= (uint64_t)(p[i] & 0x7f) << shift;
		if ((enc & 0x0f) == CFI_PE_sleb128 && shift < 64 && (p[n - 1] & 0x40))
			v |= ~(uint64_t)0 << shift;
		break;
	}
	default:
		return 0;
	}
	switch (enc & 0x70) {
	case 0:
		break;
	case CFI_PE_pcrel:
		if (relative)
			v += at;
		break;
	case CFI_PE_datarel:
		if (!s->datarel)
			return 0;
		if (relative)
			v += s->datarel;
		break;
	default:
		return 0;       /* textrel, funcrel: not on these ABIs */
	}
	if (s->addr_size == 4 && relative)
		v &= 0xffffffffu;
	*val = v;
	return n;
}

int
unwind_cfi_next_entry(const struct cfi_section *s, size_t *off, struct cfi_entry *e)
{
	for (;;) {
		if (*off > s->len || s->len - *off < 8)
			return 0;
		const unsigned char *p = s->p + *off;
		uint64_t len = get(s, p, 4);
		if (len == 0 && !s->eh) {
			*off += 4;      /* padding */
			continue;
		}
		/* .eh_frame's terminator; 64-bit DWARF, not written for these
		 * ABIs; a length past the end. */
		if (len == 0 || len == 0xffffffffu || len < 4 || len > s->len - *off - 4)
			return 0;
		uint64_t id = get(s, p + 4, 4);
		e->off = *off;
		e->body = p + 8;
		e->end = p + 4 + len;
		e->body_at = s->vaddr + *off + 8;
		e->is_cie = s->eh ? id == 0 : id == 0xffffffffu;
		e->cie_off = UINT64_MAX;
		if (!e->is_cie) {
			/* .eh_frame: back from the pointer's own place;
			 * .debug_frame: an offset in the section. */
			if (s->eh && id <= *off + 4)
				e->cie_off = *off + 4 - id;
			else if (!s->eh)
				e->cie_off = id;
		}
		*off += 4 + (size_t)len;
		return 1;
	}
}

bool
unwind_cfi_cie_parse(const struct cfi_section *s, const struct cfi_entry *e, struct cfi_cie *c)
{
	const unsigned char *p = e->body, *end = e->end;
	size_t i = 0, n;
	uint64_t v;
	memset(c, 0, sizeof(*c));
	if (!e->is_cie || end - p < 2)
		return false;
	c->version = p[i++];
	if (c->version != 1 && c->version != 3 && (s->eh || c->version != 4))
		return false;
	const char *aug = (const char *)p + i;
	n = strnlen(aug, (size_t)(end - p) - i);
	if (i + n >= (size_t)(end - p))
		return false;
	i += n + 1;
	/* "eh" and other ancient forms; .debug_frame as GCC, gas and Go
	 * write it has none. */
	if (aug[0] && (aug[0] != 'z' || !s->eh))
		return false;
	if (c->version == 4) {
		/* address_size, segment_selector_size */
		if ((size_t)(end - p) < i + 2 || p[i] != s->addr_size || p[i + 1] != 0)
			return false;
		i += 2;
	}
	c->fields = p + i;
	if (!(n = unwind_cfi_read_encoded(s, p + i, end, CFI_PE_uleb128, 0, false, &c->code_align)))
		return false;
	i += n;
	if (!(n = unwind_cfi_read_encoded(s, p + i, end, CFI_PE_sleb128, 0, false, &v)))
		return false;
	c->data_align = (int64_t)v;
	i += n;
	if (c->version == 1) {
		if (p + i >= end)
			return false;
		c->ra_column = p[i++];
	} else {
		if (!(n = unwind_cfi_read_encoded(s, p + i, end, CFI_PE_uleb128, 0, false,
						  &c->ra_column)))
			return false;
		i += n;
	}
	c->fields_end = p + i;
	c->fde_enc = CFI_PE_absptr;
	c->aug_data = aug[0] == 'z';
	if (c->aug_data) {
		uint64_t alen, ignored;
		n = unwind_cfi_read_encoded(s, p + i, end, CFI_PE_uleb128, 0, false, &alen);
		if (!n || alen > (uint64_t)(end - p) - i - n)
			return false;
		i += n;
		size_t aug_end = i + (size_t)alen;
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
				if (i >= aug_end)
					return false;
				unsigned penc = p[i++];
				n = unwind_cfi_read_encoded(s, p + i, p + aug_end, penc & 0x7f,
						     e->body_at + i, false, &ignored);
				if (!n)
					return false;
				i += n;
				break;
			}
			case 'S':
				c->signal = true;
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
	c->ins = p + i;
	c->end = end;
	return true;
}

bool
unwind_cfi_fde_parse(const struct cfi_section *s, const struct cfi_entry *e,
		     const struct cfi_cie *c, struct cfi_fde *f)
{
	const unsigned char *body = e->body, *end = e->end;
	size_t n1, n2, skip = 0;
	if (e->is_cie)
		return false;
	if (!s->eh) {
		/* Fixed target-address words in .debug_frame. */
		if ((size_t)(end - body) < 2u * s->addr_size)
			return false;
		f->start = get(s, body, s->addr_size);
		f->range = get(s, body + s->addr_size, s->addr_size);
		f->ins = body + 2 * s->addr_size;
		f->end = end;
		return true;
	}
	n1 = unwind_cfi_read_encoded(s, body, end, c->fde_enc, e->body_at, true, &f->start);
	n2 = n1 ? unwind_cfi_read_encoded(s, body + n1, end, c->fde_enc & 0x0f, 0, false,
					  &f->range) : 0;
	if (!n2)
		return false;
	if (c->aug_data) {
		uint64_t alen;
		size_t k = unwind_cfi_read_encoded(s, body + n1 + n2, end, CFI_PE_uleb128, 0, false,
						   &alen);
		if (!k || alen > (uint64_t)(end - body) - n1 - n2 - k)
			return false;
		skip = k + (size_t)alen;
	}
	f->ins = body + n1 + n2 + skip;
	f->end = end;
	return true;
}

/* ---- sections --------------------------------------------------------------- */

/* Inflate the SHF_COMPRESSED section scn of img (its bytes p[0, len),
 * header included: ELFCOMPRESS_ZLIB) into *owned: at most the module's
 * bound for a CFI copy (unwind_budget_cfi_module: a zlib bomb in a
 * hostile library inflates to what its header says).  0 or -errno. */
static int
inflate_section(const struct elf_image *img, const char *name, Elf_Scn *scn,
		const unsigned char *p, size_t len, int elf_class, unsigned char **owned,
		size_t *out_len)
{
	GElf_Chdr ch;
	size_t hdr = elf_class == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	if (!gelf_getchdr(scn, &ch) || len < hdr || ch.ch_type != ELFCOMPRESS_ZLIB ||
	    ch.ch_size == 0)
		return -EINVAL;
	uint64_t max = unwind_budget_cfi_module(img->size);
	if (ch.ch_size > max) {
		char a[32], b[32];
		unwind_note_skipped(img->path, "not read: its %s inflates to %s, over the limit "
				    "of %s for the module; its frames there are found without it",
				    name, unwind_size_text(ch.ch_size, a, sizeof(a)),
				    unwind_size_text(max, b, sizeof(b)));
		return -EFBIG;
	}
	*owned = malloc(ch.ch_size);
	if (!*owned)
		return -ENOMEM;
	uLongf dlen = ch.ch_size;
	if (uncompress(*owned, &dlen, p + hdr, len - hdr) != Z_OK || dlen != ch.ch_size) {
		free(*owned);
		*owned = NULL;
		return -EINVAL;
	}
	*out_len = ch.ch_size;
	return 0;
}

int
unwind_cfi_section_get(const struct elf_image *img, const char *name, struct cfi_section *out,
		unsigned char **owned)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = -ENOENT;
	memset(out, 0, sizeof(*out));
	*owned = NULL;
	if (img->size <= EI_DATA || memcmp(img->data, ELFMAG, SELFMAG) != 0)
		return -ENOENT;
	out->be = img->data[EI_DATA] == ELFDATA2MSB;
	out->addr_size = img->data[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	out->eh = strcmp(name, ".eh_frame") == 0;
	elf_version(EV_CURRENT);
	/* Only read: gelf_getshdr copies the headers out (elf-image.c). */
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return -ENOENT;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name) != 0)
			continue;
		out->vaddr = sh.sh_addr;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0 ||
		    !span_inside(img->size, sh.sh_offset, sh.sh_size))
			break;
		if (sh.sh_flags & SHF_COMPRESSED) {
			ret = inflate_section(img, name, scn, img->data + sh.sh_offset,
					      sh.sh_size, gelf_getclass(e), owned, &out->len);
			out->p = *owned;
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

const unsigned char *
unwind_cfi_image_at(const struct elf_image *img, uint64_t vaddr, size_t len, size_t *avail)
{
	for (size_t k = 0; k < img->nsegs; k++) {
		const struct elf_segment *g = &img->segs[k];
		if (vaddr < g->vaddr || vaddr - g->vaddr >= g->filesz ||
		    len > g->filesz - (vaddr - g->vaddr))
			continue;
		uint64_t off = g->offset + (vaddr - g->vaddr);
		if (off > img->size || len > img->size - off)
			return NULL;
		if (avail) {
			uint64_t in_seg = g->filesz - (vaddr - g->vaddr);
			*avail = (size_t)(in_seg < img->size - off ? in_seg : img->size - off);
		}
		return img->data + off;
	}
	return NULL;
}

/* ---- .eh_frame_hdr ---------------------------------------------------------- */

bool
unwind_cfi_hdr_read(const struct elf_image *img, struct cfi_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (!img->eh_frame_hdr_vaddr || img->size <= EI_DATA)
		return false;
	size_t avail;
	const unsigned char *p = unwind_cfi_image_at(img, img->eh_frame_hdr_vaddr, 4, &avail);
	if (!p || p[0] != 1)
		return false;
	struct cfi_section s = {
		.p = p, .len = avail, .vaddr = img->eh_frame_hdr_vaddr, .eh = true,
		.be = img->data[EI_DATA] == ELFDATA2MSB,
		.addr_size = img->data[EI_CLASS] == ELFCLASS64 ? 8 : 4,
		.datarel = img->eh_frame_hdr_vaddr,
	};
	/* The table as linkers write it, and as libunwind's remote table
	 * format takes it: datarel|sdata4 (start, FDE) pairs. */
	if (p[3] != (CFI_PE_datarel | CFI_PE_sdata4) || p[2] == CFI_PE_omit)
		return false;
	const unsigned char *q = p + 4, *end = p + avail;
	size_t n = unwind_cfi_read_encoded(&s, q, end, p[1], s.vaddr + 4, true, &h->eh_frame_vaddr);
	if (!n)
		return false;
	q += n;
	n = unwind_cfi_read_encoded(&s, q, end, p[2], s.vaddr + (uint64_t)(q - p), true, &h->count);
	if (!n)
		return false;
	q += n;
	if (h->count == 0 || h->count > img->eh_frame_hdr_size / 8 ||
	    h->count > (size_t)(end - q) / 8)
		return false;
	h->hdr_vaddr = s.vaddr;
	h->table_vaddr = s.vaddr + (uint64_t)(q - p);
	h->table = q;
	h->be = s.be;
	return true;
}

/* The FDE of the table entry whose start is the greatest <= vaddr: its
 * ELF vaddr, or 0. */
static uint64_t
hdr_search(const struct cfi_hdr *h, uint64_t vaddr)
{
	uint64_t lo = 0, hi = h->count;
	if (h->count == 0)
		return 0;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		uint64_t loc = h->hdr_vaddr +
			       (uint64_t)(int64_t)(int32_t)arch_get_uint(h->table + 8 * mid, 4, h->be);
		if (loc <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	uint64_t loc = h->hdr_vaddr +
		       (uint64_t)(int64_t)(int32_t)arch_get_uint(h->table + 8 * lo, 4, h->be);
	if (loc > vaddr)
		return 0;
	return h->hdr_vaddr + (uint64_t)(int64_t)(int32_t)arch_get_uint(h->table + 8 * lo + 4, 4,
									 h->be);
}

/* ---- a module's FDEs, found by address ---------------------------------- */

/* The sorted table of an .eh_frame without a header, or of a
 * .debug_frame, built once per image (elf_image.cfi_index and
 * cfi_debug_index, under the image lock): 16 bytes an FDE, at most the
 * module's bound for a CFI copy (with the inflated section, if it was
 * compressed), charged to the run's CFI budget while the image lives. */
struct cfi_index {
	struct cfi_section sec;
	struct elf_cache *file;   /* a separate debug file the section is
				     read from (its mapping), or NULL */
	unsigned char *owned;     /* a compressed section, inflated */
	struct cfi_index_ent {
		uint64_t start;
		uint32_t range;   /* clamped: no function is 4 GiB */
		uint32_t off;     /* of the FDE in the section (< 4 GiB) */
	} *v;
	size_t n;
	uint64_t charged;         /* bytes taken from the run's CFI budget */
};

/* Sift v[root] down the max-heap v[0, n) ordered by start. */
static void
ent_sift(struct cfi_index_ent *v, size_t root, size_t n)
{
	for (size_t c; (c = 2 * root + 1) < n; root = c) {
		if (c + 1 < n && v[c].start < v[c + 1].start)
			c++;
		if (v[root].start >= v[c].start)
			return;
		struct cfi_index_ent t = v[root];
		v[root] = v[c];
		v[c] = t;
	}
}

/* In place by start (glibc's qsort would copy the table whole), in
 * O(n log n) whatever the order: heapsort. */
static void
ent_sort(struct cfi_index_ent *v, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		ent_sift(v, i, n);
	for (size_t i = n; i-- > 1;) {
		struct cfi_index_ent t = v[0];
		v[0] = v[i];
		v[i] = t;
		ent_sift(v, 0, i);
	}
}

/* The FDE whose entry is at offset off of s (and its CIE) into *f. */
static bool
fde_at(const struct cfi_section *s, size_t off, struct cfi_fde *f)
{
	struct cfi_entry e, ce;
	size_t o = off;
	if (unwind_cfi_next_entry(s, &o, &e) <= 0 || e.is_cie || e.off != off ||
	    e.cie_off == UINT64_MAX)
		return false;
	o = (size_t)e.cie_off;
	if (e.cie_off >= s->len || unwind_cfi_next_entry(s, &o, &ce) <= 0 || ce.off != e.cie_off ||
	    !unwind_cfi_cie_parse(s, &ce, &f->cie))
		return false;
	return unwind_cfi_fde_parse(s, &e, &f->cie, f);
}

void
unwind_cfi_index_free(struct cfi_index *x)
{
	if (!x)
		return;
	unwind_budget_give(UNWIND_BUDGET_CFI, x->charged);
	free(x->v);
	free(x->owned);
	if (x->file) {
		unwind_elf_cache_free(x->file);
		free(x->file);
	}
	free(x);
}

static struct cfi_index *
index_build(const struct elf_image *img, const char *name)
{
	struct cfi_index *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	bool eh = strcmp(name, ".eh_frame") == 0;
	if (unwind_cfi_section_get(img, name, &x->sec, &x->owned) < 0 || (eh && x->owned) ||
	    x->sec.len > UINT32_MAX) {
		free(x->owned);   /* a compressed .eh_frame is not loaded code */
		free(x);
		return NULL;
	}
	uint64_t max = unwind_budget_cfi_module(img->size);
	const char *why = NULL;
	uint64_t why_limit = unwind_budget_limit(UNWIND_BUDGET_CFI);
	if (x->owned) {
		if (!unwind_budget_take(UNWIND_BUDGET_CFI, x->sec.len)) {
			why = "the run's CFI copies hold their limit";
			goto refuse;
		}
		x->charged = x->sec.len;
	}
	/* The index is smaller than its section: one of 4 times the limit
	 * (of padding, say, which gives nothing) is not walked through. */
	if (x->sec.len > 4 * max) {
		why = "its section is over 4 times the limit for the module";
		why_limit = max;
		goto refuse;
	}
	size_t cap = 0, off = 0, released = 0;
	struct cfi_entry e;
	while (unwind_cfi_next_entry(&x->sec, &off, &e) > 0) {
		struct cfi_fde f;
		/* A mapped section read once: its pages are not kept. */
		if (!x->owned && off - released >= (8u << 20)) {
			unwind_elf_image_release(img, x->sec.p + released, off - released);
			released = off;
		}
		if (e.is_cie || !fde_at(&x->sec, e.off, &f) || f.range == 0 || f.start == 0)
			continue;
		if (x->n == cap) {
			size_t ncap = cap ? 2 * cap : 256;
			uint64_t more = (uint64_t)(ncap - cap) * sizeof(*x->v);
			if (x->charged + more > max) {
				why = "its FDEs are over the limit for the module";
				why_limit = max;
				goto refuse;
			}
			if (!unwind_budget_take(UNWIND_BUDGET_CFI, more)) {
				why = "the run's CFI copies hold their limit";
				goto refuse;
			}
			x->charged += more;
			if (BASE_GROW(x->v, cap, ncap, 256) < 0)
				goto refuse;
		}
		x->v[x->n++] = (struct cfi_index_ent){
			f.start, f.range > UINT32_MAX ? UINT32_MAX : (uint32_t)f.range,
			(uint32_t)e.off };
	}
	if (!x->owned)
		unwind_elf_image_release(img, x->sec.p, x->sec.len);
	if (x->n == 0)
		goto refuse;
	ent_sort(x->v, x->n);
	return x;
refuse:
	if (why) {
		char a[32];
		unwind_note_skipped(img->path, "not read: its %s was not indexed: %s (%s); its "
				    "frames are found without it", name, why,
				    unwind_size_text(why_limit, a, sizeof(a)));
	}
	unwind_cfi_index_free(x);
	return NULL;
}

/* Under the image lock: the index of img's .eh_frame, built on first use. */
static const struct cfi_index *
index_of(struct elf_image *img)
{
	if (!img->cfi_index_tried) {
		img->cfi_index_tried = true;
		img->cfi_index = index_build(img, ".eh_frame");
		img->free_cfi_index = unwind_cfi_index_free;
	}
	return img->cfi_index;
}

/* The FDE of index x (NULL: none) covering vaddr.  0 or -ENOENT. */
static int
index_find(const struct cfi_index *x, uint64_t vaddr, struct cfi_fde *out)
{
	if (!x || vaddr < x->v[0].start)
		return -ENOENT;
	size_t lo = 0, hi = x->n;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->v[mid].start <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	if (!fde_at(&x->sec, x->v[lo].off, out))
		return -ENOENT;
	return 0;
}

int
unwind_cfi_find(struct elf_image *img, uint64_t vaddr, struct cfi_fde *out)
{
	struct cfi_hdr h;
	if (unwind_cfi_hdr_read(img, &h)) {
		uint64_t fde = hdr_search(&h, vaddr);
		size_t avail;
		const unsigned char *p = fde ?
			unwind_cfi_image_at(img, h.eh_frame_vaddr, 8, &avail) : NULL;
		if (!p || fde < h.eh_frame_vaddr || fde - h.eh_frame_vaddr >= avail)
			return -ENOENT;
		struct cfi_section s = {
			.p = p, .len = avail, .vaddr = h.eh_frame_vaddr, .eh = true, .be = h.be,
			.addr_size = img->data[EI_CLASS] == ELFCLASS64 ? 8 : 4,
		};
		if (!fde_at(&s, (size_t)(fde - h.eh_frame_vaddr), out))
			return -ENOENT;
	} else {
		unwind_elf_image_lock();
		const struct cfi_index *x = index_of(img);
		unwind_elf_image_unlock();
		if (index_find(x, vaddr, out) < 0)
			return -ENOENT;
	}
	if (vaddr < out->start || vaddr - out->start >= out->range)
		return -ENOENT;   /* in a gap no FDE covers */
	return 0;
}

/* unwind_elf_debug_file_search's taker: the .debug_frame of a separate debug
 * file (Go binaries and -g builds split by objcopy --only-keep-debug
 * keep theirs only there), indexed; the file stays open with the index. */
static long
take_debug_frame(void *arg, struct elf_cache *file, struct elf_image *dbg)
{
	struct cfi_index **out = arg;
	struct elf_cache *kept = malloc(sizeof(*kept));
	if (!kept)
		return -ENOMEM;
	struct cfi_index *x = index_build(dbg, ".debug_frame");
	if (!x) {
		free(kept);
		return 0;
	}
	*kept = *file;
	x->file = kept;
	*out = x;
	return 1;
}

int
unwind_cfi_find_debug(struct elf_image *img, uint64_t vaddr, struct cfi_fde *out)
{
	unwind_elf_image_lock();
	if (!img->cfi_debug_index_tried) {
		img->cfi_debug_index_tried = true;
		img->cfi_debug_index = index_build(img, ".debug_frame");
		if (!img->cfi_debug_index)
			(void)unwind_elf_debug_file_search(img, take_debug_frame,
							   &img->cfi_debug_index);
		img->free_cfi_index = unwind_cfi_index_free;
	}
	const struct cfi_index *x = img->cfi_debug_index;
	unwind_elf_image_unlock();
	if (index_find(x, vaddr, out) < 0 || vaddr < out->start ||
	    vaddr - out->start >= out->range)
		return -ENOENT;
	return 0;
}

bool
unwind_cfi_fde_ra_undefined(const struct cfi_fde *f)
{
	/* The FDE's instructions up to the first that advances the location
	 * (what holds at the function's first instruction). */
	const struct cfi_section s = { .eh = true };
	const unsigned char *p = f->ins, *end = f->end;
	uint64_t reg, ignored;
	while (p < end) {
		unsigned op = *p++;
		size_t n;
		switch (op & 0xc0 ? op & 0xc0 : op) {
		case CFI_OP_nop:
			continue;
		case CFI_OP_undefined:
			return unwind_cfi_read_encoded(&s, p, end, CFI_PE_uleb128, 0, false,
						       &reg) && reg == f->cie.ra_column;
		case CFI_OP_def_cfa:
		case CFI_OP_register:
		case CFI_OP_offset_extended:
			/* two operands */
			if (!(n = unwind_cfi_leb_len(p, end)))
				return false;
			p += n;
			/* fall through */
		case CFI_OP_def_cfa_register:
		case CFI_OP_def_cfa_offset:
		case CFI_OP_same_value:
		case CFI_OP_offset:
			if (!(n = unwind_cfi_read_encoded(&s, p, end, CFI_PE_uleb128, 0, false,
							  &ignored)))
				return false;
			p += n;
			continue;
		default:
			return false;   /* advances, or not looked into */
		}
	}
	return false;
}
