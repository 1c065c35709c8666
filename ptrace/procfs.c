/* ptrace/procfs.c - the /proc reads the ptrace core needs. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/ptrace-internal.h"

ssize_t
procfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	size_t got = 0;
	while (got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			/* A thread that exits under us makes reads fail with ESRCH. */
			return -e;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	close(fd);
	return (ssize_t)got;
}

int
procfs_status_field(pid_t pid, const char *key, long *val)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (procfs_read(path, buf, sizeof(buf)) < 0)
		return -ENOENT;
	size_t klen = strlen(key);
	for (char *line = buf; line && *line; ) {
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			*val = strtol(line + klen + 1, NULL, 10);
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

static int
cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int
procfs_list_tasks(pid_t pid, pid_t **out)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	size_t n = 0, cap = 16;
	pid_t *v = malloc(cap * sizeof(*v));
	if (!v) {
		closedir(d);
		return -ENOMEM;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (n == cap) {
			pid_t *nv = realloc(v, 2 * cap * sizeof(*v));
			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap *= 2;
		}
		v[n++] = (pid_t)tid;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_pid);
	*out = v;
	return (int)n;
}

int
ptrace_thread_info(pid_t pid, pid_t tid, char *state, char *name, size_t namelen)
{
	char path[96], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	ssize_t r = procfs_read(path, buf, sizeof(buf));
	if (r < 0)
		return (int)r;
	/* "tid (comm) S ...": comm may hold spaces and parentheses, so the
	 * state follows the last ')'. */
	char *open_paren = strchr(buf, '(');
	char *close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return -EINVAL;
	if (state)
		*state = close_paren[2];
	if (name && namelen) {
		size_t l = (size_t)(close_paren - open_paren - 1);
		if (l >= namelen)
			l = namelen - 1;
		memcpy(name, open_paren + 1, l);
		name[l] = '\0';
	}
	return 0;
}

int
ptrace_read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	if (!len)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	ssize_t r = procfs_read(path, buf, len);
	if (r < 0) {
		buf[0] = '\0';
		return (int)r;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int
ptrace_read_schedstat(int fd, struct task_schedstat *out)
{
	char buf[128];
	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -EBADF;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	char *end;
	out->cpu_ns = strtoull(buf, &end, 10);
	out->wait_ns = strtoull(end, &end, 10);
	out->slices = strtoull(end, NULL, 10);
	out->read_ns = monotonic_ns();
	return 0;
}
