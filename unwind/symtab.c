/* unwind/symtab.c - function names for addresses of one ELF image.
 *
 * The table is built on the first lookup in an image (most mapped libraries
 * are never hit by a sample) and then binary searched.  Names point into the
 * string table of the mmap'd file (or of the separate debug file, which the
 * table keeps mapped), so a table costs one small entry per function.
 * Demangled forms are computed when first asked for and kept in the entry,
 * so the pointer returned stays valid until the image is freed.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_DEMANGLE
# include <libiberty/demangle.h>
#endif
#ifdef HAVE_LZMA
# include <lzma.h>
#endif

#include "unwind/unwind-internal.h"

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

/* A decompressed MiniDebugInfo larger than this is not believed (an xz
 * bomb in a hostile container must not eat our memory). */
#define MINIDEBUG_MAX (256u << 20)

/* Build-time form of a symbol: the fields that decide among aliases and
 * bound size-0 symbols. */
struct raw_sym {
	uint64_t start, size;
	uint64_t sec_end;         /* end of its section, 0 if unknown */
	const char *name;
	unsigned rank;            /* 0 GLOBAL, 1 WEAK, 2 other */
	unsigned underscores;
};

static bool range_ok(size_t file_size, uint64_t off, uint64_t len)
{
	return off <= file_size && len <= file_size - off;
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
	    !range_ok(size, sh.sh_offset, sh.sh_size))
		goto out;

	/* The string table is used in place: check it lies in the file, so
	 * that a name is valid iff it is NUL-terminated inside it. */
	strscn = elf_getscn(e, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB || (strsh.sh_flags & SHF_COMPRESSED) ||
	    strsh.sh_size == 0 || !range_ok(size, strsh.sh_offset, strsh.sh_size))
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
		t = GELF_ST_TYPE(s.st_info);
		if (t != STT_FUNC && t != STT_GNU_IFUNC)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_value == 0)
			continue;
		if (s.st_name == 0 || s.st_name >= strsh.sh_size ||
		    !memchr(strtab + s.st_name, '\0', strsh.sh_size - s.st_name))
			continue;

		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 1024;
			struct raw_sym *nv = realloc(*out, ncap * sizeof(*nv));

			if (!nv) {
				ret = -ENOMEM;
				goto out;
			}
			*out = nv;
			*cap = ncap;
		}
		r = &(*out)[(*n)++];
		r->start = s.st_value;
		r->size = s.st_size;
		r->name = strtab + s.st_name;
		r->rank = GELF_ST_BIND(s.st_info) == STB_GLOBAL ? 0 :
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

/* zlib's CRC-32, which .gnu_debuglink records. */
static uint32_t crc32_of(const unsigned char *p, size_t len)
{
	uint32_t table[256];
	uint32_t crc = 0xffffffffu;

	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int b = 0; b < 8; b++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

/* "/proc/N/root" when path was opened through the target's root, else "". */
static size_t root_prefix_len(const char *path)
{
	const char *p;

	if (strncmp(path, "/proc/", 6) != 0)
		return 0;
	p = path + 6;
	if (*p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, "/root/", 6) != 0)
		return 0;
	return (size_t)(p + 5 - path);
}

/* Open a candidate debug file and hand it to take() (see
 * elf_debug_file_search).  It must have img's build-id (when want_crc is
 * false) or the given CRC.  Returns take's answer (0 if the file is
 * missing or does not match), or -ENOMEM. */
static long try_debug_file(const struct elf_image *img, const char *path,
			   bool want_crc, uint32_t crc, elf_debug_take_fn *take,
			   void *arg)
{
	struct elf_cache tmp = { NULL };
	struct elf_image *dbg;
	int err;
	long added;

	/* No stat(path) first: under /proc/PID/root it would follow the
	 * container's symlinks on the host; elf_cache_open_path resolves
	 * inside the root and takes regular files only. */
	dbg = elf_cache_open_path(&tmp, path, &err);
	/* The image itself (a debuglink that names its own file). */
	if (dbg && img->ino != 0 && dbg->ino == img->ino && dbg->dev == img->dev) {
		elf_cache_free(&tmp);
		return 0;
	}
	if (!dbg)
		return err == -ENOMEM ? -ENOMEM : 0;
	if (want_crc) {
		if (crc32_of(dbg->data, dbg->size) != crc)
			goto reject;
	} else if (dbg->build_id_len != img->build_id_len ||
		   memcmp(dbg->build_id, img->build_id, img->build_id_len) != 0) {
		goto reject;
	}
	added = take(arg, &tmp, dbg);
	if (added <= 0)
		elf_cache_free(&tmp);
	return added;
reject:
	elf_cache_free(&tmp);
	return 0;
}

