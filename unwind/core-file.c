/* unwind/core-file.c - the core file reader: kernel core dumps and gdb's
 * gcore output.
 *
 * The reader (core_file_*) parses the ELF core by hand, for ELFCLASS32 and
 * ELFCLASS64 in either byte order, and knows no architecture: it hands out
 * each thread's pr_reg bytes, the PT_LOAD segments, NT_FILE, NT_AUXV and
 * NT_PRPSINFO.  core-target.c turns that into a target.
 *
 * Cores come from containers we do not trust and stackspy runs as root:
 * every count, offset and size read from the file is checked against the
 * file before use, loops are bounded by the file's size, and files named
 * by the core are opened without following them into FIFOs or devices.
 * tests/fuzz/fuzz-core.c feeds this reader and core-target.c random
 * cores; tests/core-bad.test the truncated and corrupt ones.
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/arch.h"
#include "base/base.h"
#include "unwind/core-file.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"

#ifndef NT_ARM_PAC_MASK
# define NT_ARM_PAC_MASK 0x406
#endif
#ifndef NT_FILE
# define NT_FILE 0x46494c45
#endif

/* ---- byte order ----------------------------------------------------------- */

uint64_t
unwind_core_get(const struct core_file *c, const unsigned char *p, size_t size)
{
	if (size == 0)
		size = c->elf_class == ELFCLASS64 ? 8 : 4;
	return arch_get_uint(p, size, c->big_endian);
}

bool
unwind_core_file_native(const struct core_file *c)
{
	const struct arch *a = arch_from_elf(c->machine, c->elf_class, c->big_endian);
	return a && a == arch_host() && a->fp_chain;
}

/* ---- parsing -------------------------------------------------------------- */

static int
cmp_seg(const void *a, const void *b)
{
	const struct core_segment *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return 0;
}

