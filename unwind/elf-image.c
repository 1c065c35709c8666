/* unwind/elf-image.c - ELF files behind the target's mappings.
 *
 * Each file is mmap'd whole and read-only once per (dev, inode) and kept for
 * the life of the target: the memory reader serves reads of file-backed
 * mappings from it, and symtab.c builds the symbol table from it.  Files
 * behind mappings are pooled: every target of this stackspy that maps the
 * same file (dev, inode, size, mtime) shares one image and its symbol
 * table, and the last ELF_POOL_UNUSED_MAX images no target holds any more
 * are kept for the next process that maps them (a build runs cc1 once per
 * file: without the pool each one cost a symbol table sort, 10 ms, inside
 * a tick).  libelf
 * reads the headers through elf_memory() over our mapping, so nothing is
 * read twice and nothing is written (with the native byte order libelf uses
 * the bytes in place; otherwise it converts into its own buffers).
 *
 * The files come from other people's processes and containers: every offset
 * and size is checked against the file size before use (tests/unit-symtab.c
 * feeds truncated and corrupted copies).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef HAVE_LINUX_OPENAT2_H
# include <linux/openat2.h>
#endif

#include "base/base.h"
#include "unwind/elf-image.h"
#include "unwind/maps.h"

#ifndef NT_GNU_BUILD_ID
# define NT_GNU_BUILD_ID 3
#endif

/* 8-byte aligned notes (.note.gnu.property) have their own layout type in
 * elfutils' libelf (since 0.175); gelf_getnote pads by it. */
static Elf_Type note_type(uint64_t align)
{
	return align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
}

/* Copy an NT_GNU_BUILD_ID descriptor out of a note buffer.  true if found. */
static bool build_id_from_notes(struct elf_image *img, Elf_Data *d)
{
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off, next;

	if (!d || !d->d_buf)
		return false;
	while (off < d->d_size &&
	       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		/* gelf_getnote has checked name and desc against d_size. */
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= sizeof(img->build_id)) {
			memcpy(img->build_id, (const char *)d->d_buf + desc_off,
			       nh.n_descsz);
			img->build_id_len = nh.n_descsz;
			return true;
		}
		off = next;
	}
	return false;
}

static bool range_in_file(const struct elf_image *img, uint64_t off, uint64_t len)
{
	return span_inside(img->size, off, len);
}

/* Fill segs, the eh_frame_hdr location and the build-id from img->data.
 * Returns 0, -ENOEXEC or -ENOMEM. */
static int image_parse(struct elf_image *img)
{
	Elf *e;
	GElf_Ehdr eh;
	size_t phnum = 0;
	int ret = 0;

	if (img->size < EI_NIDENT || memcmp(img->data, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	elf_version(EV_CURRENT);
	/* elf_memory wants a non-const buffer, but with ELF_C_READ_MMAP_PRIVATE
	 * semantics it only ever reads it (see the comment at the top). */
	e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return -ENOEXEC;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		ret = -ENOEXEC;
		goto out;
	}
	img->entry = eh.e_entry;

	/* A broken program header table leaves an image without segments: it
	 * can still give names (a debug file opened by path) but no bias. */
	if (elf_getphdrnum(e, &phnum) != 0)
		phnum = 0;
	if (phnum > 0 && phnum <= 65536) {
		img->segs = calloc(phnum, sizeof(*img->segs));
		if (!img->segs) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; img->segs && i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			continue;
		switch (ph.p_type) {
		case PT_LOAD: {
			struct elf_segment *s = &img->segs[img->nsegs];

			if (ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
				break;          /* wraps: garbage */
			s->vaddr = ph.p_vaddr;
			s->memsz = ph.p_memsz;
			s->offset = ph.p_offset;
			/* Clamped to the file so that whoever reads
			 * data[offset, offset + filesz) stays inside it. */
			if (ph.p_offset >= img->size)
				s->filesz = 0;
			else if (ph.p_filesz > img->size - ph.p_offset)
				s->filesz = img->size - ph.p_offset;
			else
				s->filesz = ph.p_filesz;
			s->flags = ph.p_flags & (PF_R | PF_W | PF_X);
			img->nsegs++;
			break;
		}
		case PT_GNU_EH_FRAME:
			img->eh_frame_hdr_vaddr = ph.p_vaddr;
			img->eh_frame_hdr_size = ph.p_memsz;
			break;
		case PT_NOTE:
			if (img->build_id_len == 0 && ph.p_filesz > 0 &&
			    range_in_file(img, ph.p_offset, ph.p_filesz))
				build_id_from_notes(img, elf_getdata_rawchunk(e,
					(int64_t)ph.p_offset, ph.p_filesz,
					note_type(ph.p_align)));
			break;
		default:
			break;
		}
	}

	/* Separate debug files keep the note section, but their program
	 * headers may point at NOBITS space: look at the sections too. */
	if (img->build_id_len == 0) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
				continue;
			if ((sh.sh_flags & SHF_COMPRESSED) ||
			    !range_in_file(img, sh.sh_offset, sh.sh_size))
				continue;
			if (build_id_from_notes(img, elf_getdata(scn, NULL)))
				break;
		}
	}
out:
	elf_end(e);
	return ret;
}

