/* sampler/out-file.c - an output file (-o FILE) that is either complete or
 * not there, and that cannot be turned against the one who runs stackspy.
 *
 * Complete or absent: written to a temporary file in the same directory,
 * renamed over FILE once everything has been written.  A stackspy killed
 * while writing (SIGKILL, the OOM killer, a full disk) leaves FILE as it
 * was: absent, or the complete previous output (tests/record-crash.test).
 * The temporary is unnamed where the kernel and the file system allow
 * (O_TMPFILE): a SIGKILL then leaves nothing behind either.  Elsewhere it
 * is ".FILE.XXXXXX", created with O_EXCL; a SIGKILL leaves that one.
 *
 * Not a weapon: stackspy runs as root against other users' processes, and
 * what it writes is partly their choice (perf map names become folded
 * lines).  So the path is walked here, one component at a time, from
 * directory descriptors (tests/security-output.test):
 *  - a symlink that sits in a sticky, world-writable directory (/tmp) and
 *    belongs neither to us nor to the directory's owner is not followed:
 *    the kernel's fs.protected_symlinks rule, applied whatever the sysctl
 *    says (a rename does not follow the last component, so the kernel's
 *    own check would never see it);
 *  - in such a directory, an existing file or FIFO of another user is not
 *    replaced or written (fs.protected_regular and protected_fifos);
 *  - a block device is never written, a character device only when it is
 *    a terminal or a sink (/dev/null, /dev/zero, /dev/full);
 *  - a regular file replaced keeps its owner, group and permissions (not
 *    its set-id bits); where we cannot give it its owner back (not root,
 *    another user's file), it is refused rather than taken over.
 * The directory found is kept open: the rename happens there, whatever is
 * done to the path meanwhile. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "sampler/error.h"
#include "sampler/out-file.h"

/* Tries at a free temporary name before giving up (EEXIST each time). */
#define TMP_NAME_TRIES 100
/* Symlinks followed on one path, as the kernel's MAXSYMLINKS. */
#define MAX_LINKS 40
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