static long from_build_id(const struct elf_image *img, elf_debug_take_fn *take,
			  void *arg)
{
	char hex[2 * sizeof(img->build_id) + 1];
	size_t rlen = root_prefix_len(img->path);
	long added = 0;

	/* A build-id of one byte cannot be split into "xx/rest". */
	if (img->build_id_len < 2)
		return 0;
	for (size_t i = 0; i < img->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", img->build_id[i]);

	/* The container's debug files first, then ours: the build-id check
	 * makes either safe. */
	for (int pass = rlen ? 0 : 1; pass < 2 && added == 0; pass++) {
		char *path;

		if (asprintf(&path, "%.*s/usr/lib/debug/.build-id/%.2s/%s.debug",
			     pass == 0 ? (int)rlen : 0, img->path, hex, hex + 2) < 0)
			return -ENOMEM;
		added = try_debug_file(img, path, false, 0, take, arg);
		free(path);
	}
	return added;
}

/* Read .gnu_debuglink: a file name, padding to 4, and a CRC-32 in the
 * file's byte order.  Returns false if absent or malformed. */
static bool read_debuglink(const struct elf_image *img, char **name,
			   uint32_t *crc)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx;
	bool found = false;

	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return false;
	if (!gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sname, *p;
		size_t nlen, crc_off;
		uint32_t v;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".gnu_debuglink") != 0)
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) ||
		    !range_ok(img->size, sh.sh_offset, sh.sh_size) || sh.sh_size < 8)
			break;
		p = (const char *)img->data + sh.sh_offset;
		nlen = strnlen(p, sh.sh_size);
		crc_off = (nlen + 4) & ~(size_t)3;
		if (nlen == 0 || crc_off + 4 > sh.sh_size)
			break;
		/* A name with a slash would escape the search directories. */
		if (memchr(p, '/', nlen))
			break;
		memcpy(&v, p + crc_off, 4);
		if ((eh.e_ident[EI_DATA] == ELFDATA2MSB) !=
		    (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
			v = __builtin_bswap32(v);
		*name = strndup(p, nlen);
		*crc = v;
		found = *name != NULL;
		break;
	}
out:
	elf_end(e);
	return found;
}

static long from_debuglink(const struct elf_image *img, elf_debug_take_fn *take,
			   void *arg)
{
	char *name = NULL, *dir, *slash;
	uint32_t crc;
	size_t rlen;
	long added = 0;

	/* An image opened through map_files has no directory to search, and
	 * the vdso none at all. */
	if (!img->path || img->path[0] == '[' || strstr(img->path, "/map_files/"))
		return 0;
	if (!read_debuglink(img, &name, &crc))
		return 0;
	/* A relative path (--exe ./prog) is searched from ".". */
	slash = strrchr(img->path, '/');
	dir = slash ? strndup(img->path, (size_t)(slash - img->path)) : strdup(".");
	if (!dir) {
		free(name);
		return -ENOMEM;
	}
	rlen = root_prefix_len(img->path);

	/* GDB's order: next to the file, its .debug/, then the global debug
	 * directory mirrored (inside the target's root first). */
	for (int i = 0; i < 4 && added == 0; i++) {
		char *path = NULL;
		int r = -1;

		switch (i) {
		case 0:
			r = asprintf(&path, "%s/%s", dir, name);
			break;
		case 1:
			r = asprintf(&path, "%s/.debug/%s", dir, name);
			break;
		case 2:
			if (rlen == 0 || dir[0] != '/')
				continue;
			r = asprintf(&path, "%.*s/usr/lib/debug%s/%s", (int)rlen,
				     dir, dir + rlen, name);
			break;
		case 3:
			if (dir[0] != '/' && dir[0] != '\0')
				continue;
			r = asprintf(&path, "/usr/lib/debug%s/%s", dir + rlen, name);
			break;
		}
		if (r < 0) {
			added = -ENOMEM;
			break;
		}
		added = try_debug_file(img, path, true, crc, take, arg);
		free(path);
	}
	free(dir);
	free(name);
	return added;
}

long elf_debug_file_search(const struct elf_image *img, elf_debug_take_fn *take,
			   void *arg)
{
	long r = from_build_id(img, take, arg);

	if (r == 0)
		r = from_debuglink(img, take, arg);
	return r;
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

/* The header of the section called `name` of the ELF at data/size, if it
 * has contents in the file, inside it, and is not compressed.  false if
 * there is none. */
static bool find_section(const unsigned char *data, size_t size, const char *name,
			 GElf_Shdr *out)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)data, size);
	if (!e)
		return false;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *sname;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, name) != 0)
			continue;
		if (!(sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS &&
		    range_ok(size, sh.sh_offset, sh.sh_size)) {
			*out = sh;
			found = true;
		}
		break;
	}