static struct elf_image *cache_find(const struct elf_cache *c, dev_t dev, ino_t ino)
{
	if (ino == 0)
		return NULL;
	for (struct elf_image *img = c->head; img; img = img->next)
		if (img->ino == ino && img->dev == dev)
			return img;
	for (size_t i = 0; i < c->nshared; i++)
		if (c->shared[i]->ino == ino && c->shared[i]->dev == dev)
			return c->shared[i];
	return NULL;
}

/* ---- The image pool: files behind mappings, shared between targets ------ */

/* dump unwinds in a second thread with a target of its own: the pool and
 * the lazily built parts of an image (symtab.c) are under this lock.  It
 * is recursive: a symbol table build yields to the tracer's event loop
 * (unwind_yield), which may unwind and name a late sample meanwhile. */
static pthread_mutex_t image_lock;
static pthread_once_t image_lock_once = PTHREAD_ONCE_INIT;

static void image_lock_init(void)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&image_lock, &a);
	pthread_mutexattr_destroy(&a);
}

static struct {
	struct elf_image *head;
	uint64_t seq;             /* of releases: which unused one is oldest */
} pool;

void unwind_elf_image_lock(void)
{
	pthread_once(&image_lock_once, image_lock_init);
	pthread_mutex_lock(&image_lock);
}

void unwind_elf_image_unlock(void)
{
	pthread_mutex_unlock(&image_lock);
}

static bool same_file(const struct elf_image *img, dev_t dev, ino_t ino,
		      const struct stat *st)
{
	return img->ino == ino && img->dev == dev && img->st_size == st->st_size &&
	       img->st_mtim.tv_sec == st->st_mtim.tv_sec &&
	       img->st_mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* Add a reference of c to img (pooled).  Returns img, or NULL on ENOMEM
 * (img untouched).  Under image_lock. */
static struct elf_image *cache_hold(struct elf_cache *c, struct elf_image *img)
{
	if (BASE_GROW(c->shared, c->shared_cap, c->nshared + 1, 8) < 0)
		return NULL;
	c->shared[c->nshared++] = img;
	img->refs++;
	return img;
}

static void image_free(struct elf_image *img);

/* Drop one reference; an image nobody holds stays in the pool until
 * ELF_POOL_UNUSED_MAX more recent ones are unused.  Under image_lock. */
static void pool_release(struct elf_image *img)
{
	if (--img->refs > 0)
		return;
	img->unused_since = ++pool.seq;
	size_t unused = 0;
	struct elf_image **oldest = NULL;
	for (struct elf_image **pp = &pool.head; *pp; pp = &(*pp)->pool_next) {
		if ((*pp)->refs)
			continue;
		unused++;
		if (!oldest || (*pp)->unused_since < (*oldest)->unused_since)
			oldest = pp;
	}
	if (unused <= ELF_POOL_UNUSED_MAX)
		return;
	struct elf_image *victim = *oldest;
	*oldest = victim->pool_next;
	image_free(victim);
}

/* ---- SIGBUS guard of mapped files (unwind_file_map) ----------------------------- */

struct guarded_map {
	uintptr_t start;
	size_t len;
	int prot;
};

static struct guarded_map *guards;
static size_t nguards, guards_cap;
static struct sigaction sigbus_before;
static bool sigbus_installed;

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	for (size_t i = 0; i < nguards; i++) {
		if (a - guards[i].start < guards[i].len &&
		    mmap((void *)guards[i].start, guards[i].len, guards[i].prot,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED)
			return;  /* the read is retried and sees zeros */
	}
	/* Not ours: as if we had never been here. */
	sigaction(SIGBUS, &sigbus_before, NULL);
	(void)sig;
	(void)uctx;
}

void *unwind_file_map(int fd, size_t len, int prot)
{
	void *p;

	if (BASE_GROW(guards, guards_cap, nguards + 1, 64) < 0) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (!sigbus_installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, &sigbus_before) == 0)
			sigbus_installed = true;
	}
	p = mmap(NULL, len, prot, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return p;
	guards[nguards].start = (uintptr_t)p;
	guards[nguards].len = len;
	guards[nguards].prot = prot;
	nguards++;
	return p;
}

