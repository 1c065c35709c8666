/* sampler/task-stat.c - the /proc files of a thread that each tick reads
 * (stat and schedstat), and the stat line's state letter and name. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "ptrace/procfs.h"
#include "sampler/profiler-internal.h"

int
profiler_task_file_open(pid_t pid, pid_t tid, const char *name)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

char
profiler_task_stat_parse(const char *line, const char **comm, size_t *comm_len, int *cpu)
{
	struct proc_stat ps;
	if (ptrace_proc_stat_parse(line, &ps) < 0) {
		*comm = NULL;
		*comm_len = 0;
		if (cpu)
			*cpu = -1;
		return 0;
	}
	*comm = ps.comm;
	*comm_len = ps.comm_len;
	if (cpu)
		*cpu = ps.processor;
	return ps.state;
}
