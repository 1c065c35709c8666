/* sampler/out-file.c - an output file (-o FILE) that is either complete or
 * not there: written to a temporary file in the same directory, renamed
 * over FILE once everything has been written.  A stackspy killed while
 * writing (SIGKILL, the OOM killer, a full disk) leaves FILE as it was:
 * absent, or the complete previous output (tests/record-crash.test).
 *
 * The temporary is unnamed where the kernel and the file system allow
 * (O_TMPFILE): a SIGKILL then leaves nothing behind either.  Elsewhere it
 * is ".FILE.XXXXXX", created with O_EXCL; a SIGKILL leaves that one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sampler/sampler.h"

/* Tries at a free temporary name before giving up (EEXIST each time). */
#define TMP_NAME_TRIES 100

/* dir/.base.XXXXXX with a fresh suffix into buf. */
static int
tmp_name(char *buf, size_t size, const char *dir, const char *base)
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
	int n = snprintf(buf, size, "%s/.%s.%s", dir, base, suffix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Split path into its directory ("." when it has none) and last component,
 * both malloc'd.  Returns 0 or -errno. */
static int
split_path(const char *path, char **dir, char **base)
{
	const char *slash = strrchr(path, '/');

	*dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	*base = strdup(slash ? slash + 1 : path);
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		return -ENOMEM;
	}
	if (!**base) {          /* "dir/": no file name */
		free(*dir);
		free(*base);
		return -EISDIR;
	}
	return 0;
}

/* The temporary file in of->dir: unnamed if possible, else named (kept in
 * of->tmp).  mode: the permissions the final file is to have.  Returns an
 * fd or -errno. */
static int
create_tmp(struct out_file *of, mode_t mode)
{
	char name[PATH_MAX];
	int fd;

#ifdef O_TMPFILE
	/* Linked into the directory only at commit time (through
	 * /proc/self/fd, which needs no privilege), so that there must be a
	 * /proc: without one, the named form. */
	if (access("/proc/self/fd", X_OK) == 0) {
		fd = open(of->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
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
		int r = tmp_name(name, sizeof(name), of->dir, of->base);
		if (r < 0)
			return r;
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (fd >= 0) {
			of->tmp = strdup(name);
			if (!of->tmp) {
				unlink(name);
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

int
out_file_open(struct out_file *of, const char *path)
{
	struct stat st;
	int fd, r;

	memset(of, 0, sizeof(*of));
	if (!path) {
		of->f = stdout;
		return 0;
	}
	of->path = strdup(path);
	if (!of->path)
		return -ENOMEM;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* /dev/null, /dev/stdout, a FIFO to a consumer: nothing to
		 * replace (renaming over /dev/null would be a disaster);
		 * written in place, opened now so that a bad one costs the
		 * target nothing. */
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 || !(of->f = fdopen(fd, "w"))) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			out_file_discard(of);
			return r;
		}
		of->in_place = true;
		return 0;
	}

	/* A symlink to a file: the file it points to is replaced, the link
	 * stays (as with "> FILE"). */
	char *real = realpath(path, NULL);
	r = split_path(real ? real : path, &of->dir, &of->base);
	free(real);
	if (r < 0) {
		out_file_discard(of);
		return r;
	}
	/* A new file gets 0666 less the umask, as any file a program creates;
	 * a file replaced keeps its permissions (as with "> FILE"). */
	bool replacing = stat(path, &st) == 0;
	mode_t mode = replacing ? st.st_mode & 0777 : 0666;
	fd = create_tmp(of, mode);
	if (fd < 0) {
		out_file_discard(of);
		return fd;
	}
	/* The umask applied to the open: put the old bits back.  Failing
	 * leaves the umask's, harmless. */
	if (replacing)
		(void)!fchmod(fd, mode);
	of->f = fdopen(fd, "w");
	if (!of->f) {
		r = -errno;
		close(fd);
		out_file_discard(of);
		return r;
	}
	return 0;
}

/* Give the unnamed temporary a name in the directory: of->tmp. */
static int
link_tmp(struct out_file *of)
{
	char self[64], name[PATH_MAX];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fileno(of->f));
	for (int i = 0; i < TMP_NAME_TRIES; i++) {
		int r = tmp_name(name, sizeof(name), of->dir, of->base);
		if (r < 0)
			return r;
		if (linkat(AT_FDCWD, self, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) {
			of->tmp = strdup(name);
			if (!of->tmp) {
				unlink(name);
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
out_file_commit(struct out_file *of)
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
		char *final = NULL;
		if (asprintf(&final, "%s/%s", of->dir, of->base) < 0)
			r = -ENOMEM;
		else if (rename(of->tmp, final) < 0)
			r = -errno;
		else {
			free(of->tmp);
			of->tmp = NULL;
		}
		free(final);
	}
	out_file_discard(of);
	return r;
}

void
out_file_discard(struct out_file *of)
{
	if (of->f && of->f != stdout)
		fclose(of->f);
	of->f = NULL;
	if (of->tmp)
		unlink(of->tmp);
	free(of->tmp);
	free(of->dir);
	free(of->base);
	free(of->path);
	memset(of, 0, sizeof(*of));
}