static int
cmp_file_map(const void *a, const void *b)
{
	const struct core_file_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* NT_PRSTATUS: pr_pid and pr_reg sit at fixed offsets per class
 * (arch/arch.h); pr_reg runs up to the int pr_fpvalid at the end (padded
 * to 8 on 64-bit).  Its size per architecture is in the arch/ tables. */
#define CORE_MAX_THREADS 65536

static int
parse_prstatus(struct core_file *c, const unsigned char *d, size_t len)
{
	size_t pid_off = ARCH_PR_PID_OFFSET(c->elf_class == ELFCLASS64);
	size_t reg_off = ARCH_PR_REG_OFFSET(c->elf_class == ELFCLASS64);
	size_t tail = c->elf_class == ELFCLASS64 ? 8 : 4;
	struct core_thread *th;

	if (len < reg_off + tail + 4)
		return 0;          /* too short to hold registers: ignored */
	/* A hostile core can hold hundreds of thousands of tiny notes: more
	 * threads than any real process are ignored, and the array grows
	 * geometrically (capacity 16, then doubled). */
	if (c->nthreads >= CORE_MAX_THREADS)
		return 0;
	if (BASE_GROW(c->threads, c->threads_cap, c->nthreads + 1, 16) < 0)
		return -ENOMEM;
	th = &c->threads[c->nthreads++];
	th->cursig = (int)(int16_t)unwind_core_get(c, d + ARCH_PR_CURSIG_OFFSET, 2);
	th->tid = (pid_t)(int32_t)unwind_core_get(c, d + pid_off, 4);
	th->regs = d + reg_off;
	th->regs_len = len - reg_off - tail;
	return 0;
}

/* NT_PRPSINFO: pr_fname[16] and pr_psargs[80] close the struct on every
 * architecture, and pr_pid is 16 bytes before pr_fname (pid, ppid, pgrp,
 * sid); what comes before differs (pr_flag is a long, pr_uid 2 or 4
 * bytes).  So both are found from the end. */
static void
parse_prpsinfo(struct core_file *c, const unsigned char *d, size_t len)
{
	if (len < 96 + 16 + 4)
		return;
	size_t fname = len - 96;
	c->has_prpsinfo = true;
	c->state = d[1] >= 0x21 && d[1] < 0x7f ? (char)d[1] : '?';
	c->pid = (pid_t)(int32_t)unwind_core_get(c, d + fname - 16, 4);
	memcpy(c->comm, d + fname, 16);
	c->comm[16] = '\0';
	for (char *p = c->comm; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* NT_FILE: count, page size, count * (start, end, page offset), then count
 * NUL-terminated names; all words of the core's class. */
static int
parse_nt_file(struct core_file *c, const unsigned char *d, size_t len)
{
	size_t w = core_word_size(c);
	uint64_t count, page;
	const char *names, *end;
	size_t kept = 0;

	/* Only the first NT_FILE counts (fuzz-core found a leak here when a
	 * second one came after an empty first). */
	if (c->files || len < 2 * w)
		return 0;
	count = unwind_core_get(c, d, w);
	page = unwind_core_get(c, d + w, w);
	/* Each entry takes 3 words and at least one name byte. */
	if (count == 0 || count > (len - 2 * w) / (3 * w + 1))
		return 0;
	c->files = calloc((size_t)count, sizeof(*c->files));
	if (!c->files)
		return -ENOMEM;
	names = (const char *)d + 2 * w + count * 3 * w;
	end = (const char *)d + len;
	for (uint64_t i = 0; i < count && names < end; i++) {
		const unsigned char *e = d + 2 * w + i * 3 * w;
		const char *nul = memchr(names, '\0', (size_t)(end - names));
		struct core_file_map *f = &c->files[kept];
		uint64_t pgoff = unwind_core_get(c, e + 2 * w, w);

		if (!nul)
			break;
		f->start = unwind_core_get(c, e, w);
		f->end = unwind_core_get(c, e + w, w);
		if (page == 0 || pgoff > UINT64_MAX / page)
			f->offset = 0;
		else
			f->offset = pgoff * page;
		if (f->start < f->end && names[0] == '/') {
			f->path = strndup(names, (size_t)(nul - names));
			if (!f->path)
				return -ENOMEM;
			kept++;
		}
		names = nul + 1;
	}
	c->nfiles = kept;
	c->has_nt_file = kept > 0;
	if (kept == 0)
		return 0;      /* c->files stays allocated: it marks "seen" */
	if (kept > 1) {
		size_t n = 0;

		qsort(c->files, kept, sizeof(*c->files), cmp_file_map);
		for (size_t i = 0; i < kept; i++) {
			if (n > 0 && c->files[i].start < c->files[n - 1].end) {
				free(c->files[i].path);
				continue;
			}
			c->files[n++] = c->files[i];
		}
		c->nfiles = n;
	}
	return 0;
}

/* Walk the notes of one PT_NOTE segment [off, off + len). */
static int
parse_notes(struct core_file *c, uint64_t off, uint64_t len)
{
	const unsigned char *p = c->data + off, *end = p + len;

	while ((size_t)(end - p) >= 12) {
		uint64_t namesz = unwind_core_get(c, p, 4);
		uint64_t descsz = unwind_core_get(c, p + 4, 4);
		uint64_t type = unwind_core_get(c, p + 8, 4);
		uint64_t name_pad = (namesz + 3) & ~(uint64_t)3;
		uint64_t desc_pad = (descsz + 3) & ~(uint64_t)3;
		size_t left = (size_t)(end - p) - 12;
		const unsigned char *name = p + 12, *desc;
		int r = 0;

		if (name_pad > left || desc_pad > left - name_pad)
			break;     /* truncated: keep what came before */
		desc = name + name_pad;
		/* "CORE" notes carry the process; "LINUX" ones the FPU state. */
		if (namesz == 5 && memcmp(name, "CORE", 5) == 0) {
			switch (type) {
			case NT_PRSTATUS:
				r = parse_prstatus(c, desc, descsz);
				break;
			case NT_PRPSINFO:
				if (!c->has_prpsinfo)
					parse_prpsinfo(c, desc, descsz);
				break;
			case NT_AUXV:
				if (!c->auxv) {
					c->auxv = desc;
					c->auxv_len = descsz;
				}
				break;
			case NT_FILE:
				r = parse_nt_file(c, desc, descsz);
				break;
			default:
				break;
			}
		}
		/* struct user_pac_mask { u64 data_mask, insn_mask; } (the
		 * kernel's asm/ptrace.h), one per thread, all the same. */
		if (namesz == 6 && memcmp(name, "LINUX", 6) == 0 &&
		    type == NT_ARM_PAC_MASK && descsz >= 16 && !c->has_pac_mask) {
			c->has_pac_mask = true;
			c->pac_insn_mask = arch_get_uint(desc + 8, 8, c->big_endian);
		}
		if (r < 0)
			return r;
		p = desc + desc_pad;
	}
	return 0;
}


/* Where the program header table is: the ELF header at data (size bytes,
 * c's class and byte order known) checked to be a core's, and the table
 * to lie in the file.  Returns 0, or -ENOEXEC with *why. */
static int
find_phdrs(struct core_file *c, const unsigned char *data, size_t size, uint64_t *phoff,
	   uint64_t *phnum, uint64_t *phentsize, const char **why)
{
	bool b64 = c->elf_class == ELFCLASS64;
	uint64_t shoff;

	if (size < (b64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		*why = "truncated ELF header";
		return -ENOEXEC;
	}
	if (unwind_core_get(c, data + 16, 2) != ET_CORE) {
		*why = "not a core file (ELF type is not ET_CORE)";
		return -ENOEXEC;
	}
	c->machine = (unsigned)unwind_core_get(c, data + 18, 2);
	*phoff = b64 ? unwind_core_get(c, data + 32, 8) : unwind_core_get(c, data + 28, 4);
	shoff = b64 ? unwind_core_get(c, data + 40, 8) : unwind_core_get(c, data + 32, 4);
	*phentsize = unwind_core_get(c, data + (b64 ? 54 : 42), 2);
	*phnum = unwind_core_get(c, data + (b64 ? 56 : 44), 2);
	/* More than 65534 segments: the real count is section 0's sh_info. */
	if (*phnum == PN_XNUM) {
		size_t shsz = b64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);

		if (!span_inside(size, shoff, shsz)) {
			*why = "section header 0 (segment count) outside the file";
			return -ENOEXEC;
		}
		*phnum = unwind_core_get(c, data + shoff + (b64 ? 44 : 28), 4);
	}
	if (*phentsize != (b64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) ||
	    *phnum == 0 || *phnum > size / *phentsize ||
	    !span_inside(size, *phoff, *phnum * *phentsize)) {
		*why = *phnum == 0 ? "no program headers" :
			"program header table outside the file";
		return -ENOEXEC;
	}
	return 0;
}

/* A PT_LOAD segment (its header's fields) appended to c->segs, which
 * has room for every header. */
static void
add_load(struct core_file *c, size_t *nsegs, uint64_t off, uint64_t vaddr, uint64_t filesz,
	 uint64_t memsz, uint64_t flags)
{
	struct core_segment *s = &c->segs[(*nsegs)++];

	s->vaddr = vaddr;
	s->memsz = memsz;
	s->offset = off;
	/* Clamped: a truncated core (disk full, ulimit) keeps the memory
	 * it has. */
	s->filesz = filesz < memsz ? filesz : memsz;
	if (off >= c->size)
		s->filesz = 0;
	else if (s->filesz > c->size - off)
		s->filesz = c->size - off;
	s->flags = (unsigned)flags & (PF_R | PF_W | PF_X);
}

/* The segments sorted by address, those that overlap one before them
 * dropped (unwind_core_segment_find searches them by bisection).  Returns how
 * many are kept. */
static size_t
sort_segments(struct core_file *c, size_t nsegs)
{
	size_t n = 0;

	if (nsegs <= 1)
		return nsegs;
	qsort(c->segs, nsegs, sizeof(*c->segs), cmp_seg);
	for (size_t i = 0; i < nsegs; i++) {
		if (n > 0 && c->segs[i].vaddr < c->segs[n - 1].vaddr + c->segs[n - 1].memsz)
			continue;
		c->segs[n++] = c->segs[i];
	}
	return n;
}

int
unwind_core_file_parse(struct core_file *c, const unsigned char *data, size_t size,
		const char **why)
{
	const char *dummy;
	uint64_t phoff, phnum, phentsize;
	size_t nsegs = 0;
	bool b64;
	int r;

	if (!why)
		why = &dummy;
	memset(c, 0, sizeof(*c));
	c->data = data;
	c->size = size;
	c->state = '?';
	if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0) {
		*why = size == 0 ? "empty file" : "not an ELF file";
		return -ENOEXEC;
	}
	if (data[EI_CLASS] != ELFCLASS32 && data[EI_CLASS] != ELFCLASS64) {
		*why = "unknown ELF class";
		return -ENOEXEC;
	}
	if (data[EI_DATA] != ELFDATA2LSB && data[EI_DATA] != ELFDATA2MSB) {
		*why = "unknown ELF byte order";
		return -ENOEXEC;
	}
	c->elf_class = data[EI_CLASS];
	c->big_endian = data[EI_DATA] == ELFDATA2MSB;
	b64 = c->elf_class == ELFCLASS64;
	r = find_phdrs(c, data, size, &phoff, &phnum, &phentsize, why);
	if (r < 0)
		return r;

	c->segs = calloc((size_t)phnum, sizeof(*c->segs));
	if (!c->segs) {
		r = -ENOMEM;
		goto fail;
	}
	uint64_t notes_end = 0;
	for (uint64_t i = 0; i < phnum; i++) {
		const unsigned char *ph = data + phoff + i * phentsize;
		uint64_t type = unwind_core_get(c, ph, 4), off, vaddr, filesz, memsz, flags;

		if (b64) {
			flags = unwind_core_get(c, ph + 4, 4);
			off = unwind_core_get(c, ph + 8, 8);
			vaddr = unwind_core_get(c, ph + 16, 8);
			filesz = unwind_core_get(c, ph + 32, 8);
			memsz = unwind_core_get(c, ph + 40, 8);
		} else {
			off = unwind_core_get(c, ph + 4, 4);
			vaddr = unwind_core_get(c, ph + 8, 4);
			filesz = unwind_core_get(c, ph + 16, 4);
			memsz = unwind_core_get(c, ph + 20, 4);
			flags = unwind_core_get(c, ph + 24, 4);
		}
		if (type == PT_NOTE) {
			/* A note segment cut by truncation still gives the
			 * notes before the cut.  Segments that overlap one
			 * already read are skipped: thousands of headers
			 * pointing at the same notes made parsing quadratic. */
			if (off < size && off >= notes_end) {
				notes_end = off + (filesz < size - off ? filesz : size - off);
				r = parse_notes(c, off, filesz < size - off ? filesz : size - off);
				if (r < 0)
					goto fail;
			}
		} else if (type == PT_LOAD && memsz > 0 && vaddr + memsz > vaddr) {
			add_load(c, &nsegs, off, vaddr, filesz, memsz, flags);
		}
	}
	c->nsegs = sort_segments(c, nsegs);
	if (c->nthreads == 0) {
		*why = "no thread in the core (no NT_PRSTATUS note; truncated?)";
		r = -ENOEXEC;
		goto fail;
	}
	if (!c->has_prpsinfo)
		c->pid = c->threads[0].tid;
	return 0;
fail:
	if (r == -ENOMEM)
		*why = NULL;
	unwind_core_file_release(c);
	return r;
}

void
unwind_core_file_release(struct core_file *c)
{
	for (size_t i = 0; i < c->nfiles; i++)
		free(c->files[i].path);
	for (size_t i = 0; i < c->nwarnings; i++)
		free(c->warnings[i]);
	free(c->warnings);
	free(c->files);
	free(c->threads);
	free(c->segs);
	c->files = NULL;
	c->threads = NULL;
	c->segs = NULL;
	c->warnings = NULL;
	c->nfiles = c->nthreads = c->threads_cap = c->nsegs = c->nwarnings = 0;
}

struct core_file *
unwind_core_file_open(const char *path, int *err, const char **why)
{
	struct core_file *c;
	struct stat st;
	void *data;
	int fd, r;

	*why = NULL;
	/* Checked through O_PATH before it is opened for reading: opening a
	 * device (a tty, a tape) has side effects, a FIFO would block
	 * (tests/core-bad.test). */
	fd = unwind_elf_open_regular(path);
	if (fd == -EINVAL) {
		*err = -EINVAL;
		*why = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ?
			"it is a directory" : "not a regular file";
		return NULL;
	}
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	if (st.st_size == 0 || (uintmax_t)st.st_size > SIZE_MAX) {
		*err = -ENOEXEC;
		*why = st.st_size == 0 ? "empty file" : "too large";
		close(fd);
		return NULL;
	}
	data = unwind_file_map(fd, (size_t)st.st_size, PROT_READ);
	r = -errno;
	close(fd);
	if (data == MAP_FAILED) {
		*err = r;
		return NULL;
	}
	c = malloc(sizeof(*c));
	if (!c) {
		unwind_file_unmap(data, (size_t)st.st_size);
		*err = -ENOMEM;
		return NULL;
	}
	r = unwind_core_file_parse(c, data, (size_t)st.st_size, why);
	if (r == 0)
		c->path = strdup(path);
	if (r < 0 || !c->path) {
		if (r == 0)
			unwind_core_file_release(c);
		unwind_file_unmap(data, (size_t)st.st_size);
		free(c);
		*err = r < 0 ? r : -ENOMEM;
		return NULL;
	}
	c->mmapped = true;
	return c;
}

void
unwind_core_file_free(struct core_file *c)
{
	if (!c)
		return;
	unwind_core_file_release(c);
	if (c->mmapped)
		unwind_file_unmap(c->data, c->size);
	free(c->path);
	free(c);
}

const struct core_segment *
unwind_core_segment_find(const struct core_file *c, uint64_t addr)
{
	size_t lo = unwind_spans_upto(c->segs, c->nsegs, sizeof(*c->segs),
			       offsetof(struct core_segment, vaddr), addr);
	if (lo == 0)
		return NULL;
	const struct core_segment *s = &c->segs[lo - 1];
	return addr - s->vaddr < s->memsz ? s : NULL;
}

int
unwind_core_read(const struct core_file *c, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;

	/* A read may straddle two adjacent segments (two VMAs). */
	while (len > 0) {
		const struct core_segment *s = unwind_core_segment_find(c, addr);
		uint64_t in, n;

		if (!s)
			return -EFAULT;
		in = addr - s->vaddr;
		if (in >= s->filesz)
			return -EFAULT;    /* not dumped (file-backed, or cut) */
		n = s->filesz - in;
		if (n > len)
			n = len;
		memcpy(out, c->data + s->offset + in, (size_t)n);
		out += n;
		addr += n;
		len -= (size_t)n;
		if (len > 0 && addr == 0)
			return -EFAULT;    /* wrapped */
	}
	return 0;
}

int
unwind_core_auxv(const struct core_file *c, uint64_t type, uint64_t *val)
{
	size_t w = core_word_size(c);

	for (size_t off = 0; c->auxv && off + 2 * w <= c->auxv_len; off += 2 * w) {
		uint64_t t = unwind_core_get(c, c->auxv + off, w);

		if (t == AT_NULL)
			break;
		if (t == type) {
			*val = unwind_core_get(c, c->auxv + off + w, w);
			return 0;
		}
	}
	return -ENOENT;
}
