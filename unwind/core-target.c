/* unwind/core-target.c - a core file as a target: what a live target has,
 * built from what core-file.c reads.  A module map (from NT_FILE, else
 * from the auxv and the dynamic linker's r_debug list in the core's
 * memory), the ELF files behind it (under a sysroot, checked against the
 * core by build-id), the vdso, and the per-thread snapshots.
 *
 * The core is hostile input (see core-file.c): every address, count and
 * string taken from its memory is bounded below.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "base/base.h"
#include "ptrace/sample.h"
#include "unwind/core-file.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

#ifndef DT_MIPS_RLD_MAP
# define DT_MIPS_RLD_MAP 0x70000016
#endif
#ifndef DT_MIPS_RLD_MAP_REL
# define DT_MIPS_RLD_MAP_REL 0x70000035
#endif

/* Bounds on what a core may ask of us (hostile input): */
#define MAX_PATH_READ   4096      /* a string read from the core's memory */
#define MAX_LINK_MAPS   4096      /* entries of the r_debug list */
#define MAX_DYN_ENTRIES 4096      /* entries of a .dynamic scanned */
#define MAX_PHDRS       512       /* program headers of an in-memory ELF */
#define CORE_PAGE       4096u     /* page rounding of file mappings */

static void warn(struct core_file *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
warn(struct core_file *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL, **nw;

	if (c->nwarnings >= 32)
		return;            /* a hostile core could name 10^5 files */
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	nw = realloc(c->warnings, (c->nwarnings + 1) * sizeof(*nw));
	if (!nw) {
		free(s);
		return;
	}
	c->warnings = nw;
	c->warnings[c->nwarnings++] = s;
}

/* A file region of the target: from NT_FILE, or from a loaded object's
 * PT_LOAD (link_map path). */
struct region {
	uint64_t start, end, offset;
	char *path;               /* malloc'd; becomes the mapping's */
	unsigned perms;
	struct elf_image *image;
	bool bias_known;
	uint64_t bias;
};

struct regions {
	struct region *v;
	size_t n, cap;
};

/* Append r; takes ownership of r->path whatever happens. */
static int
regions_add(struct regions *rs, struct region *r)
{
	if (BASE_GROW(rs->v, rs->cap, rs->n + 1, 64) < 0) {
		free(r->path);
		return -ENOMEM;
	}
	rs->v[rs->n++] = *r;
	return 0;
}

static void
regions_free(struct regions *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].path);
	free(rs->v);
}

static int
cmp_region(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

static unsigned
perms_of_flags(unsigned pf)
{
	return (pf & PF_R ? MAPPING_R : 0) | (pf & PF_W ? MAPPING_W : 0) |
	       (pf & PF_X ? MAPPING_X : 0);
}

/* A file's segment's permissions, read-only if none. */
static unsigned
perms_of_segment(const struct elf_segment *sg)
{
	return sg ? perms_of_flags(sg->flags) : MAPPING_R;
}

/* Read a NUL-terminated string of at most max - 1 bytes from the core's
 * memory.  Returns 0 or -EFAULT. */
static int
read_string(const struct core_file *c, uint64_t addr, char *buf, size_t max)
{
	for (size_t i = 0; i + 1 < max; i++) {
		if (unwind_core_read(c, addr + i, &buf[i], 1) < 0)
			return -EFAULT;
		if (buf[i] == '\0')
			return 0;
	}
	buf[max - 1] = '\0';
	return -EFAULT;
}

/* Program headers, only the fields needed here. */
struct phdr {
	uint32_t type;
	uint64_t offset, vaddr, filesz, memsz;
	unsigned flags;
};

static void
parse_phdr_table(const struct core_file *c, const unsigned char *raw,
		 size_t n, struct phdr *out)
{
	bool b64 = c->elf_class == ELFCLASS64;
	size_t es = b64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);

	for (size_t i = 0; i < n; i++) {
		const unsigned char *ph = raw + i * es;

		out[i].type = (uint32_t)unwind_core_get(c, ph, 4);
		if (b64) {
			out[i].flags = (unsigned)unwind_core_get(c, ph + 4, 4);
			out[i].offset = unwind_core_get(c, ph + 8, 8);
			out[i].vaddr = unwind_core_get(c, ph + 16, 8);
			out[i].filesz = unwind_core_get(c, ph + 32, 8);
			out[i].memsz = unwind_core_get(c, ph + 40, 8);
		} else {
			out[i].offset = unwind_core_get(c, ph + 4, 4);
			out[i].vaddr = unwind_core_get(c, ph + 8, 4);
			out[i].filesz = unwind_core_get(c, ph + 16, 4);
			out[i].memsz = unwind_core_get(c, ph + 20, 4);
			out[i].flags = (unsigned)unwind_core_get(c, ph + 24, 4);
		}
	}
}

