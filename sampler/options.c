/* sampler/options.c - parsing shared by the commands. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/procfs.h"
#include "sampler/error.h"
#include "sampler/options.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

int
sampler_parse_long(const char *s, long min, long max, long *out)
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
sampler_parse_double(const char *s, double min, double max, double *out)
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
sampler_parse_seconds(const char *s, double min, double max, double *out)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "min", 60 }, { "h", 3600 },
	};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		v *= units[i].scale;
		if (!(v >= min) || v > max)
			return -1;
		*out = v;
		return 0;
	}
	return -1;
}

/* Is s meant as a list of PIDs?  An argument that starts with a digit:
 * a command rarely does, and "12x" is then a bad PID, not a program. */
bool
sampler_looks_like_pids(const char *s)
{
	return *s >= '0' && *s <= '9';
}

int
sampler_pid_list_append(const char *s, pid_t **pids, int *npids)
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
		if (sampler_parse_long(tok, 1, INT_MAX, &pid) < 0)
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

/* Does process pid go by name: its comm (the kernel cuts it to 15
 * bytes, as pidof knows) or the base name of its executable? */
static bool
process_named(pid_t pid, const char *name)
{
	char comm[64], path[64], exe[PATH_MAX];
	size_t len = strlen(name);
	if (ptrace_read_comm(pid, comm, sizeof(comm)) == 0 && comm[0] &&
	    (strcmp(comm, name) == 0 || (len > 15 && strlen(comm) == 15 &&
					  strncmp(comm, name, 15) == 0)))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* A replaced executable reads "/usr/sbin/nginx (deleted)". */
	char *deleted = strstr(exe, " (deleted)");
	if (deleted && deleted[10] == '\0')
		*deleted = '\0';
	const char *base = strrchr(exe, '/');
	return strcmp(base ? base + 1 : exe, name) == 0;
}

int
sampler_pids_named(const char *word, char *list, size_t len)
{
	const char *name = strrchr(word, '/');
	name = name ? name + 1 : word;
	list[0] = '\0';
	if (!*name)
		return 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	size_t used = 0;
	pid_t self = getpid();
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid;
		if (sampler_parse_long(e->d_name, 1, INT_MAX, &pid) < 0 || (pid_t)pid == self ||
		    !process_named((pid_t)pid, name))
			continue;
		/* Enough to recognize them; pidof gives them all. */
		if (n == 8 && used + 8 < len) {
			snprintf(list + used, len - used, ",...");
			used += 4;
		} else if (n < 8 && used + 16 < len) {
			int k = snprintf(list + used, len - used, "%s%ld", n ? "," : "", pid);
			if (k > 0)
				used += (size_t)k;
		}
		n++;
	}
	closedir(d);
	return n;
}

void
sampler_pid_list_append_or_die(const char *cmd, const char *s, pid_t **pids, int *npids)
{
	int r = sampler_pid_list_append(s, pids, npids);
	if (r == -ENOMEM)
		error_msg_and_die("out of memory");
	if (r < 0) {
		char list[256];
		/* stackspy dump nginx: a name where a PID goes. */
		int n = sampler_looks_like_pids(s) ? 0 : sampler_pids_named(s, list, sizeof(list));
		if (n > 0) {
			error_msg("invalid PID: '%s'", s);
			sampler_hint_msg("%s is running as PID%s %s: stackspy %s %s$(pidof %s)", s,
				 n == 1 ? "" : "s", list, cmd,
				 strcmp(cmd, "dump") == 0 ? "" : "-p ", s);
			sampler_usage_exit(cmd);
		}
		error_msg_and_help(cmd, "invalid PID: '%s'", s);
	}
}

/* The word closest to s among words (NULL-terminated), within a third of
 * its length in edits (insert, delete, change, swap two neighbours), or
 * NULL.  For "did you mean". */
const char *
sampler_closest_word(const char *s, const char *const *words)
{
	const char *best = NULL;
	size_t best_d = strlen(s) / 3 + 1, ls = strlen(s);
	if (ls > 62)
		return NULL;
	for (; *words; words++) {
		const char *w = *words;
		size_t lw = strlen(w);
		if (lw > 62)
			continue;
		/* Optimal string alignment distance, three rows. */
		size_t rows[3][64], *pp = rows[0], *prev = rows[1], *cur = rows[2];
		for (size_t j = 0; j <= lw; j++)
			prev[j] = j;
		for (size_t i = 1; i <= ls; i++) {
			cur[0] = i;
			for (size_t j = 1; j <= lw; j++) {
				size_t sub = prev[j - 1] + (s[i - 1] != w[j - 1]);
				size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
				size_t d = sub < del ? sub : del;
				d = d < ins ? d : ins;
				if (i > 1 && j > 1 && s[i - 1] == w[j - 2] && s[i - 2] == w[j - 1] &&
				    pp[j - 2] + 1 < d)
					d = pp[j - 2] + 1;
				cur[j] = d;
			}
			size_t *t = pp;
			pp = prev;
			prev = cur;
			cur = t;
		}
		if (prev[lw] < best_d) {
			best_d = prev[lw];
			best = w;
		}
	}
	return best;
}

void
sampler_option_error_and_help(const char *cmd, int c, char **argv, const struct option *longopts)
{
	if (c == ':')
		error_msg_and_help(cmd, "option '%s' requires an argument", argv[optind - 1]);
	if (optopt)
		error_msg_and_help(cmd, "invalid option -- '%c'", optopt);
	const char *arg = argv[optind - 1];
	if (strncmp(arg, "--", 2) == 0 && longopts) {
		/* --formt: the long option it was probably meant to be. */
		char name[64];
		const char *names[128];
		size_t n = 0;
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
		for (const struct option *lo = longopts; lo->name && n + 1 < 128; lo++)
			names[n++] = lo->name;
		names[n] = NULL;
		const char *near = sampler_closest_word(name, names);
		if (near)
			error_msg_and_help(cmd, "unrecognized option '%s' (did you mean --%s?)", arg,
					   near);
	}
	error_msg_and_help(cmd, "unrecognized option '%s'", arg);
}

