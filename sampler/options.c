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
