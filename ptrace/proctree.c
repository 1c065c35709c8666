/* ptrace/proctree.c - the processes below a process: the children every
 * thread of it has forked (/proc/PID/task/TID/children), and theirs.
 *
 * A child belongs to the thread that forked it, so one process's children
 * are spread over the children files of all its threads.  Where the kernel
 * has no such file (CONFIG_PROC_CHILDREN off) the parent field of every
 * /proc/PID/stat is read instead: slower, same answer.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"

struct pid_vec {
	pid_t *v;
	size_t n, cap;
};

static int
pid_vec_push(struct pid_vec *pv, pid_t pid)
{
	for (size_t i = 0; i < pv->n; i++)
		if (pv->v[i] == pid)
			return 0;  /* a child named by two threads' files */
	if (BASE_GROW(pv->v, pv->cap, pv->n + 1, 16) < 0)
		return -ENOMEM;
	pv->v[pv->n++] = pid;
	return 0;
}

/* The parent of process pid, 0 if unknown. */
static pid_t
parent_of(pid_t pid)
{
	long ppid = 0;
	ptrace_procfs_status_field(pid, "PPid", &ppid);
	return (pid_t)ppid;
}

/* Without children files: every process whose parent is pid. */
static int
children_by_scan(pid_t pid, struct pid_vec *out)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -errno;
	struct dirent *e;
	int r = 0;
	while (r == 0 && (e = readdir(d))) {
		char *end;
		long v = strtol(e->d_name, &end, 10);
		if (*end || v <= 0 || (pid_t)v == pid)
			continue;
		if (parent_of((pid_t)v) == pid)
			r = pid_vec_push(out, (pid_t)v);
	}
	closedir(d);
	return r;
}

/* 1 when the kernel has children files, 0 when not, -1 before we know. */
static int have_children_files = -1;

static int
children_of(pid_t pid, struct pid_vec *out)
{
	if (have_children_files < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(),
			 (int)getpid());
		have_children_files = access(path, R_OK) == 0;
	}
	if (!have_children_files)
		return children_by_scan(pid, out);
	pid_t *tids = NULL;
	int n = ptrace_procfs_list_tasks(pid, &tids);
	if (n < 0)
		return n;
	int r = 0;
	for (int i = 0; r == 0 && i < n; i++) {
		char path[96], buf[4096];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)tids[i]);
		/* A thread that exited meanwhile has no children left. */
		if (ptrace_procfs_read(path, buf, sizeof(buf)) < 0)
			continue;
		for (char *p = buf; r == 0 && *p; ) {
			char *end;
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (v > 0)
				r = pid_vec_push(out, (pid_t)v);
			p = end;
		}
	}
	free(tids);
	return r;
}

int
ptrace_children(pid_t pid, pid_t **out)
{
	struct pid_vec pv = { 0 };
	int r = children_of(pid, &pv);
	if (r < 0) {
		free(pv.v);
		return r;
	}
	*out = pv.v;
	return (int)pv.n;
}

int
ptrace_descendants(pid_t pid, pid_t **out)
{
	struct pid_vec pv = { 0 };
	int r = children_of(pid, &pv);
	/* Breadth first: pv grows while we walk it. */
	for (size_t i = 0; r >= 0 && i < pv.n; i++) {
		r = children_of(pv.v[i], &pv);
		if (r == -ESRCH)
			r = 0;  /* exited meanwhile: its children moved up */
	}
	if (r == -ESRCH)
		r = 0;
	if (r < 0) {
		free(pv.v);
		return r;
	}
	*out = pv.v;
	return (int)pv.n;
}