void unwind_file_unmap(const void *p, size_t len)
{
	for (size_t i = 0; i < nguards; i++) {
		if (guards[i].start == (uintptr_t)p) {
			guards[i] = guards[--nguards];
			break;
		}
	}
	munmap((void *)(uintptr_t)p, len);
}

void unwind_elf_image_release(const struct elf_image *img, const void *p, size_t len)
{
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t mask = ps > 0 ? (uintptr_t)ps - 1 : 4095;
	uintptr_t lo = (uintptr_t)img->data, hi = lo + img->size;
	uintptr_t a = (uintptr_t)p, b = a + len;

	if (!img->mmapped || len == 0 || a < lo || b > hi || b < a)
		return;
	/* Whole pages of the mapping (it starts on one): a read-only
	 * private mapping never written, so nothing is lost. */
	a &= ~mask;
	b = (b + mask) & ~mask;
	madvise((void *)a, b - a, MADV_DONTNEED);
}

static void image_free(struct elf_image *img)
{
	if (img->free_symtab)
		img->free_symtab(img->symtab);
	if (img->free_cfi_index) {
		img->free_cfi_index(img->cfi_index);
		img->free_cfi_index(img->cfi_debug_index);
	}
	if (img->mmapped)
		unwind_file_unmap(img->data, img->size);
	else
		free((void *)(uintptr_t)img->data);
	free(img->segs);
	free(img->path);
	free(img);
}

/* Map the file open on fd and parse it.  dev/ino are the cache key.  Takes
 * ownership of fd (closed here).  The image is the caller's to link into
 * a cache or the pool.  NULL and *err on failure. */