/* phnum program headers at addr in the core's memory.  Returns the count
 * read, 0 when they are not in the core. */
static size_t
mem_phdrs(const struct core_file *c, uint64_t addr, uint64_t phnum, struct phdr *out)
{
	size_t es = c->elf_class == ELFCLASS64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	unsigned char raw[MAX_PHDRS * sizeof(Elf64_Phdr)];

	if (phnum == 0 || phnum > MAX_PHDRS ||
	    unwind_core_read(c, addr, raw, (size_t)phnum * es) < 0)
		return 0;
	parse_phdr_table(c, raw, (size_t)phnum, out);
	return (size_t)phnum;
}

/* The program headers of the ELF header at addr in the core's memory. */
static size_t
mem_elf_phdrs(const struct core_file *c, uint64_t addr, struct phdr *out)
{
	bool b64 = c->elf_class == ELFCLASS64;
	unsigned char eh[sizeof(Elf64_Ehdr)];
	size_t ehsz = b64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	uint64_t phoff, phnum;

	if (unwind_core_read(c, addr, eh, ehsz) < 0 || memcmp(eh, ELFMAG, SELFMAG) != 0 ||
	    eh[EI_CLASS] != c->elf_class)
		return 0;
	phoff = b64 ? unwind_core_get(c, eh + 32, 8) : unwind_core_get(c, eh + 28, 4);
	phnum = unwind_core_get(c, eh + (b64 ? 56 : 44), 2);
	if (phoff > UINT64_MAX - addr)
		return 0;
	return mem_phdrs(c, addr + phoff, phnum, out);
}

/* The program headers of a file image of the core's class and byte order
 * (anything else is not this process's file).  *phoff gets e_phoff. */
static size_t
image_phdrs(const struct core_file *c, const struct elf_image *img,
	    struct phdr *out, uint64_t *phoff_out)
{
	bool b64 = c->elf_class == ELFCLASS64;
	size_t ehsz = b64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t es = b64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint64_t phoff, phnum;

	if (img->size < ehsz || img->data[EI_CLASS] != c->elf_class ||
	    img->data[EI_DATA] != (c->big_endian ? ELFDATA2MSB : ELFDATA2LSB))
		return 0;
	phoff = b64 ? unwind_core_get(c, img->data + 32, 8) : unwind_core_get(c, img->data + 28, 4);
	phnum = unwind_core_get(c, img->data + (b64 ? 56 : 44), 2);
	if (phnum > MAX_PHDRS || !span_inside(img->size, phoff, phnum * es))
		return 0;
	parse_phdr_table(c, img->data + phoff, (size_t)phnum, out);
	if (phoff_out)
		*phoff_out = phoff;
	return (size_t)phnum;
}

/* The GNU build-id of the ELF object whose header is at addr in the
 * core's memory.  Returns its length, 0 if it is not in the core. */
static size_t
mem_build_id(const struct core_file *c, uint64_t addr, unsigned char *id, size_t max)
{
	struct phdr ph[MAX_PHDRS];
	size_t n = mem_elf_phdrs(c, addr, ph);
	uint64_t first = UINT64_MAX;

	for (size_t i = 0; i < n; i++)
		if (ph[i].type == PT_LOAD && ph[i].offset == 0)
			first = ph[i].vaddr & ~(uint64_t)(CORE_PAGE - 1);
	for (size_t i = 0; i < n && first != UINT64_MAX; i++) {
		unsigned char notes[1024];
		size_t len = ph[i].filesz < sizeof(notes) ? (size_t)ph[i].filesz : sizeof(notes);

		if (ph[i].type != PT_NOTE || ph[i].vaddr < first ||
		    ph[i].vaddr - first > UINT64_MAX - addr)
			continue;
		if (unwind_core_read(c, addr + (ph[i].vaddr - first), notes, len) < 0)
			continue;
		for (size_t off = 0; off + 12 <= len;) {
			uint64_t namesz = unwind_core_get(c, notes + off, 4);
			uint64_t descsz = unwind_core_get(c, notes + off + 4, 4);
			uint64_t type = unwind_core_get(c, notes + off + 8, 4);
			uint64_t np = (namesz + 3) & ~(uint64_t)3, dp = (descsz + 3) & ~(uint64_t)3;

			if (np > len - off - 12 || dp > len - off - 12 - np)
				break;
			if (type == NT_GNU_BUILD_ID && namesz == 4 &&
			    memcmp(notes + off + 12, "GNU", 4) == 0 &&
			    descsz > 0 && descsz <= max) {
				memcpy(id, notes + off + 12 + np, (size_t)descsz);
				return (size_t)descsz;
			}
			off += 12 + (size_t)np + (size_t)dp;
		}
	}
	return 0;
}

