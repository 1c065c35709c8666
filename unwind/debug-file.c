/* unwind/debug-file.c - the separate debug files of an image: by build-id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug, inside the target's root first,
 * then ours), then by .gnu_debuglink (GDB's directories, CRC checked),
 * then from the debuginfod servers of DEBUGINFOD_URLS (libdebuginfod).
 * symtab.c takes their .symtab, source.c their DWARF. */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <zlib.h>

#ifdef HAVE_DEBUGINFOD
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#endif

#include "arch/arch.h"
#include "ptrace/clock.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"
#include "unwind/symbols.h"
#include "unwind/unwind.h"

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

/* path as the target sees it (without /proc/N/root). */
static const char *shown_path(const char *path)
{
	return path + root_prefix_len(path);
}

/* ---- inputs skipped at a limit ----------------------------------------- */

#define SKIPPED_MAX 16

/* The notes, in order; under the image lock (dump unwinds on a thread of
 * its own). */
static char *skipped[SKIPPED_MAX];
static size_t nskipped;

void
unwind_note_skipped(const char *path, const char *fmt, ...)
{
	char why[256];
	char *line;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	path = shown_path(path);
	if (asprintf(&line, "%s %s", path, why) < 0)
		return;
	/* Each path once: the same library in many processes. */
	size_t plen = strlen(path);
	unwind_elf_image_lock();
	for (size_t i = 0; i < nskipped; i++) {
		if (strncmp(skipped[i], path, plen) == 0 && skipped[i][plen] == ' ') {
			free(line);
			line = NULL;
			break;
		}
	}
	if (line && nskipped < SKIPPED_MAX)
		skipped[nskipped++] = line;
	else
		free(line);
	unwind_elf_image_unlock();
}

const char *
unwind_skipped_next(size_t *iter)
{
	const char *line = NULL;

	unwind_elf_image_lock();
	if (*iter < nskipped)
		line = skipped[(*iter)++];
	unwind_elf_image_unlock();
	return line;
}

const char *
unwind_size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (double)(1ull << 30));
	else if (bytes >= (1ull << 20))
		snprintf(buf, len, "%.1f MiB", (double)bytes / (double)(1ull << 20));
	else
		snprintf(buf, len, "%.1f KiB", (double)bytes / 1024.0);
	return buf;
}

/* zlib's CRC-32, which .gnu_debuglink records, of the file of img: false
 * when it takes longer than DEBUG_FILE_CRC_BUDGET_NS (a huge file: not
 * checked).  Its pages are not kept as they are read (a debug file of
 * hundreds of MiB would else stay resident). */
static bool crc32_within_budget(const struct elf_image *img, uint32_t *out)
{
	const size_t chunk = 8u << 20;
	const unsigned char *p = img->data;
	size_t len = img->size;
	uint64_t t0 = ptrace_clock_monotonic_ns();
	uLong crc = crc32(0L, Z_NULL, 0);

	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		crc = crc32(crc, p + off, (uInt)n);
		unwind_elf_image_release(img, p + off, n);
		if (ptrace_clock_monotonic_ns() - t0 > DEBUG_FILE_CRC_BUDGET_NS)
			return false;
	}
	*out = (uint32_t)crc;
	return true;
}