static struct elf_image *image_from_fd(int fd, const char *path, const struct stat *st,
				       dev_t dev, ino_t ino, int *err)
{
	struct elf_image *img = NULL;
	void *data;
	int ret;

	if (!S_ISREG(st->st_mode) || st->st_size < (off_t)sizeof(Elf32_Ehdr) ||
	    (uintmax_t)st->st_size > SIZE_MAX) {
		ret = -ENOEXEC;
		goto fail;
	}
	/* Targets map plenty of files that are not ELF (locale archives,
	 * fonts, databases): reject those before mapping them whole. */
	{
		unsigned char magic[SELFMAG];

		if (pread(fd, magic, SELFMAG, 0) != SELFMAG ||
		    memcmp(magic, ELFMAG, SELFMAG) != 0) {
			ret = -ENOEXEC;
			goto fail;
		}
	}
	data = unwind_file_map(fd, (size_t)st->st_size, PROT_READ);
	if (data == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	close(fd);
	fd = -1;

	img = calloc(1, sizeof(*img));
	if (!img || !(img->path = strdup(path))) {
		free(img);
		unwind_file_unmap(data, (size_t)st->st_size);
		ret = -ENOMEM;
		goto fail;
	}
	img->data = data;
	img->size = (size_t)st->st_size;
	img->mmapped = true;
	img->dev = dev;
	img->ino = ino;
	img->st_size = st->st_size;
	img->st_mtim = st->st_mtim;
	ret = image_parse(img);
	if (ret < 0) {
		image_free(img);
		goto fail;
	}
	return img;

fail:
	if (fd >= 0)
		close(fd);
	if (err)
		*err = ret;
	return NULL;
}

struct elf_image *unwind_elf_cache_open_path(struct elf_cache *c, const char *path,
				      int *err)
{
	struct elf_image *img;
	struct stat st;
	int fd;

	if (!c || !path) {
		if (err)
			*err = -EINVAL;
		return NULL;
	}
	/* A core file or a container may name a FIFO or a device here. */
	fd = unwind_elf_open_regular(path);
	if (fd < 0) {
		if (err)
			*err = fd == -EINVAL ? -ENOEXEC : fd;
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		if (err)
			*err = -errno;
		close(fd);
		return NULL;
	}
	img = cache_find(c, st.st_dev, st.st_ino);
	if (img) {
		close(fd);
		return img;
	}
	img = image_from_fd(fd, path, &st, st.st_dev, st.st_ino, err);
	if (img) {
		img->next = c->head;
		c->head = img;
	}
	return img;
}

/* O_PATH fd of path; under /proc/PID/root/, resolved inside that root.
 * extra: O_NOFOLLOW or 0. */
static int open_path_only(const char *path, int extra)
{
	int fd;
#if defined(HAVE_LINUX_OPENAT2_H) && defined(SYS_openat2)
	const char *p = path;

	if (strncmp(p, "/proc/", 6) == 0) {
		p += 6;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (p > path + 6 && strncmp(p, "/root/", 6) == 0) {
		char root[64];
		struct open_how how;
		int dirfd, err;
		size_t rootlen = (size_t)(p - path) + 5;

		if (rootlen >= sizeof(root))
			return -ENAMETOOLONG;
		memcpy(root, path, rootlen);
		root[rootlen] = '\0';
		dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -errno;
		memset(&how, 0, sizeof(how));
		how.flags = O_PATH | O_CLOEXEC | (unsigned)extra;
		/* "/" and ".." stop at the container's root, as they do for
		 * the target itself. */
		how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
		fd = (int)syscall(SYS_openat2, dirfd, p + 5, &how, sizeof(how));
		err = errno;
		close(dirfd);
		if (fd >= 0)
			return fd;
		/* Kernels before 5.6 (or a seccomp filter) lack openat2: the
		 * plain path below, where the callers' checks ((dev, inode)
		 * against the maps line, build-id, CRC) reject a file reached
		 * through an escaping symlink. */
		if (err != ENOSYS && err != EPERM)
			return -err;
	}
#endif
	fd = open(path, O_PATH | O_CLOEXEC | extra);
	return fd < 0 ? -errno : fd;
}

static int open_regular(const char *path, int extra)
{
	char self[64];
	struct stat st;
	int pfd, fd;

	pfd = open_path_only(path, extra);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st) < 0)
		st.st_mode = 0;
	if (!S_ISREG(st.st_mode)) {
		/* O_NOFOLLOW with O_PATH opens the link itself. */
		fd = S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL;
		close(pfd);
		return fd;
	}
	/* Reopen what we checked, not the path again (it could change). */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	fd = fd < 0 ? -errno : fd;
	close(pfd);
	return fd;
}

int unwind_elf_open_regular(const char *path)
{
	return open_regular(path, 0);
}

static int open_in_root(pid_t pid, const char *path, int extra)
{
	char *full;
	int fd;

	if (pid <= 0)
		return open_regular(path, extra);
	if (path[0] != '/')
		return -EINVAL;
	if (asprintf(&full, "/proc/%d/root%s", (int)pid, path) < 0)
		return -ENOMEM;
	fd = open_regular(full, extra);
	free(full);
	return fd;
}

int unwind_elf_open_in_root(pid_t pid, const char *path)
{
	return open_in_root(pid, path, 0);
}

int unwind_elf_open_in_root_nofollow(pid_t pid, const char *path)
{
	return open_in_root(pid, path, O_NOFOLLOW);
}