/* .base.XXXXXX with a fresh suffix into buf. */
static int
tmp_name(char *buf, size_t size, const char *base)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	static uint64_t seed;
	char suffix[7];

	if (!seed)
		seed = (uint64_t)getpid() * 2654435761u ^ (uint64_t)time(NULL);
	for (int i = 0; i < 6; i++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		suffix[i] = digits[(seed >> 33) % (sizeof(digits) - 1)];
	}
	suffix[6] = '\0';
	int n = snprintf(buf, size, ".%s.%s", base, suffix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A sticky directory that everyone may write (/tmp, /var/tmp, /dev/shm):
 * where other users plant names for us to trip over. */
static bool
shared_sticky(const struct stat *dir)
{
	return (dir->st_mode & S_ISVTX) && (dir->st_mode & S_IWOTH);
}

/* The kernel's protected_symlinks / protected_regular / protected_fifos
 * rule: in a shared sticky directory, an object that is neither ours nor
 * the directory owner's is another user's trap. */
static bool
planted(const struct stat *dir, const struct stat *obj)
{
	return shared_sticky(dir) && obj->st_uid != geteuid() && obj->st_uid != dir->st_uid;
}

static bool
on_procfs(int dfd)
{
	struct statfs sf;
	return fstatfs(dfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* Say why in why (len bytes); returns -EPERM. */
static int __attribute__((format(printf, 3, 4)))
refuse(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -EPERM;
}

/* Where a path leads, found by resolve(). */
struct resolved {
	int dfd;          /* O_PATH directory that holds (or is to hold) base */
	char *base;       /* malloc'd last component */
	int obj;          /* >= 0: the object itself (a /proc magic link to a
			     pipe or socket, which has no name); base unused */
	bool exists;
	struct stat st;   /* when exists: the object (lstat-like) */
};

/* Go on from directory fd nd (taken over). */
static void
enter_dir(struct resolved *r, int nd)
{
	close(r->dfd);
	r->dfd = nd;
}

static void
resolved_free(struct resolved *r)
{
	if (r->dfd >= 0)
		close(r->dfd);
	if (r->obj >= 0)
		close(r->obj);
	free(r->base);
	r->dfd = r->obj = -1;
	r->base = NULL;
}

/* Component comp of the path being resolved (st: its lstat; last: no
 * component after it) is a symlink: followed, unless another user
 * planted it in a shared sticky directory, or there were MAX_LINKS
 * already.  *rest is the path (malloc'd), *p where comp starts in it, q
 * what follows comp and its slashes.  Returns 0 to go on from *p (the
 * link's target spliced in front of what followed it in *rest, or past
 * a /proc magic link that is a directory), 1 when the last component
 * was a /proc magic link (res->obj: resolved), or -errno; a refusal
 * (-EPERM) says why in why. */
static int
follow_link(struct resolved *res, const char *comp, const struct stat *st, bool last,
	    char **rest, char **p, const char *q, int *links, char *why, size_t whylen)
{
	struct stat dst;
	if (fstat(res->dfd, &dst) < 0)
		return -errno;
	if (planted(&dst, st)) {
		return refuse(why, whylen, "'%s' is a symlink of uid %ld in a "
			      "shared sticky directory: not followed (the kernel's "
			      "protected_symlinks rule)", comp, (long)st->st_uid);
	}
	if (++*links > MAX_LINKS)
		return -ELOOP;
	char target[PATH_MAX];
	ssize_t n = readlinkat(res->dfd, comp, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (target[0] != '/' && on_procfs(res->dfd)) {
		/* A /proc magic link (/proc/self, fd/1 to a pipe): its
		 * target is no path; the kernel's own answer is taken. */
		int fd = openat(res->dfd, comp, O_PATH | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
		if (fd < 0)
			return -errno;
		if (last) {
			res->obj = fd;
			res->exists = fstat(fd, &res->st) == 0;
			return res->exists ? 1 : -errno;
		}
		enter_dir(res, fd);
		*p = (char *)q;
		return 0;
	}
	/* The link's target, then what followed its name; relative: from
	 * the link's directory. */
	char *spliced;
	if (asprintf(&spliced, "%s%s", target, *p + strlen(comp)) < 0)
		return -ENOMEM;
	free(*rest);
	*rest = *p = spliced;
	return 0;
}

/* Walk path from the root or the working directory, one component at a
 * time, never letting the kernel follow a symlink we have not checked.
 * Returns 0 (res filled) or -errno; a refusal (-EPERM) says why in why. */
static int
resolve(const char *path, struct resolved *res, char *why, size_t whylen)
{
	char *rest = strdup(path), *p;
	int links = 0, r = 0;

	memset(res, 0, sizeof(*res));
	res->dfd = res->obj = -1;
	if (!rest)
		return -ENOMEM;
	res->dfd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (res->dfd < 0) {
		r = -errno;
		goto out;
	}
	p = rest;
	for (;;) {
		if (*p == '/') {
			/* A link's absolute target starts again at "/". */
			if (p == rest && links) {
				int nd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (nd < 0) {
					r = -errno;
					goto out;
				}
				enter_dir(res, nd);
			}
			while (*p == '/')
				p++;
		}
		if (!*p) {
			r = -EISDIR;    /* "dir/", "/": no file name */
			goto out;
		}
		size_t len = strcspn(p, "/");
		const char *q = p + len;
		while (*q == '/')
			q++;
		bool last = !*q;
		char comp[NAME_MAX + 1];
		if (len > NAME_MAX) {
			r = -ENAMETOOLONG;
			goto out;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';

		struct stat st;
		if (fstatat(res->dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT && last) {
				res->base = strdup(comp);
				r = res->base ? 0 : -ENOMEM;
				goto out;
			}
			r = -errno;
			goto out;
		}
		if (S_ISLNK(st.st_mode)) {
			r = follow_link(res, comp, &st, last, &rest, &p, q, &links, why, whylen);
			if (r != 0) {
				if (r > 0)
					r = 0;   /* a /proc magic link, resolved */
				goto out;
			}
			continue;
		}
		if (last) {
			res->base = strdup(comp);
			if (!res->base) {
				r = -ENOMEM;
				goto out;
			}
			res->exists = true;
			res->st = st;
			r = 0;
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			r = -ENOTDIR;
			goto out;
		}
		int nd = openat(res->dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nd < 0) {
			r = -errno;
			goto out;
		}
		enter_dir(res, nd);
		p = (char *)q;
	}
out:
	free(rest);
	if (r < 0)
		resolved_free(res);
	return r;
}

/* Character devices that may be written in place: terminals and sinks.
 * Anything else (/dev/kmsg, /dev/mem, a tape that rewinds when opened, a
 * watchdog that starts when opened) is not opened at all. */
static bool
writable_chardev(dev_t rdev)
{
	unsigned maj = major(rdev), min = minor(rdev);

	if (maj == 1)                           /* null, zero, full */
		return min == 3 || min == 5 || min == 7;
	if (maj == 5)                           /* /dev/tty, /dev/console */
		return min == 0 || min == 1;
	return maj == 4 || (maj >= 136 && maj <= 143);  /* VTs, serial, pts */
}

/* The temporary file in the directory: unnamed if possible, else named
 * (kept in of->tmp).  mode: the permissions the final file is to have.
 * Returns an fd or -errno. */
static int
create_tmp(struct out_file *of, mode_t mode)
{
	char name[NAME_MAX + 1];
	int fd;

#ifdef O_TMPFILE
	/* Linked into the directory only at commit time (through
	 * /proc/self/fd, which needs no privilege), so that there must be a
	 * /proc: without one, the named form. */
	if (access("/proc/self/fd", X_OK) == 0) {
		fd = openat(of->dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		/* File systems without O_TMPFILE say EOPNOTSUPP, old kernels
		 * EISDIR or EINVAL; anything else (EACCES, ENOENT) is the
		 * answer the named form would get too. */
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
			return -errno;
	}
#endif
	for (int i = 0; i < TMP_NAME_TRIES; i++) {
		int r = tmp_name(name, sizeof(name), of->base);
		if (r < 0)
			return r;
		fd = openat(of->dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd >= 0) {
			of->tmp = strdup(name);
			if (!of->tmp) {
				unlinkat(of->dfd, name, 0);
				close(fd);
				return -ENOMEM;
			}
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Write in place into what res leads to (a FIFO, a terminal, a sink).
 * Returns 0 or -errno. */
static int
open_in_place(struct out_file *of, struct resolved *res)
{
	int fd;
	char self[64];
	if (res->obj >= 0)
		snprintf(self, sizeof(self), "/proc/self/fd/%d", res->obj);
	/* A FIFO without a reader: said, then waited for (nothing is
	 * attached yet), instead of a silent block. */
	for (int flags = O_NONBLOCK;; flags = 0) {
		if (res->obj >= 0)
			fd = open(self, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags);
		else
			fd = openat(res->dfd, res->base,
				    O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | flags);
		if (fd >= 0 || errno != ENXIO || !flags)
			break;
		error_msg("waiting for a reader of the FIFO '%s' (nothing is attached yet)", of->path);
	}
	if (fd < 0)
		return -errno;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct stat now;
	/* The same object we checked, not one swapped in since. */
	if (fstat(fd, &now) < 0 || now.st_ino != res->st.st_ino || now.st_dev != res->st.st_dev) {
		close(fd);
		return -EAGAIN;
	}
	of->f = fdopen(fd, "w");
	if (!of->f) {
		int e = -errno;
		close(fd);
		return e;
	}
	of->in_place = true;
	return 0;
}

int
sampler_out_file_open(struct out_file *of, const char *path, char *why, size_t whylen)
{
	struct resolved res;
	struct stat dst;
	int fd, r;

	memset(of, 0, sizeof(*of));
	of->dfd = -1;
	if (why && whylen)
		why[0] = '\0';
	if (!path) {
		of->f = stdout;
		return 0;
	}
	of->path = strdup(path);
	if (!of->path)
		return -ENOMEM;
	char scratch[2];
	if (!why || !whylen) {
		why = scratch;
		whylen = sizeof(scratch);
	}
	r = resolve(path, &res, why, whylen);
	if (r < 0) {
		sampler_out_file_discard(of);
		return r;
	}
	if (res.obj < 0 && fstat(res.dfd, &dst) < 0) {
		r = -errno;
		goto fail;
	}
	if (res.exists) {
		const struct stat *st = &res.st;
		/* A name that someone else planted in /tmp is theirs, not a
		 * file for us to take over or feed. */
		if (res.obj < 0 && !S_ISDIR(st->st_mode) && planted(&dst, st)) {
			r = refuse(why, whylen, "'%s' belongs to uid %ld and sits in a "
				   "shared sticky directory: not written (the kernel's "
				   "protected_%s rule); choose another name", res.base,
				   (long)st->st_uid, S_ISFIFO(st->st_mode) ? "fifos" : "regular");
			goto fail;
		}
		if (S_ISDIR(st->st_mode)) {
			r = -EISDIR;
			goto fail;
		}
		if (S_ISBLK(st->st_mode)) {
			r = refuse(why, whylen, "%s is a block device: stackspy writes "
				   "no disk", path);
			goto fail;
		}
		if (S_ISCHR(st->st_mode) && !writable_chardev(st->st_rdev)) {
			r = refuse(why, whylen, "%s is a character device other than a "
				   "terminal or /dev/null: not written", path);
			goto fail;
		}
		if (!S_ISREG(st->st_mode)) {
			/* /dev/null, a terminal, a FIFO or pipe to a consumer:
			 * nothing to replace (renaming over /dev/null would
			 * be a disaster); written in place, opened now so that
			 * a bad one costs the target nothing. */
			r = open_in_place(of, &res);
			if (r < 0)
				goto fail;
			resolved_free(&res);
			return 0;
		}
		if (res.obj >= 0) {
			/* A regular file reached through /proc/.../fd/N that
			 * gave no path: not ours to replace. */
			r = refuse(why, whylen, "%s leads to a file without a name",
				   path);
			goto fail;
		}
	}

	of->dfd = res.dfd;
	of->base = res.base;
	res.dfd = -1;
	res.base = NULL;
	/* A new file gets 0666 less the umask, as any file a program creates;
	 * a file replaced keeps its owner and permissions (as with "> FILE"),
	 * not its set-id bits. */
	mode_t mode = res.exists ? res.st.st_mode & 0777 : 0666;
	fd = create_tmp(of, mode);
	if (fd < 0) {
		r = fd;
		goto fail;
	}
	if (res.exists) {
		struct stat mine;
		if (fstat(fd, &mine) == 0 &&
		    (mine.st_uid != res.st.st_uid || mine.st_gid != res.st.st_gid) &&
		    fchown(fd, res.st.st_uid, res.st.st_gid) < 0 && mine.st_uid != res.st.st_uid) {
			/* Another user's file that we could replace but not
			 * give back: refused, not taken over.  (A group we
			 * are not in is let go: the file stays its owner's.) */
			r = refuse(why, whylen, "'%s' belongs to uid %ld: stackspy "
				   "would replace it with a file of its own; remove it first or "
				   "choose another name", of->base, (long)res.st.st_uid);
			close(fd);
			goto fail;
		}
		/* The umask applied to the open: put the old bits back. */
		(void)!fchmod(fd, mode);
	}
	of->f = fdopen(fd, "w");
	if (!of->f) {
		r = -errno;
		close(fd);
		goto fail;
	}
	resolved_free(&res);
	return 0;
fail:
	resolved_free(&res);
	sampler_out_file_discard(of);
	return r;
}

/* Give the unnamed temporary a name in the directory: of->tmp. */
static int
link_tmp(struct out_file *of)
{
	char self[64], name[NAME_MAX + 1];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fileno(of->f));
	for (int i = 0; i < TMP_NAME_TRIES; i++) {
		int r = tmp_name(name, sizeof(name), of->base);
		if (r < 0)
			return r;
		if (linkat(AT_FDCWD, self, of->dfd, name, AT_SYMLINK_FOLLOW) == 0) {
			of->tmp = strdup(name);
			if (!of->tmp) {
				unlinkat(of->dfd, name, 0);
				return -ENOMEM;
			}
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int
sampler_out_file_open_or_say(struct out_file *of, const char *path, bool stdout_needed)
{
	char why[512];
	if (!path && stdout_needed && sampler_stdio_stdout_closed()) {
		error_msg("standard output is closed: give -o FILE, or redirect it");
		return -1;
	}
	int r = sampler_out_file_open(of, path, why, sizeof(why));
	if (r < 0) {
		if (why[0])
			error_msg("cannot open '%s' for writing: %s", path, why);
		else
			perror_msg(r, "cannot open '%s' for writing", path);
		return -1;
	}
	return 0;
}

int
sampler_out_file_commit(struct out_file *of)
{
	int r = 0;

	if (!of->f)
		return -EBADF;
	if (fflush(of->f) != 0 || ferror(of->f))
		r = errno ? -errno : -EIO;
	if (!of->path)
		return r;               /* stdout: its owner closes it */
	if (r == 0 && !of->in_place && !of->tmp)
		r = link_tmp(of);
	/* close before rename: on NFS the last write errors come at close. */
	if (fclose(of->f) != 0 && r == 0)
		r = -errno;
	of->f = NULL;
	if (r == 0 && of->tmp) {
		/* By name in the directory we checked: a rename replaces the
		 * name, never follows what is there now. */
		if (renameat(of->dfd, of->tmp, of->dfd, of->base) < 0) {
			r = -errno;
		} else {
			free(of->tmp);
			of->tmp = NULL;
		}
	}
	sampler_out_file_discard(of);
	return r;
}

void
sampler_out_file_write_error(int err, const char *path)
{
	int e = err < 0 ? -err : err;
	if (!path && e == EBADF)
		error_msg("cannot write the output: standard output is closed "
			  "(give -o FILE, or redirect it)");
	else if (!path && e == EPIPE)
		error_msg("cannot write the output: its reader has gone (a closed pipe)");
	else
		perror_msg(e, "cannot write %s", path ? path : "the output");
}

void
sampler_out_file_discard(struct out_file *of)
{
	if (of->f && of->f != stdout)
		fclose(of->f);
	of->f = NULL;
	if (of->tmp && of->dfd >= 0)
		unlinkat(of->dfd, of->tmp, 0);
	if (of->dfd >= 0)
		close(of->dfd);
	free(of->tmp);
	free(of->base);
	free(of->path);
	memset(of, 0, sizeof(*of));
	of->dfd = -1;
}