out:
	elf_end(e);
	return found;
}

#ifdef HAVE_LZMA
/* xz-decompress p[0, len) into a malloc'd buffer.  Returns its size, 0 on
 * any failure (corrupt, truncated, too large, out of memory). */
static size_t xz_decompress(const unsigned char *p, size_t len, unsigned char **out)
{
	lzma_stream zs = LZMA_STREAM_INIT;
	unsigned char *buf = NULL;
	size_t cap = 0;
	lzma_ret r;

	*out = NULL;
	if (lzma_stream_decoder(&zs, UINT64_MAX, 0) != LZMA_OK)
		return 0;
	zs.next_in = p;
	zs.avail_in = len;
	do {
		if (zs.avail_out == 0) {
			size_t ncap = cap ? cap * 2 : len * 4 + 4096;
			unsigned char *nb;

			if (ncap > MINIDEBUG_MAX || !(nb = realloc(buf, ncap))) {
				r = LZMA_MEM_ERROR;
				break;
			}
			buf = nb;
			zs.next_out = buf + cap;
			zs.avail_out = ncap - cap;
			cap = ncap;
		}
		/* LZMA_FINISH: all input is there; a truncated stream ends
		 * in LZMA_BUF_ERROR instead of looping. */
		r = lzma_code(&zs, LZMA_FINISH);
	} while (r == LZMA_OK);
	size_t n = cap - zs.avail_out;
	lzma_end(&zs);
	if (r != LZMA_STREAM_END) {
		free(buf);
		return 0;
	}
	*out = buf;
	return n;
}
#endif

/* MiniDebugInfo (Fedora, and others since): .gnu_debugdata is an xz-packed
 * ELF file whose .symtab holds the functions that are not in .dynsym, so
 * both are taken.  Returns the number added (0 without one), or -ENOMEM. */
static long from_minidebuginfo(struct symtab *st, const struct elf_image *img,
			       struct raw_sym **raw, size_t *n, size_t *cap)
{
#ifdef HAVE_LZMA
	GElf_Shdr sh;
	unsigned char *mini;
	size_t len;
	long added, dyn;

	if (!find_section(img->data, img->size, ".gnu_debugdata", &sh))
		return 0;
	len = xz_decompress(img->data + sh.sh_offset, sh.sh_size, &mini);
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
#else
	(void)st;
	(void)img;
	(void)raw;
	(void)n;
	(void)cap;
	return 0;
#endif
}

/* PLT stubs have no symbol, but a stack stopped in one (a lazy binding, a
 * thread preempted on its way into libc) deserves a name: "func@plt", as
 * gdb and perf say.  Entry k of .plt.sec (IBT) or of .plt after its header
 * jumps through the k-th .rela.plt relocation.  x86-64 and aarch64 only.
 * Returns the number added, or -ENOMEM. */
static long plt_symbols(struct symtab *st, const struct elf_image *img,
			struct raw_sym **raw, size_t *n, size_t *cap)
{
	Elf *e;
	GElf_Ehdr eh;
	GElf_Shdr rel, plt, dsym, dstr;
	Elf_Scn *scn;
	size_t header, entsize = 16, count, names_len = 0;
	long added = 0;
	char *names;