struct elf_image *unwind_elf_cache_get(struct elf_cache *c, pid_t pid,
				const struct mapping *m, int *err)
{
	struct elf_image *img;
	struct stat st;
	char *path = NULL;
	int fd = -1, first_err = 0;

	if (!c || !m) {
		if (err)
			*err = -EINVAL;
		return NULL;
	}
	/* Anonymous memory and [vdso]/[stack]/... have no file to open. */
	if (!m->path || m->path[0] != '/' || m->inode == 0) {
		if (err)
			*err = -ENOENT;
		return NULL;
	}
	img = cache_find(c, m->dev, m->inode);
	if (img)
		return img;

	/* Through the target's root so that a process in a container gets its
	 * own files, not ours. */
	if (!m->deleted) {
		if (pid > 0) {
			if (asprintf(&path, "/proc/%d/root%s", (int)pid, m->path) < 0)
				path = NULL;
		} else {
			path = strdup(m->path);
		}
		if (!path) {
			if (err)
				*err = -ENOMEM;
			return NULL;
		}
		fd = unwind_elf_open_in_root(pid, m->path);
		if (fd < 0) {
			first_err = fd;
			fd = -1;
		} else if (fstat(fd, &st) < 0) {
			first_err = -errno;
			close(fd);
			fd = -1;
		} else if (st.st_ino != m->inode) {
			/* Replaced on disk since it was mapped (an upgrade):
			 * its symbols would name the wrong code.  The device
			 * is not compared: on overlayfs st_dev is the
			 * overlay's while maps shows the layer's. */
			first_err = -ESTALE;
			close(fd);
			fd = -1;
		}
	}

	/* The mapped object itself, whatever happened to its name.  Needs
	 * CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE) on most kernels. */
	if (fd < 0) {
		free(path);
		path = NULL;
		if (pid <= 0 ||
		    asprintf(&path, "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			     (int)pid, m->start, m->end) < 0) {
			path = NULL;
			if (err)
				*err = first_err ? first_err : -ENOENT;
			return NULL;
		}
		fd = unwind_elf_open_regular(path);
		if (fd < 0 || fstat(fd, &st) < 0) {
			int e = fd < 0 ? fd : -errno;

			if (fd >= 0)
				close(fd);
			free(path);
			if (err)
				*err = first_err ? first_err : e;
			return NULL;
		}
	}

	/* Another target's image of the same file, else a new one for the
	 * pool (out of memory for the reference: it stays there unused). */
	unwind_elf_image_lock();
	for (img = pool.head; img; img = img->pool_next)
		if (same_file(img, m->dev, m->inode, &st))
			break;
	if (img) {
		close(fd);
	} else if ((img = image_from_fd(fd, path, &st, m->dev, m->inode, err))) {
		img->pool_next = pool.head;
		pool.head = img;
	}
	if (img && !(img = cache_hold(c, img)) && err)
		*err = -ENOMEM;
	unwind_elf_image_unlock();
	free(path);
	return img;
}

struct elf_image *unwind_elf_image_from_memory(struct elf_cache *c, void *buf,
					size_t len, const char *name)
{
	struct elf_image *img;

	/* Ownership of buf is taken whatever happens, so that the caller
	 * never has to guess whether to free it. */
	if (!c || !buf || len < sizeof(Elf32_Ehdr))
		goto fail;
	img = calloc(1, sizeof(*img));
	if (!img)
		goto fail;
	img->path = strdup(name ? name : "[memory]");
	if (!img->path) {
		free(img);
		goto fail;
	}
	img->data = buf;
	img->size = len;
	img->mmapped = false;
	if (image_parse(img) < 0) {
		image_free(img);   /* frees buf */
		return NULL;
	}
	img->next = c->head;
	c->head = img;
	return img;
fail:
	free(buf);
	return NULL;
}

void unwind_elf_cache_free(struct elf_cache *c)
{
	struct elf_image *img, *next;

	if (!c)
		return;
	for (img = c->head; img; img = next) {
		next = img->next;
		image_free(img);
	}
	c->head = NULL;
	if (c->nshared) {
		unwind_elf_image_lock();
		for (size_t i = 0; i < c->nshared; i++)
			pool_release(c->shared[i]);
		unwind_elf_image_unlock();
	}
	free(c->shared);
	c->shared = NULL;
	c->nshared = c->shared_cap = 0;
}

/* How well a segment's flags match a mapping's permissions: 2 exact, 1 the
 * same X bit (a RELRO page is a PF_W segment mapped read-only after
 * relocation), 0 otherwise. */
static int perms_score(const struct elf_segment *s, const struct mapping *m)
{
	bool mx = m->perms & MAPPING_X, mw = m->perms & MAPPING_W;
	bool sx = s->flags & PF_X, sw = s->flags & PF_W;

	if (mx != sx)
		return 0;
	return mw == sw ? 2 : 1;
}

/* The page mask of this host (mappings start at page boundaries). */
static uint64_t
page_mask(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	return ps > 0 ? (uint64_t)ps - 1 : 4095;
}

const struct elf_segment *
unwind_elf_image_segment_at(const struct elf_image *img, uint64_t off)
{
	uint64_t mask = page_mask();
	for (size_t i = 0; img && i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		uint64_t hi = s->offset + s->filesz;
		if (s->filesz && hi > s->offset && off >= (s->offset & ~mask) && off < hi)
			return s;
	}
	return NULL;
}

int unwind_elf_image_bias(const struct elf_image *img, const struct mapping *m,
		   uint64_t *bias)
{
	uint64_t mask = page_mask();
	const struct elf_segment *best = NULL;
	int best_score = -1;

	if (!img || !m || !bias)
		return -ENOENT;
	/* Several segments can share a file page (text and data in old
	 * binaries, rodata and RELRO in new ones); the mapping's permissions
	 * pick among them, the first in file order wins a tie. */
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		uint64_t lo = s->offset & ~mask;
		uint64_t hi = s->offset + s->filesz;
		int score;

		if (s->filesz == 0 || hi < s->offset)
			continue;
		hi = hi + mask < hi ? UINT64_MAX : (hi + mask) & ~mask;
		if (m->offset < lo || m->offset >= hi)
			continue;
		score = perms_score(s, m);
		if (score > best_score) {
			best = s;
			best_score = score;
		}
	}
	if (!best)
		return -ENOENT;
	/* The kernel maps a segment at PAGE_DOWN(bias + p_vaddr) from file
	 * offset PAGE_DOWN(p_offset). */
	*bias = m->start - ((best->vaddr & ~mask) + (m->offset - (best->offset & ~mask)));
	return 0;
}

