/* sampler/options.c - parsing shared by the commands. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
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
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* !(v >= min) also rejects NaN. */
	if (errno || end == s || *end || !(v >= min) || v > max)
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

void
option_error_and_help(const char *cmd, int c, char **argv)
{
	if (c == ':')
		error_msg_and_help(cmd, "option '%s' requires an argument", argv[optind - 1]);
	if (optopt)
		error_msg_and_help(cmd, "invalid option -- '%c'", optopt);
	error_msg_and_help(cmd, "unrecognized option '%s'", argv[optind - 1]);
}

void
check_engine_or_help(const char *cmd, enum unwind_engine e)
{
	if (!unwind_engine_available(e))
		error_msg_and_help(cmd, "the %s engine cannot be used here: %s",
				   unwind_engine_name(e), unwind_engine_unavailable_reason(e));
}

void
parse_target_or_help(const char *cmd, const char *what, const char *pid_arg,
		     int argc, char **argv, struct profiler_config *cfg)
{
	if (optind < argc) {
		if (pid_arg)
			error_msg_and_help(cmd, "give either -p PID or -- COMMAND, not both");
		/* getopt stops at "--" or at the first non-option. */
		cfg->argv = argv + optind;
	}
	if (!pid_arg && !cfg->argv)
		error_msg_and_help(cmd, "nothing to %s: give -p PID or -- COMMAND", what);
	if (pid_arg)
		cfg->npids = parse_pids_or_die(cmd, pid_arg, &cfg->pids);
}
