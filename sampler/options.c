/* sampler/options.c - parsing shared by the commands. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"

int
parse_long(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
parse_pid_list(const char *s, pid_t **out)
{
	int n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	/* The exit paths detach at most this many targets (error.c). */
	if (n > MAX_PIDS)
		return -E2BIG;
	pid_t *v = calloc((size_t)n, sizeof(*v));
	if (!v)
		return -1;
	char *copy = strdup(s);
	if (!copy) {
		free(v);
		return -1;
	}
	int i = 0;
	char *save = NULL;
	/* Every element must be a PID: "1,,2" and "1," are errors. */
	for (char *tok = copy; i < n; tok = NULL) {
		char *t = strtok_r(tok, ",", &save);
		long pid;
		if (!t || parse_long(t, 1, INT_MAX, &pid) < 0) {
			free(copy);
			free(v);
			return -1;
		}
		v[i++] = (pid_t)pid;
	}
	free(copy);
	if (s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,")) {
		free(v);
		return -1;
	}
	*out = v;
	return n;
}

int
parse_pids_or_die(const char *cmd, const char *arg, pid_t **out)
{
	int n = parse_pid_list(arg, out);
	if (n == -E2BIG)
		error_msg_and_help(cmd, "too many PIDs in '%s' (at most %d)", arg, MAX_PIDS);
	if (n < 0)
		error_msg_and_help(cmd, "invalid PID: '%s'", arg);
	return n;
}