/* The header of the section called `name` of the ELF at data/size, if it
 * has contents in the file, inside it, and is not compressed.  false if
 * there is none. */
bool
unwind_elf_find_section(const unsigned char *data, size_t size, const char *name,
		 Elf64_Shdr *out)
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
		    span_inside(size, sh.sh_offset, sh.sh_size)) {
			*out = sh;
			found = true;
		}
		break;
	}
out:
	elf_end(e);
	return found;
}

/* The first symbol called name of type `type` (STT_OBJECT, STT_FUNC) in
 * the table of section type sht of e. */
static bool
find_symbol_in(Elf *e, Elf64_Word sht, const char *name, int type, uint64_t *value,
	       uint64_t *size)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != sht || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != type || sym.st_shndx == SHN_UNDEF)
				continue;
			const char *s = elf_strptr(e, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0) {
				*value = sym.st_value;
				*size = sym.st_size;
				return true;
			}
		}
	}
	return false;
}

bool
unwind_elf_image_symbol(const struct elf_image *img, const char *name, int type,
			uint64_t *value, uint64_t *size)
{
	if (img->size < EI_NIDENT || memcmp(img->data, ELFMAG, SELFMAG) != 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_memory((char *)(uintptr_t)img->data, img->size);
	if (!e)
		return false;
	bool found = find_symbol_in(e, SHT_DYNSYM, name, type, value, size) ||
		     find_symbol_in(e, SHT_SYMTAB, name, type, value, size);
	elf_end(e);
	return found;
}