	if (!find_section(img->data, img->size, ".rela.plt", &rel) ||
	    rel.sh_type != SHT_RELA || rel.sh_entsize != sizeof(Elf64_Rela))
		return 0;
	if (find_section(img->data, img->size, ".plt.sec", &plt)) {
		header = 0;
	} else if (find_section(img->data, img->size, ".plt", &plt)) {
		header = 16;
	} else {
		return 0;
	}
	elf_version(EV_CURRENT);
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return 0;
	if (!gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh.e_ident[EI_DATA] == ELFDATA2MSB) != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		goto out;
	if (eh.e_machine == EM_AARCH64 && header)
		header = 32;
	else if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64)
		goto out;
	scn = elf_getscn(e, rel.sh_link);
	if (!scn || !gelf_getshdr(scn, &dsym) || dsym.sh_type != SHT_DYNSYM ||
	    !range_ok(img->size, dsym.sh_offset, dsym.sh_size) ||
	    dsym.sh_entsize != sizeof(Elf64_Sym))
		goto out;
	scn = elf_getscn(e, dsym.sh_link);
	if (!scn || !gelf_getshdr(scn, &dstr) || dstr.sh_type != SHT_STRTAB ||
	    dstr.sh_size == 0 || !range_ok(img->size, dstr.sh_offset, dstr.sh_size))
		goto out;
	count = rel.sh_size / sizeof(Elf64_Rela);
	if (plt.sh_size < header || (plt.sh_size - header) / entsize < count)
		goto out;

	/* One block for every name: "name@plt\0" each. */
	for (int pass = 0; pass < 2; pass++) {
		size_t at = 0;

		for (size_t k = 0; k < count; k++) {
			Elf64_Rela r;
			Elf64_Sym sym;
			const char *nm;
			size_t l;
			uint64_t si;

			memcpy(&r, img->data + rel.sh_offset + k * sizeof(r), sizeof(r));
			si = ELF64_R_SYM(r.r_info);
			if (si == 0 || (si + 1) * sizeof(sym) > dsym.sh_size)
				continue;
			memcpy(&sym, img->data + dsym.sh_offset + si * sizeof(sym), sizeof(sym));
			if (sym.st_name == 0 || sym.st_name >= dstr.sh_size)
				continue;
			nm = (const char *)img->data + dstr.sh_offset + sym.st_name;
			l = strnlen(nm, dstr.sh_size - sym.st_name);
			if (l == dstr.sh_size - sym.st_name)
				continue;
			if (pass == 0) {
				names_len += l + sizeof("@plt");
				continue;
			}
			if (*n == *cap) {
				size_t ncap = *cap ? *cap * 2 : 1024;
				struct raw_sym *nv = realloc(*raw, ncap * sizeof(*nv));

				if (!nv) {
					added = -ENOMEM;
					goto out;
				}
				*raw = nv;
				*cap = ncap;
			}
			memcpy(st->plt_names + at, nm, l);
			memcpy(st->plt_names + at + l, "@plt", sizeof("@plt"));
			struct raw_sym *rs = &(*raw)[(*n)++];
			rs->start = plt.sh_addr + header + k * entsize;
			rs->size = entsize;
			rs->sec_end = 0;
			rs->name = st->plt_names + at;
			/* Below any real symbol at the same address. */
			rs->rank = 3;
			rs->underscores = 0;
			at += l + sizeof("@plt");
			added++;
		}
		if (pass == 0) {
			if (names_len == 0)
				goto out;
			names = malloc(names_len);
			if (!names) {
				added = -ENOMEM;
				goto out;
			}
			st->plt_names = names;
		}
	}
out:
	elf_end(e);
	return added;
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
	if (added == 0)
		added = collect(img->data, img->size, SHT_DYNSYM, &raw, &n, &cap);
	/* The PLT lives in the running file, not in a debug file. */
	if (added >= 0) {
		long plt = plt_symbols(st, img, &raw, &n, &cap);

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
	size_t lo = 0, hi = st->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->v[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i > 0 && k < ENCLOSING_LOOKBACK; i--, k++) {
		if (vaddr < st->v[i - 1].end)
			return &st->v[i - 1];
	}
	return NULL;
}

const char *elf_image_lookup(struct elf_image *img, uint64_t vaddr,
			     unsigned flags, uint64_t *offset)
{
	struct sym *s;

	if (!img)
		return NULL;
	if (!img->symtab_tried) {
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

char *symbol_demangle(const char *name, bool with_params)
{
#ifdef HAVE_DEMANGLE
	/* DMGL_AUTO tries Rust (legacy and v0) before the C++ ABI, as legacy
	 * Rust names are valid C++ ones; without DMGL_VERBOSE the Rust hash
	 * suffix is dropped. */
	if (!name || !*name)
		return NULL;
	return cplus_demangle(name, DMGL_AUTO | DMGL_ANSI |
			      (with_params ? DMGL_PARAMS : 0));
#else
	(void)name;
	(void)with_params;
	return NULL;
#endif
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

/* ---- JIT symbol maps: /tmp/perf-PID.map ------------------------------------ */

/* perf's convention for JITs (V8 --perf-basic-prof, the JVM's perf-map-agent,
 * LuaJIT, .NET): one line per piece of code, "START SIZE NAME", hex, START
 * may have a 0x; a later line for the same address wins (code is
 * re-jitted in place).  Read lazily, re-read when the file changes. */
struct perf_map_entry {
	uint64_t start, end;
	char *name;
	size_t seq;               /* line number: the later one wins */
};

struct perf_map {
	bool tried;
	pid_t nspid;              /* the PID the target knows itself by */
	struct timespec mtime;
	off_t size;
	ino_t ino;
	struct perf_map_entry *v;
	size_t n;
	/* Names of earlier loads: the strings handed out stay valid until
	 * perf_map_free() (callers keep them across lookups). */
	char **retired;
	size_t nretired;
};

/* The target's PID in its own PID namespace (last field of NSpid:), which
 * is the name a containerized JIT gives its map. */
static pid_t own_nspid(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	pid_t r = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			char *p = line + 6, *end;

			for (;;) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				r = (pid_t)v;
				p = end;
			}
			break;
		}
	}
	fclose(f);
	return r;
}