/* Open a candidate debug file and hand it to take() (see
 * unwind_elf_debug_file_search).  It must have img's build-id (when want_crc is
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
	 * container's symlinks on the host; unwind_elf_cache_open_path resolves
	 * inside the root and takes regular files only. */
	dbg = unwind_elf_cache_open_path(&tmp, path, &err);
	/* The image itself (a debuglink that names its own file). */
	if (dbg && img->ino != 0 && dbg->ino == img->ino && dbg->dev == img->dev) {
		unwind_elf_cache_free(&tmp);
		return 0;
	}
	if (!dbg)
		return err == -ENOMEM ? -ENOMEM : 0;
	/* Far larger than its module: a file the target's side made (a
	 * sparse file costs no disk), not worth the seconds it takes. */
	uint64_t limit = (uint64_t)img->size * DEBUG_FILE_RATIO;
	if (limit < DEBUG_FILE_MIN_LIMIT)
		limit = DEBUG_FILE_MIN_LIMIT;
	if ((uint64_t)dbg->size > limit) {
		char a[32], b[32], c[32];

		unwind_note_skipped(path, "(%s) not read: over the limit for the %s module %s (%s); "
				    "names there come from what else the module has",
				    unwind_size_text(dbg->size, a, sizeof(a)),
				    unwind_size_text(img->size, b, sizeof(b)), shown_path(img->path),
				    unwind_size_text(limit, c, sizeof(c)));
		goto reject;
	}
	/* The build-id, when both have one, says whether it is the module's
	 * (the CRC would read the whole file to say the same); the CRC of
	 * .gnu_debuglink where the module has none. */
	bool ids = img->build_id_len && dbg->build_id_len;
	if (ids || !want_crc) {
		if (dbg->build_id_len != img->build_id_len ||
		    memcmp(dbg->build_id, img->build_id, img->build_id_len) != 0)
			goto reject;
	} else {
		uint32_t got;

		if (!crc32_within_budget(dbg, &got)) {
			char a[32];

			unwind_note_skipped(path, "(%s) not read: its CRC was not checked within %llu ms; "
					    "names there come from what else the module has",
					    unwind_size_text(dbg->size, a, sizeof(a)),
					    (unsigned long long)(DEBUG_FILE_CRC_BUDGET_NS / NS_PER_MS));
			goto reject;
		}
		if (got != crc)
			goto reject;
	}
	added = take(arg, &tmp, dbg);
	if (added <= 0)
		unwind_elf_cache_free(&tmp);
	return added;
reject:
	unwind_elf_cache_free(&tmp);
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
		    !span_inside(img->size, sh.sh_offset, sh.sh_size) || sh.sh_size < 8)
			break;
		p = (const char *)img->data + sh.sh_offset;
		nlen = strnlen(p, sh.sh_size);
		crc_off = (nlen + 4) & ~(size_t)3;
		if (nlen == 0 || crc_off + 4 > sh.sh_size)
			break;
		/* A name with a slash would escape the search directories. */
		if (memchr(p, '/', nlen))
			break;
		v = (uint32_t)arch_get_uint(p + crc_off, 4,
					    eh.e_ident[EI_DATA] == ELFDATA2MSB);
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

static bool debuginfod_on = true;

void unwind_set_debuginfod(bool on)
{
	debuginfod_on = on;
}

#ifdef HAVE_DEBUGINFOD
/* Seconds a module's lookup may take in all (DEBUGINFOD_TIMEOUT, else
 * this): libdebuginfod's own default, 90 s per server, would stall a dump
 * on a dead server. */
#define DEBUGINFOD_DEFAULT_TIMEOUT 5

static debuginfod_client *dbgi_client;
static bool dbgi_broken;
static uint64_t dbgi_deadline;     /* ptrace_clock_monotonic_ns() */

/* libdebuginfod is loaded when a lookup needs it, as elfutils does: linked,
 * it and the libcurl and TLS libraries under it cost every start of
 * stackspy some 5 ms (bench/startup.sh), for a service most runs never
 * use. */
static struct {
	__typeof__(&debuginfod_begin) begin;
	__typeof__(&debuginfod_set_progressfn) set_progressfn;
	__typeof__(&debuginfod_find_debuginfo) find_debuginfo;
} dbgi;

static bool dbgi_load(void)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (h) {
		*(void **)&dbgi.begin = dlsym(h, "debuginfod_begin");
		*(void **)&dbgi.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
		*(void **)&dbgi.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
		if (dbgi.begin && dbgi.set_progressfn && dbgi.find_debuginfo)
			return true;
	}
	/* Library code prints nothing (it would land on top's screen): a
	 * note for the command's summary. */
	unwind_note_skipped(DEBUGINFOD_SONAME, "not loaded (%s), though DEBUGINFOD_URLS is set: "
			    "no debug file is fetched (install libdebuginfod1)", dlerror());
	if (h)
		dlclose(h);
	return false;
}

/* libdebuginfod caches in $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/
 * debuginfod_client, else $HOME/.cache/debuginfod_client, creating and
 * writing files there.  Root run with another user's environment (sudo -E
 * keeps HOME) would write into a directory that user controls, and follow
 * the user's symlinks anywhere.  So root, unless DEBUGINFOD_CACHE_PATH is
 * set explicitly, caches in its own home's (tests/security-debuginfod.test). */