struct opener {
	struct unwind_target *t;
	struct core_file *c;
	const char *exe;          /* --exe, or NULL */
	char *exe_path;           /* the core's name for the main executable */
	const char *sysroot;      /* --sysroot, or NULL */
};

/* Open the file the core calls path: under the sysroot, or --exe for the
 * main executable.  NULL, with a warning, when it cannot be opened. */
static struct elf_image *
open_file(struct opener *o, const char *path)
{
	struct elf_image *img;
	char *full = NULL;
	const char *p = path;
	int err = 0;

	if (o->exe && o->exe_path && strcmp(path, o->exe_path) == 0) {
		p = o->exe;
	} else if (o->sysroot) {
		if (asprintf(&full, "%s%s", o->sysroot, path) < 0)
			return NULL;
		p = full;
	}
	img = unwind_elf_cache_open_path(&o->t->elves, p, &err);
	if (!img)
		warn(o->c, "cannot open '%s': %s", p, strerror(-err));
	free(full);
	return img;
}

/* The file has no (dev, inode) to check: compare its build-id with the
 * object's in the core, when the core holds its first page at ehdr (0:
 * not known).  false, with a warning, when they differ. */
static bool
check_build_id(struct opener *o, const struct elf_image *img, uint64_t ehdr)
{
	unsigned char id[64];
	size_t n = ehdr ? mem_build_id(o->c, ehdr, id, sizeof(id)) : 0;

	if (n > 0 && (n != img->build_id_len || memcmp(id, img->build_id, n) != 0)) {
		warn(o->c, "'%s' is not the file the process had mapped (its build-id "
		     "differs from the core's): not used", img->path);
		return false;
	}
	if (n == 0 && img->build_id_len > 0)
		warn(o->c, "cannot check '%s' against the core (its first page is "
		     "not in the core): names are wrong if the file changed", img->path);
	return true;
}

static struct elf_image *
open_module(struct opener *o, const char *path, uint64_t ehdr)
{
	struct elf_image *img = open_file(o, path);

	return img && check_build_id(o, img, ehdr) ? img : NULL;
}