void
sampler_check_engine_or_help(const char *cmd, enum unwind_engine e)
{
	if (!unwind_engine_available(e))
		error_msg_and_help(cmd, "the %s engine cannot be used here: %s",
				   unwind_engine_name(e), unwind_engine_unavailable_reason(e));
}

/* A word after the options of record or top that is neither a PID nor
 * after "--": never a command started as root by accident (stackspy
 * record redis-server would start a second redis-server).  A name of
 * running processes gets their PIDs; anything else, how to start it. */
static void __attribute__((noreturn))
bare_word_and_help(const char *cmd, const char *word)
{
	char list[256];
	int n = sampler_pids_named(word, list, sizeof(list));
	if (n > 0) {
		error_msg("'%s' is not a PID (a command to start goes after --)", word);
		sampler_hint_msg("%s is running as PID%s %s: stackspy %s -p $(pidof %s) ...", word,
			 n == 1 ? "" : "s", list, cmd,
			 word);
		sampler_hint_msg("to start another %s and %s it: stackspy %s [OPTIONS] -- %s ...",
				 word, strcmp(cmd, "top") == 0 ? "watch" : "record", cmd, word);
	} else {
		error_msg("'%s' is not a PID, and no running process is named %s", word, word);
		sampler_hint_msg("to start it as a command, put it after --: "
				 "stackspy %s [OPTIONS] -- %s ...", cmd, word);
	}
	sampler_usage_exit(cmd);
}

int
sampler_target_getopt(const char *cmd, int argc, char **argv, const char *optstring,
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
		if (dashdash || optind >= argc)
			return -1;
		if (!sampler_looks_like_pids(argv[optind]))
			bare_word_and_help(cmd, argv[optind]);
		/* PIDs as arguments (stackspy record $(pidof nginx) -d 5):
		 * options may follow them. */
		sampler_pid_list_append_or_die(cmd, argv[optind++], &cfg->pids, &cfg->npids);
	}
}

void
sampler_parse_target_or_help(const char *cmd, const char *what, int argc, char **argv,
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
sampler_engine_or_help(const char *cmd, const char *arg)
{
	enum unwind_engine e;
	if (unwind_engine_parse(arg, &e) < 0)
		error_msg_and_help(cmd, "invalid --engine argument: '%s' (auto, cfi, fp or mips)", arg);
	return e;
}

int
sampler_max_depth_or_help(const char *cmd, const char *arg, bool zero_ok)
{
	long v;
	if (sampler_parse_long(arg, zero_ok ? 0 : 1, MAX_MAX_DEPTH, &v) < 0) {
		if (zero_ok)
			error_msg_and_help(cmd, "invalid --max-depth argument: '%s' (0 to %d; 0: no limit)",
					   arg, MAX_MAX_DEPTH);
		error_msg_and_help(cmd, "invalid --max-depth argument: '%s' (1 to %d)", arg,
				   MAX_MAX_DEPTH);
	}
	return (int)v;
}

void
sampler_common_options_init(struct profiler_config *cfg)
{
	cfg->rate_hz = DEFAULT_RATE;
	cfg->engine = UNWIND_ENGINE_AUTO;
	cfg->max_depth = DEFAULT_MAX_DEPTH;
	cfg->sym_flags = UNWIND_SYM_NO_PARAMS;
	/* Our own messages, not getopt's: one format for every error. */
	opterr = 0;
}

bool
sampler_common_option(struct common_options *co, int c, const char *arg,
		      struct profiler_config *cfg)
{
	int depth;
	switch (c) {
	case 'p':
		if (co->pid_given)
			error_msg_and_help(co->cmd, "only one PID list may be given");
		co->pid_given = true;
		sampler_pid_list_append_or_die(co->cmd, arg, &cfg->pids, &cfg->npids);
		return true;
	case 'V':
		printf("stackspy %s\n", PACKAGE_VERSION);
		exit(0);
	case 'r':
	case 'F':  /* perf record -F 99 */
		if (sampler_parse_double(arg, DBL_MIN, MAX_RATE, &cfg->rate_hz) < 0)
			error_msg_and_help(co->cmd, "invalid --rate argument: '%s' (above 0, at most %.0f)",
					   arg, MAX_RATE);
		return true;
	case 'e':
		cfg->engine = sampler_engine_or_help(co->cmd, arg);
		return true;
	case 'm':
		depth = sampler_max_depth_or_help(co->cmd, arg, co->depth_zero_ok);
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
	case OPT_PYTHON:
		if (strcmp(arg, "on") == 0)
			unwind_set_python(UNWIND_PYTHON_ON);
		else if (strcmp(arg, "off") == 0)
			unwind_set_python(UNWIND_PYTHON_OFF);
		else if (strcmp(arg, "beside") == 0)
			unwind_set_python(UNWIND_PYTHON_BESIDE);
		else
			error_msg_and_help(co->cmd, "invalid --python argument: '%s' (on, off or beside)",
					   arg);
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
sampler_need_libdw_or_help(const char *cmd, const char *opt)
{
	if (!unwind_source_available())
		error_msg_and_help(cmd, "%s needs libdw: stackspy was built without it", opt);
}

void
sampler_keep_running_or_help(const char *cmd, const struct profiler_config *cfg)
{
	if (cfg->keep_running && !cfg->argv)
		error_msg_and_help(cmd, "--keep-running goes with -- COMMAND");
}