static void dbgi_cache_for_root(void)
{
	char path[PATH_MAX];
	struct passwd *pw;
	const char *home = "/root";

	if (geteuid() != 0 || getenv("DEBUGINFOD_CACHE_PATH"))
		return;
	pw = getpwuid(0);
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		home = pw->pw_dir;
	/* libdebuginfod makes the last directory, not its parent. */
	snprintf(path, sizeof(path), "%s/.cache", home);
	(void)!mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/.cache/debuginfod_client", home);
	setenv("DEBUGINFOD_CACHE_PATH", path, 1);
}

/* Called while a download is under way: nonzero aborts it. */
static int dbgi_progress(debuginfod_client *c, long a, long b)
{
	return ptrace_clock_monotonic_ns() >= dbgi_deadline;
}

static long from_debuginfod(const struct elf_image *img,
			    elf_debug_take_fn *take, void *arg)
{
	const char *urls = getenv("DEBUGINFOD_URLS"), *t;
	char *path = NULL;
	long timeout = DEBUGINFOD_DEFAULT_TIMEOUT, added;
	int fd;

	if (!debuginfod_on || dbgi_broken || !urls || !*urls ||
	    img->build_id_len < 2)
		return 0;
	t = getenv("DEBUGINFOD_TIMEOUT");
	if (t && atol(t) > 0)
		timeout = atol(t);
	if (!dbgi_client) {
		char v[24];

		/* libdebuginfod reads these for each query: its timeout is
		 * per server and without data, ours the whole lookup. */
		snprintf(v, sizeof(v), "%ld", timeout);
		setenv("DEBUGINFOD_TIMEOUT", v, 0);
		setenv("DEBUGINFOD_MAXTIME", v, 0);
		dbgi_cache_for_root();
		dbgi_client = dbgi_load() ? dbgi.begin() : NULL;
		if (!dbgi_client) {
			dbgi_broken = true;
			return 0;
		}
		dbgi.set_progressfn(dbgi_client, dbgi_progress);
	}
	dbgi_deadline = ptrace_clock_monotonic_ns() + (uint64_t)timeout * NS_PER_SEC;
	/* The answer, found or not, is cached by libdebuginfod
	 * ($DEBUGINFOD_CACHE_PATH, ~/.cache/debuginfod_client). */
	fd = dbgi.find_debuginfo(dbgi_client, img->build_id,
				 (int)img->build_id_len, &path);
	if (fd < 0) {
		/* A server that let the whole timeout pass will not do
		 * better for the next module: one timeout per run, not one
		 * per module.  In whole seconds, the unit of the
		 * timeout. */
		if (ptrace_clock_monotonic_ns() / NS_PER_SEC >= dbgi_deadline / NS_PER_SEC)
			dbgi_broken = true;
		return 0;
	}
	close(fd);
	added = try_debug_file(img, path, false, 0, take, arg);
	free(path);
	return added;
}
#else
static long from_debuginfod(const struct elf_image *img,
			    elf_debug_take_fn *take, void *arg)
{
	return 0;
}
#endif

long unwind_elf_debug_file_search(const struct elf_image *img, elf_debug_take_fn *take,
			   void *arg)
{
	long r = from_build_id(img, take, arg);

	if (r == 0)
		r = from_debuglink(img, take, arg);
	/* Last: the network, only where no local file matched. */
	if (r == 0)
		r = from_debuginfod(img, take, arg);
	return r;
}

int unwind_file_build_id(const char *path, char *hex, size_t len)
{
	struct elf_cache tmp = { NULL };
	struct elf_image *img;
	size_t n;
	int err;

	if (len)
		hex[0] = '\0';
	img = unwind_elf_cache_open_path(&tmp, path, &err);
	if (!img)
		return err < 0 ? err : -ENOENT;
	n = img->build_id_len;
	for (size_t i = 0; i < n && 2 * i + 2 < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", img->build_id[i]);
	unwind_elf_cache_free(&tmp);
	return (int)n;
}
