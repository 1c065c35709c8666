/* sampler/options.c - parsing shared by the commands. */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/error.h"
#include "sampler/options.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

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

/* Is s meant as a list of PIDs?  An argument that starts with a digit:
 * a command rarely does, and "12x" is then a bad PID, not a program. */
bool
looks_like_pids(const char *s)
{
	return *s >= '0' && *s <= '9';
}

int
pid_list_append(const char *s, pid_t **pids, int *npids)
{
	/* Every element must be a PID: "1,,2", ",1" and "1," are errors. */
	if (!*s || s[0] == ',' || s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return -EINVAL;
	int n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	if (n > INT_MAX - *npids)
		return -E2BIG;
	pid_t *v = realloc(*pids, (size_t)(*npids + n) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*pids = v;
	int k = *npids;
	for (const char *p = s; *p;) {
		char tok[32];
		size_t len = strcspn(p, ",");
		long pid;
		if (len >= sizeof(tok))
			return -EINVAL;
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (parse_long(tok, 1, INT_MAX, &pid) < 0)
			return -EINVAL;
		p += len + (p[len] == ',');
		/* The same process twice is one target (it can be traced
		 * only once). */
		bool dup = false;
		for (int i = 0; i < k && !dup; i++)
			dup = v[i] == (pid_t)pid;
		if (!dup)
			v[k++] = (pid_t)pid;
	}
	*npids = k;
	return 0;
}

void
pid_list_append_or_die(const char *cmd, const char *s, pid_t **pids, int *npids)
{
	int r = pid_list_append(s, pids, npids);
	if (r == -ENOMEM)
		error_msg_and_die("out of memory");
	if (r < 0)
		error_msg_and_help(cmd, "invalid PID: '%s'", s);
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

int
target_getopt(const char *cmd, int argc, char **argv, const char *optstring,
	      const struct option *longopts, struct profiler_config *cfg)
{
	for (;;) {
		int before = optind;
		int c = getopt_long(argc, argv, optstring, longopts, NULL);
		if (c != -1)
			return c;
		/* getopt steps over a "--" that ends the options, and stops
		 * without a step at any other argument. */
		bool dashdash = optind == before + 1 && strcmp(argv[before], "--") == 0;
		if (dashdash || optind >= argc || !looks_like_pids(argv[optind]))
			return -1;
		/* PIDs as arguments (stackspy record $(pidof nginx) -d 5):
		 * options may follow them. */
		pid_list_append_or_die(cmd, argv[optind++], &cfg->pids, &cfg->npids);
	}
}

void
parse_target_or_help(const char *cmd, const char *what, int argc, char **argv,
		     struct profiler_config *cfg)
{
	if (optind < argc) {
		if (cfg->npids)
			error_msg_and_help(cmd, "give either -p PID or -- COMMAND, not both");
		/* getopt stops at "--" or at the first non-option. */
		cfg->argv = argv + optind;
	}
	if (!cfg->npids && !cfg->argv)
		error_msg_and_help(cmd, "nothing to %s: give -p PID or -- COMMAND", what);
}

enum unwind_engine
engine_or_help(const char *cmd, const char *arg)
{
	enum unwind_engine e;
	if (unwind_engine_parse(arg, &e) < 0)
		error_msg_and_help(cmd, "invalid --engine argument: '%s' (auto, cfi, fp or mips)", arg);
	return e;
}

int
max_depth_or_help(const char *cmd, const char *arg, bool zero_ok)
{
	long v;
	if (parse_long(arg, zero_ok ? 0 : 1, MAX_MAX_DEPTH, &v) < 0) {
		if (zero_ok)
			error_msg_and_help(cmd, "invalid --max-depth argument: '%s' (0 to %d; 0: no limit)",
					   arg, MAX_MAX_DEPTH);
		error_msg_and_help(cmd, "invalid --max-depth argument: '%s' (1 to %d)", arg,
				   MAX_MAX_DEPTH);
	}
	return (int)v;
}

void
common_options_init(struct profiler_config *cfg)
{
	cfg->rate_hz = DEFAULT_RATE;
	cfg->engine = UNWIND_ENGINE_AUTO;
	cfg->max_depth = DEFAULT_MAX_DEPTH;
	cfg->sym_flags = UNWIND_SYM_NO_PARAMS;
	/* Our own messages, not getopt's: one format for every error. */
	opterr = 0;
}

bool
common_option(struct common_options *co, int c, const char *arg, struct profiler_config *cfg)
{
	int depth;
	switch (c) {
	case 'p':
		if (co->pid_given)
			error_msg_and_help(co->cmd, "only one PID list may be given");
		co->pid_given = true;
		pid_list_append_or_die(co->cmd, arg, &cfg->pids, &cfg->npids);
		return true;
	case 'r':
		if (parse_double(arg, DBL_MIN, MAX_RATE, &cfg->rate_hz) < 0)
			error_msg_and_help(co->cmd, "invalid --rate argument: '%s' (above 0, at most %.0f)",
					   arg, MAX_RATE);
		return true;
	case 'e':
		cfg->engine = engine_or_help(co->cmd, arg);
		return true;
	case 'm':
		depth = max_depth_or_help(co->cmd, arg, co->depth_zero_ok);
		cfg->max_depth = depth ? depth : NO_DEPTH_LIMIT;
		return true;
	case OPT_NO_DEMANGLE:
		cfg->sym_flags |= UNWIND_SYM_NO_DEMANGLE;
		return true;
	case OPT_NO_DEBUGINFOD:
		unwind_set_debuginfod(false);
		return true;
	case OPT_SUBPROCESSES:
		cfg->subprocesses = true;
		return true;
	case OPT_IDLE:
		cfg->idle = true;
		return true;
	case OPT_KERNEL:
		cfg->kernel = true;
		return true;
	case OPT_KEEP_RUNNING:
		cfg->keep_running = true;
		return true;
	}
	return false;
}

void
need_libdw_or_help(const char *cmd, const char *opt)
{
	if (!unwind_source_available())
		error_msg_and_help(cmd, "%s needs libdw: stackspy was built without it", opt);
}

void
keep_running_or_help(const char *cmd, const struct profiler_config *cfg)
{
	if (cfg->keep_running && !cfg->argv)
		error_msg_and_help(cmd, "--keep-running goes with -- COMMAND");
}
