/* sampler/task-stat.c - the /proc files of a thread that each tick reads
 * (stat and schedstat), and the stat line's state letter and name. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "sampler/profiler-internal.h"

int
task_file_open(pid_t pid, pid_t tid, const char *name)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The name may hold ')' and spaces: the state follows the last ')'. */
char
task_stat_parse(const char *line, const char **comm, size_t *comm_len)
{
	*comm = NULL;
	*comm_len = 0;
	const char *cp = strrchr(line, ')');
	if (!cp || cp[1] != ' ')
		return 0;
	const char *op = strchr(line, '(');
	if (op && op < cp) {
		*comm = op + 1;
		*comm_len = (size_t)(cp - op - 1);
	}
	return cp[2];
}