/* Regions from NT_FILE; a run of entries of one file shares its image. */
static int
regions_from_nt_file(struct opener *o, struct regions *rs)
{
	struct core_file *c = o->c;

	for (size_t i = 0; i < c->nfiles; i++) {
		const struct core_file_map *f = &c->files[i];
		const struct core_segment *s = unwind_core_segment_find(c, f->start);
		struct region r = { .start = f->start, .end = f->end, .offset = f->offset };

		if (rs->n > 0 && strcmp(rs->v[rs->n - 1].path, f->path) == 0)
			r.image = rs->v[rs->n - 1].image;
		else
			r.image = open_module(o, f->path, f->offset == 0 ? f->start : 0);
		/* A file's mapping the core has no segment for (gdb's gcore
		 * leaves out unchanged code): its file's program header says
		 * what it is.  Taken for data, the code of a gcore was no
		 * place for a return address.  Without the file, it may be
		 * code. */
		r.perms = s ? perms_of_flags(s->flags) :
			  r.image ? perms_of_segment(unwind_elf_image_segment_at(r.image, f->offset)) :
			  MAPPING_R | MAPPING_X;
		r.path = strdup(f->path);
		if (!r.path || regions_add(rs, &r) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Regions of one object loaded at bias (link_map path): one per PT_LOAD,
 * page-rounded as the kernel and ld.so map them. */
static int
regions_of_object(struct opener *o, struct regions *rs, const char *path, uint64_t bias)
{
	struct phdr ph[MAX_PHDRS];
	const uint64_t mask = CORE_PAGE - 1;
	struct elf_image *img;
	uint64_t ehdr = 0;
	size_t n;

	img = open_file(o, path);
	if (!img)
		return 0;
	n = image_phdrs(o->c, img, ph, NULL);
	/* Its first page, with the build-id note, is at the PT_LOAD of file
	 * offset 0. */
	for (size_t i = 0; i < n; i++)
		if (ph[i].type == PT_LOAD && ph[i].offset == 0)
			ehdr = (ph[i].vaddr & ~mask) + bias;
	if (!check_build_id(o, img, ehdr))
		return 0;
	for (size_t i = 0; i < n; i++) {
		struct region r = { .image = img, .bias = bias, .bias_known = true };
		uint64_t lo, hi;

		if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
			continue;
		lo = (ph[i].vaddr & ~mask) + bias;
		hi = ph[i].vaddr + ph[i].memsz + bias;
		if (hi <= lo || hi > UINT64_MAX - mask)
			continue;
		r.start = lo;
		r.end = (hi + mask) & ~mask;
		r.offset = ph[i].offset & ~mask;
		r.perms = perms_of_flags(ph[i].flags);
		r.path = strdup(path);
		if (!r.path || regions_add(rs, &r) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The address of r_debug: DT_DEBUG in the executable's dynamic section
 * (ld.so fills it at start-up), or MIPS's DT_MIPS_RLD_MAP(_REL), which
 * point at a word holding it (the MIPS .dynamic is read-only).  0 if none. */
/* Read len bytes at addr from the core, else from the file img placed at
 * bias: MIPS keeps .dynamic in the read-only text segment, which cores
 * leave out (tests/mips-core.test, dynamic programs). */
static int
core_or_file_read(const struct core_file *c, const struct elf_image *img,
		  uint64_t bias, uint64_t addr, void *buf, size_t len)
{
	if (unwind_core_read(c, addr, buf, len) == 0)
		return 0;
	for (size_t i = 0; img && addr >= bias && i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		uint64_t v = addr - bias;

		if (v < s->vaddr || v - s->vaddr >= s->filesz || len > s->filesz - (v - s->vaddr))
			continue;
		if (!span_inside(img->size, s->offset + (v - s->vaddr), len))
			return -EFAULT;
		memcpy(buf, img->data + s->offset + (v - s->vaddr), len);
		return 0;
	}
	return -EFAULT;
}

static uint64_t
find_r_debug(const struct core_file *c, uint64_t dyn, const struct elf_image *exe,
	     uint64_t bias)
{
	size_t w = core_word_size(c);
	unsigned char e[16], word[8];

	for (uint64_t i = 0; i < MAX_DYN_ENTRIES; i++) {
		uint64_t at = dyn + i * 2 * w, tag, val;

		if (at < dyn || core_or_file_read(c, exe, bias, at, e, 2 * w) < 0)
			return 0;
		tag = unwind_core_get(c, e, w);
		val = unwind_core_get(c, e + w, w);
		if (tag == DT_NULL)
			return 0;
		if (tag == DT_DEBUG && val != 0)
			return val;
		if (c->machine == EM_MIPS &&
		    (tag == DT_MIPS_RLD_MAP || tag == DT_MIPS_RLD_MAP_REL)) {
			uint64_t p = tag == DT_MIPS_RLD_MAP ? val : at + val;
			if (unwind_core_read(c, p, word, w) == 0 &&
			    unwind_core_get(c, word, w) != 0)
				return unwind_core_get(c, word, w);
		}
	}
	return 0;
}

/* Without NT_FILE: the executable from AT_PHDR (named by --exe or
 * AT_EXECFN), the libraries from the r_debug link_map list, and the
 * dynamic linker from AT_BASE and PT_INTERP if the list lacks it. */
static int
regions_from_link_map(struct opener *o, struct regions *rs)
{
	struct core_file *c = o->c;
	struct phdr ph[MAX_PHDRS];
	uint64_t at_phdr = 0, at_phnum = 0, at_base = 0, at_execfn = 0;
	uint64_t bias = 0, dyn = 0, rdebug = 0, lm = 0, phoff = 0;
	size_t w = core_word_size(c), n, fn = 0;
	bool have_bias = false, have_ldso = false;
	struct elf_image *exe = NULL;
	char name[MAX_PATH_READ];
	unsigned char word[8];
	int r;

	if (unwind_core_auxv(c, AT_PHDR, &at_phdr) < 0 ||
	    unwind_core_auxv(c, AT_PHNUM, &at_phnum) < 0) {
		warn(c, "the core has no NT_FILE note and no AT_PHDR in its auxiliary "
		     "vector: no module is known");
		return 0;
	}
	unwind_core_auxv(c, AT_BASE, &at_base);
	unwind_core_auxv(c, AT_EXECFN, &at_execfn);
	if (at_execfn && read_string(c, at_execfn, name, sizeof(name)) == 0 && name[0] == '/')
		o->exe_path = strdup(name);
	else if (o->exe)
		o->exe_path = strdup(o->exe);
	if (!o->exe_path) {
		warn(c, "the core does not name its executable: use --exe");
		return 0;
	}
	exe = open_file(o, o->exe_path);

	/* The executable's program headers: in the core (dumped with its
	 * first page), else in the file. */
	n = mem_phdrs(c, at_phdr, at_phnum, ph);
	if (n == 0 && exe)
		n = image_phdrs(c, exe, ph, NULL);
	for (size_t i = 0; i < n; i++) {
		if (ph[i].type == PT_PHDR) {
			bias = at_phdr - ph[i].vaddr;
			have_bias = true;
		}
	}
	/* No PT_PHDR (static executables often lack one): the headers sit at
	 * e_phoff of the PT_LOAD at file offset 0. */
	fn = !have_bias && exe ? image_phdrs(c, exe, ph, &phoff) : 0;
	for (size_t i = 0; i < fn && !have_bias; i++) {
		if (ph[i].type == PT_LOAD && ph[i].offset == 0) {
			bias = at_phdr - phoff - ph[i].vaddr;
			have_bias = true;
			n = fn;
		}
	}
	if (!have_bias) {
		warn(c, "cannot place the executable '%s' in the core's memory", o->exe_path);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (ph[i].type == PT_DYNAMIC)
			dyn = ph[i].vaddr + bias;
	r = exe ? regions_of_object(o, rs, o->exe_path, bias) : 0;
	if (r < 0)
		return r;

	rdebug = dyn ? find_r_debug(c, dyn, exe, bias) : 0;
	/* r_debug: int r_version, then r_map (word-aligned). */
	if (rdebug && unwind_core_read(c, rdebug + w, word, w) == 0)
		lm = unwind_core_get(c, word, w);
	/* A hostile core can make the list loop: every entry is visited
	 * once (and each costs up to 512 regions of a 4 KiB path). */
	uint64_t *seen = calloc(MAX_LINK_MAPS, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (size_t i = 0; lm && i < MAX_LINK_MAPS; i++) {
		/* struct link_map: l_addr, l_name, l_ld, l_next, l_prev. */
		unsigned char e[4 * 8];
		uint64_t l_addr, l_name, l_next;
		bool again = false;

		for (size_t j = 0; j < i && !again; j++)
			again = seen[j] == lm;
		seen[i] = lm;
		if (again || unwind_core_read(c, lm, e, 4 * w) < 0)
			break;
		l_addr = unwind_core_get(c, e, w);
		l_name = unwind_core_get(c, e + w, w);
		l_next = unwind_core_get(c, e + 3 * w, w);
		/* The executable has an empty name, the vdso a bare soname. */
		if (l_name && read_string(c, l_name, name, sizeof(name)) == 0 &&
		    name[0] == '/' && strcmp(name, o->exe_path) != 0) {
			if (at_base && l_addr == at_base)
				have_ldso = true;
			r = regions_of_object(o, rs, name, l_addr);
			if (r < 0) {
				free(seen);
				return r;
			}
		}
		lm = l_next;
	}
	free(seen);

	/* No r_debug (static-pie, or the process died before ld.so ran):
	 * the dynamic linker is at AT_BASE, named by PT_INTERP. */
	fn = at_base && !have_ldso && exe ? image_phdrs(c, exe, ph, NULL) : 0;
	for (size_t i = 0; i < fn; i++) {
		if (ph[i].type != PT_INTERP || ph[i].filesz < 2 || ph[i].filesz >= sizeof(name) ||
		    !span_inside(exe->size, ph[i].offset, ph[i].filesz))
			continue;
		memcpy(name, exe->data + ph[i].offset, (size_t)ph[i].filesz);
		name[ph[i].filesz] = '\0';
		if (name[0] == '/')
			return regions_of_object(o, rs, name, at_base);
	}
	return 0;
}

static int
cmp_mapping_start(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* Add m to the map (takes m->path). */
static int
map_add(struct module_map *mm, size_t *cap, struct mapping *m)
{
	if (BASE_GROW(mm->v, *cap, mm->n + 1, 64) < 0) {
		free(m->path);
		return -ENOMEM;
	}
	mm->v[mm->n++] = *m;
	return 0;
}

/* The module map: the file regions (overlaps dropped), and the parts of the
 * core's segments no region covers as anonymous memory (stacks, heap,
 * the vdso).  Every mapping is resolved here (image_tried), so target.c
 * never looks for its file through /proc. */
static int
build_map(struct unwind_target *t, struct regions *rs)
{
	struct core_file *c = t->core;
	struct module_map *mm = &t->maps;
	size_t cap = 0, kept = 0, j = 0;
	int r;

	if (rs->n > 1)
		qsort(rs->v, rs->n, sizeof(*rs->v), cmp_region);
	for (size_t i = 0; i < rs->n; i++) {
		if (kept > 0 && rs->v[i].start < rs->v[kept - 1].end) {
			free(rs->v[i].path);
			continue;
		}
		rs->v[kept++] = rs->v[i];
	}
	rs->n = kept;

	for (size_t i = 0; i < rs->n; i++) {
		struct region *g = &rs->v[i];
		struct mapping m = { .start = g->start, .end = g->end, .offset = g->offset,
				     .perms = g->perms, .path = g->path, .image = g->image,
				     .image_tried = true, .bias_known = g->bias_known,
				     .bias = g->bias };

		g->path = NULL;
		if (m.image && !m.bias_known && unwind_elf_image_bias(m.image, &m, &m.bias) == 0)
			m.bias_known = true;
		r = map_add(mm, &cap, &m);
		if (r < 0)
			return r;
	}
	/* Anonymous gaps: both lists are sorted and disjoint, one pass. */
	for (size_t i = 0; i < c->nsegs; i++) {
		const struct core_segment *s = &c->segs[i];
		uint64_t at = s->vaddr, end = s->vaddr + s->memsz;

		while (j < rs->n && rs->v[j].end <= at)
			j++;
		for (size_t k = j; at < end; k++) {
			uint64_t stop = k < rs->n && rs->v[k].start < end ? rs->v[k].start : end;

			if (stop > at) {
				struct mapping m = { .start = at, .end = stop,
						     .perms = perms_of_flags(s->flags),
						     .image_tried = true };
				if (t->vdso && at == t->vdso_start) {
					m.path = strdup("[vdso]");
					m.image = t->vdso;
					if (!m.path)
						return -ENOMEM;
					if (unwind_elf_image_bias(m.image, &m, &m.bias) == 0)
						m.bias_known = true;
				}
				r = map_add(mm, &cap, &m);
				if (r < 0)
					return r;
			}
			if (k >= rs->n || rs->v[k].start >= end)
				break;
			at = rs->v[k].end;
		}
	}
	if (mm->n > 1) {
		size_t n = 0;

		qsort(mm->v, mm->n, sizeof(*mm->v), cmp_mapping_start);
		for (size_t i = 0; i < mm->n; i++) {
			if (n > 0 && mm->v[i].start < mm->v[n - 1].end) {
				free(mm->v[i].path);
				continue;
			}
			mm->v[n++] = mm->v[i];
		}
		mm->n = n;
	}
	return 0;
}

/* The vdso: AT_SYSINFO_EHDR, copied out of the core (the kernel and gdb
 * both dump it). */
static void
core_vdso(struct unwind_target *t)
{
	const struct core_segment *s;
	uint64_t at;
	void *buf;

	if (unwind_core_auxv(t->core, AT_SYSINFO_EHDR, &at) < 0 ||
	    !(s = unwind_core_segment_find(t->core, at)) ||
	    s->vaddr != at || s->filesz == 0 || s->filesz > (64u << 20))
		return;
	buf = malloc((size_t)s->filesz);
	if (!buf)
		return;
	memcpy(buf, t->core->data + s->offset, (size_t)s->filesz);
	t->vdso = unwind_elf_image_from_memory(&t->elves, buf, (size_t)s->filesz, "[vdso]");
	if (t->vdso) {
		t->vdso_start = s->vaddr;
		t->vdso_end = s->vaddr + s->filesz;
	}
}

/* A core file: the memory it dumped; nothing live. */
static int
core_read_own(struct unwind_target *t, uint64_t addr, void *buf, size_t len)
{
	return unwind_core_read(t->core, addr, buf, len);
}

static void
core_release(struct unwind_target *t)
{
	unwind_core_file_free(t->core);
	t->core = NULL;
}

static const struct target_ops core_ops = {
	.read_own = core_read_own,
	.release = core_release,
};

struct unwind_target *
unwind_target_open_core(const char *core, const char *exe, const char *sysroot,
			int *err, char *why, size_t whylen)
{
	struct unwind_target *t;
	struct regions rs = { NULL, 0, 0 };
	struct opener o;
	const char *reason = NULL;
	uint64_t entry;
	int r;

	if (why && whylen)
		why[0] = '\0';
	t = calloc(1, sizeof(*t));
	if (!t) {
		*err = -ENOMEM;
		return NULL;
	}
	t->core = unwind_core_file_open(core, err, &reason);
	if (!t->core) {
		if (reason && why && whylen)
			snprintf(why, whylen, "%s", reason);
		free(t);
		return NULL;
	}
	t->ops = &core_ops;
	t->arch = arch_from_elf(t->core->machine, t->core->elf_class, t->core->big_endian);
	if (t->core->has_pac_mask) {
		t->pac_mask = t->core->pac_insn_mask;
		t->pac_mask_fixed = true;
	}
	memset(&o, 0, sizeof(o));
	o.t = t;
	o.c = t->core;
	o.exe = exe;
	o.sysroot = sysroot && sysroot[0] ? sysroot : NULL;
	core_vdso(t);
	if (t->core->has_nt_file) {
		/* The main executable is the file mapped at AT_ENTRY. */
		for (size_t i = 0; i < t->core->nfiles &&
				   unwind_core_auxv(t->core, AT_ENTRY, &entry) == 0; i++) {
			const struct core_file_map *f = &t->core->files[i];

			if (entry >= f->start && entry < f->end) {
				o.exe_path = strdup(f->path);
				break;
			}
		}
		if (exe && !o.exe_path)
			warn(t->core, "cannot tell which file of the core is the executable: "
			     "--exe '%s' not used", exe);
		r = regions_from_nt_file(&o, &rs);
	} else {
		r = regions_from_link_map(&o, &rs);
	}
	if (r == 0)
		r = build_map(t, &rs);
	regions_free(&rs);
	free(o.exe_path);
	if (r < 0) {
		*err = r;
		unwind_target_free(t);
		return NULL;
	}
	unwind_target_state_init(t);
	return t;
}

int
unwind_core_info(const struct unwind_target *t, struct unwind_core_info *info)
{
	const struct core_file *c = t ? t->core : NULL;

	memset(info, 0, sizeof(*info));
	if (!c)
		return -EINVAL;
	info->pid = c->pid;
	memcpy(info->comm, c->comm, sizeof(info->comm));
	info->state = c->state;
	info->signal = c->threads[0].cursig;
	info->machine = c->machine;
	info->elf_class = c->elf_class == ELFCLASS64 ? 64 : 32;
	info->big_endian = c->big_endian;
	info->native = unwind_core_file_native(c);
	info->nthreads = c->nthreads;
	return 0;
}

int
unwind_core_thread(const struct unwind_target *t, size_t i, struct stack_snapshot *out)
{
	const struct core_file *c = t ? t->core : NULL;

	memset(out, 0, sizeof(*out));
	if (!c || i >= c->nthreads || c->threads[i].regs_len > sizeof(out->regs))
		return -EINVAL;
	out->tid = c->threads[i].tid;
	memcpy(out->regs, c->threads[i].regs, c->threads[i].regs_len);
	out->regs_len = c->threads[i].regs_len;
	return 0;
}

const char *
unwind_core_warning(const struct unwind_target *t, size_t i)
{
	if (!t || !t->core || i >= t->core->nwarnings)
		return NULL;
	return t->core->warnings[i];
}