static int cmp_perf(const void *a, const void *b)
{
	const struct perf_map_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void perf_map_clear(struct perf_map *pm)
{
	char **nr = pm->n ? realloc(pm->retired, (pm->nretired + pm->n) * sizeof(*nr)) : NULL;

	if (nr)
		pm->retired = nr;
	for (size_t i = 0; i < pm->n; i++) {
		if (nr)
			pm->retired[pm->nretired++] = pm->v[i].name;
		else
			free(pm->v[i].name);
	}
	free(pm->v);
	pm->v = NULL;
	pm->n = 0;
}

/* (Re)load the map if it changed.  Failures leave an empty map. */
static void perf_map_refresh(struct perf_map *pm, pid_t pid)
{
	char rel[64];
	struct stat sb;
	FILE *f;
	int fd;
	char *line = NULL;
	size_t cap = 0, vcap = 0, seq = 0;

	if (!pm->tried) {
		pm->tried = true;
		pm->nspid = own_nspid(pid);
	}
	snprintf(rel, sizeof(rel), "/tmp/perf-%d.map", (int)pm->nspid);
	/* Inside the target's root, symlinks resolved there: a container
	 * cannot point us at our own files. */
	fd = elf_open_in_root(pid, rel);
	if (fd < 0) {
		perf_map_clear(pm);
		pm->ino = 0;
		return;
	}
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		perf_map_clear(pm);
		pm->ino = 0;
		return;
	}
	if (pm->ino == sb.st_ino && pm->size == sb.st_size &&
	    pm->mtime.tv_sec == sb.st_mtim.tv_sec &&
	    pm->mtime.tv_nsec == sb.st_mtim.tv_nsec) {
		close(fd);
		return;
	}
	perf_map_clear(pm);
	pm->ino = sb.st_ino;
	pm->size = sb.st_size;
	pm->mtime = sb.st_mtim;
	f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char *p = line, *end;
		unsigned long long start, size;
		struct perf_map_entry *e;

		start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || size == 0 || start + size < start)
			continue;
		p = end + 1;
		p[strcspn(p, "\n")] = '\0';
		if (!*p)
			continue;
		if (pm->n == vcap) {
			size_t ncap = vcap ? 2 * vcap : 256;
			struct perf_map_entry *nv = realloc(pm->v, ncap * sizeof(*nv));

			if (!nv)
				break;
			pm->v = nv;
			vcap = ncap;
		}
		e = &pm->v[pm->n];
		e->name = strdup(p);
		if (!e->name)
			break;
		e->start = start;
		e->end = start + size;
		e->seq = seq++;
		pm->n++;
	}
	free(line);
	fclose(f);
	qsort(pm->v, pm->n, sizeof(*pm->v), cmp_perf);
}

const char *perf_map_lookup(struct perf_map **pmp, pid_t pid, uint64_t addr,
			    uint64_t *offset)
{
	struct perf_map *pm = *pmp;
	const struct perf_map_entry *best = NULL;
	size_t lo = 0, hi;

	if (pid <= 0)
		return NULL;
	if (!pm) {
		pm = calloc(1, sizeof(*pm));
		if (!pm)
			return NULL;
		*pmp = pm;
	}
	perf_map_refresh(pm, pid);
	hi = pm->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries may overlap (re-jitted code): the latest line that covers
	 * addr, among the few entries just before it. */
	for (size_t i = lo, k = 0; i > 0 && k < ENCLOSING_LOOKBACK; i--, k++) {
		const struct perf_map_entry *e = &pm->v[i - 1];

		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	if (!best)
		return NULL;
	if (offset)
		*offset = addr - best->start;
	return best->name;
}

void perf_map_free(struct perf_map *pm)
{
	if (!pm)
		return;
	perf_map_clear(pm);
	for (size_t i = 0; i < pm->nretired; i++)
		free(pm->retired[i]);
	free(pm->retired);
	free(pm);
}
