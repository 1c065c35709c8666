/* sampler/cmd-record.c - `stackspy record`: sample a process periodically
 * and write a flamegraph (folded stacks, SVG, speedscope). */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "sampler/error.h"
#include "sampler/feedback.h"
#include "sampler/options.h"
#include "sampler/out-file.h"
#include "sampler/profiler.h"
#include "sampler/push.h"
#include "sampler/sampler.h"
#include "sampler/signals.h"
#include "unwind/unwind.h"

#define DEFAULT_CHECKPOINT 60.0
#define DEFAULT_PUSH_EVERY 10
#define DEFAULT_PUSH_TIMEOUT 10

enum record_format { FORMAT_FOLDED, FORMAT_SVG, FORMAT_SPEEDSCOPE, FORMAT_PPROF };

struct record_options {
	struct profiler_config cfg;
	double duration;          /* 0: until Ctrl-C or the command exits */
	const char *output;       /* NULL: stdout */
	double checkpoint;        /* -o FILE rewritten this often; 0: at the end only */
	enum record_format format;
	bool format_given;
	struct push_options push;  /* push.url NULL: no --push */
	bool quiet;               /* no start, progress or end lines */
	bool threads_asked;       /* --threads given (cfg.threads may be on for
				     --push or pprof's labels alone) */
};

static void
record_usage(FILE *f)
{
	/* A format, for the default depth: a literal % here is written %%. */
	fprintf(f, "Usage: stackspy record (-p PID[,PID...] | PID... | -- COMMAND [ARG...]) [OPTIONS]\n"
	           "Sample the stacks of running processes (or of a command started here)\n"
	           "periodically and write a flamegraph.  Each thread is stopped only to copy\n"
	           "its registers and stack; unwinding happens after it runs again.\n"
	           "\n"
	           "Target:\n"
	           "  -p, --pid PID[,PID...]  process(es) to sample (several add a root frame comm-PID)\n"
	           "  PID...                  the same: arguments that start with a digit are PIDs\n"
	           "                          (comma lists too, any number), options may follow\n"
	           "  -- COMMAND [ARG...]     run COMMAND and sample it from its first instruction;\n"
	           "                          recording stops when it exits.  When the recording\n"
	           "                          ends first (-d, a signal) COMMAND gets SIGTERM, and\n"
	           "                          SIGKILL 2 s later if it still runs; its exit status\n"
	           "                          is in the summary.  Only after --: any other word\n"
	           "                          is a usage error (a process name gets its PIDs)\n"
	           "      --keep-running      leave COMMAND running when the recording ends\n"
	           "      --subprocesses      also the child processes of the targets: those running\n"
	           "                          now and those created while recording (fork, vfork,\n"
	           "                          clone), from their first instruction, through exec,\n"
	           "                          until they exit; a root frame comm-PID per process\n"
	           "\n"
	           "Sampling:\n"
	           "  -r, --rate HZ           samples per second per thread (default 99, at most\n"
	           "                          10000; -F HZ, as in perf record, is the same)\n"
	           "  -d, --duration SECONDS  stop after this long (30, 30s, 500ms, 2m, 1h; default:\n"
	           "                          Ctrl-C, or the command's exit)\n"
	           "      --idle              wall-clock: sample sleeping threads too (a thread that has\n"
	           "                          not run since its last sample is not stopped again;\n"
	           "                          one in uninterruptible sleep, D, is read without a\n"
	           "                          stop, its kernel frames on top as name_[k])\n"
	           "                          (default: on-CPU, only running threads)\n"
	           "      --kernel            kernel frames on top of the user stack, as name_[k]:\n"
	           "                          on-CPU, the system call a sample was in\n"
	           "                          ([syscall: writev]_[k]); with --idle, each sleeping\n"
	           "                          thread's kernel stack (/proc/TID/stack, root only)\n"
	           "  -e, --engine ENGINE     auto (default), cfi, fp, mips\n"
	           "  -m, --max-depth N       at most N frames per stack (default %d)\n"
	           "\n"
	           "Output:\n"
	           "  -o, --output FILE       write here (default: standard output), complete or\n"
	           "                          not at all; as root, never through another user's\n"
	           "                          symlink, file or FIFO in /tmp (stackspy(1), SECURITY)\n"
	           "  -f, --format FORMAT     folded (default), svg, speedscope or pprof (gzipped\n"
	           "                          profile.proto, labels thread_name, tid, pid,\n"
	           "                          process_name); without -f, from the -o extension\n"
	           "                          in any case: .svg, .json (speedscope), .pb, .pb.gz,\n"
	           "                          .pprof, .folded, .txt; none: folded; any other\n"
	           "                          extension is a usage error\n"
	           "      --checkpoint SECONDS\n"
	           "                          with -o FILE, replace FILE with the profile so far\n"
	           "                          this often (default 60, 0: only at the end)\n"
	           "      --threads           a root frame per thread: comm-PID/TID\n"
	           "      --no-demangle       keep C++/Rust symbols mangled\n"
	           "      --inline            with debug information, functions inlined at a\n"
	           "                          sampled address are frames of their own, name_[i]\n"
	           "      --python=MODE       CPython 3.11+ frames (file:line) where the eval\n"
	           "                          loop runs them: on (default), beside (and keep the\n"
	           "                          _PyEval_EvalFrameDefault frame), off (native only)\n"
	           "      --no-debuginfod     do not fetch missing debug files from DEBUGINFOD_URLS\n"
	           "  -q, --quiet             on a terminal too, only the summary: no start line,\n"
	           "                          progress line, output file line or hints\n"
	           "  -h, --help              show this help\n"
	           "  -V, --version           show the version\n"
	           "\n"
	           "Continuous profiling:\n"
	           "      --push URL          send each interval's profile (pprof) to a Pyroscope-\n"
	           "                          compatible server: POST URL/ingest (Grafana Pyroscope,\n"
	           "                          Alloy's pyroscope.receive_http); runs until stopped\n"
	           "                          without -d; SIGINT sends the last interval and exits\n"
	           "      --push-every SECONDS  one profile per this many seconds (default 10)\n"
	           "      --push-timeout SECONDS  how long one send may take, and how long the end\n"
	           "                          of the recording waits for the server (default 10)\n"
	           "      --app NAME          the application's name (default: the command's or the\n"
	           "                          process's name)\n"
	           "      --label KEY=VALUE   a label of every profile sent (repeatable)\n"
	           "      --push-auth-file FILE  basic auth: USER:PASSWORD, the first line of FILE\n"
	           "                          (or STACKSPY_PUSH_AUTH=USER:PASSWORD); not in the\n"
	           "                          URL, where every user sees it (ps)\n"
	           "\n"
	           "Ctrl-C (SIGINT, SIGTERM, SIGHUP...) ends the recording: stackspy detaches,\n"
	           "writes the complete output and exits 0; Ctrl-Z detaches, then stops.  The\n"
	           "summary goes to standard error; on a terminal also a start line, a progress\n"
	           "line (samples kept), the file written, and hints when the profile is empty\n"
	           "(--idle) or the target's children did the work (--subprocesses).\n"
	           "\n"
	           "Exit status: 0 success, 1 partial (some processes or threads could not be\n"
	           "attached or read), 2 fatal error (nothing written), 64 usage error.\n"
	           "\n"
	           "Examples:\n"
	           "  stackspy record -p PID -d 30 -o flame.svg   30 s of a running process, as a\n"
	           "                                              flamegraph to open in a browser\n"
	           "  stackspy record -p $(pidof nginx) --subprocesses -d 30 -o nginx.svg\n"
	           "                                              a server and the workers it forks\n"
	           "  stackspy record -p PID --idle -d 10 -o wait.svg  where its threads wait too\n"
	           "  stackspy record -p PID -d 60 -o app.pb.gz   pprof, for go tool pprof app.pb.gz\n"
	           "  stackspy record -o flame.svg -- ./prog ARG  start ./prog, record it to its end\n",
	           DEFAULT_MAX_DEPTH);
}

static bool
ends_with_nocase(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

/* The extensions -o understands without -f, and what each writes. */
static const struct {
	const char *ext;
	enum record_format format;
} format_exts[] = {
	{ ".svg", FORMAT_SVG },
	{ ".json", FORMAT_SPEEDSCOPE },  /* .speedscope.json too */
	{ ".pb.gz", FORMAT_PPROF },
	{ ".pb", FORMAT_PPROF },
	{ ".pprof", FORMAT_PPROF },
	{ ".folded", FORMAT_FOLDED },
	{ ".txt", FORMAT_FOLDED },
};
#define FORMAT_EXTS_TEXT ".svg, .json (speedscope), .pb, .pb.gz, .pprof, .folded, .txt"

/* -o FILE without -f: the format of FILE's extension, any case; no
 * extension (a dot file, /dev/stdout) is folded; an unknown one a usage
 * error, never folded text in flame.html. */
static enum record_format
format_of_output(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base)
		return FORMAT_FOLDED;
	for (size_t i = 0; i < sizeof(format_exts) / sizeof(format_exts[0]); i++)
		if (ends_with_nocase(base, format_exts[i].ext))
			return format_exts[i].format;
	error_msg("cannot tell the format of '%s' from its extension '%s'", path, dot);
	sampler_hint_msg("use one of " FORMAT_EXTS_TEXT ", or give -f folded|svg|speedscope|pprof");
	sampler_usage_exit("record");
}

static int
parse_format(const char *s, enum record_format *f)
{
	if (strcmp(s, "folded") == 0)
		*f = FORMAT_FOLDED;
	else if (strcmp(s, "svg") == 0)
		*f = FORMAT_SVG;
	else if (strcmp(s, "speedscope") == 0)
		*f = FORMAT_SPEEDSCOPE;
	else if (strcmp(s, "pprof") == 0)
		*f = FORMAT_PPROF;
	else
		return -1;
	return 0;
}

/* Pyroscope's names: an application name, label keys and values; no
 * character its name syntax APP{k=v,...} gives a meaning. A key is
 * up to the '='. */
static bool
valid_push_name(const char *s, bool key)
{
	size_t n = 0;
	for (; *s && !(key && *s == '='); s++, n++)
		if (!(((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '.' || *s == '-' || (!key && *s == '/')))
			return false;
	return n > 0;
}

/* The default --app: the command's base name, cut to what a name may hold. */
static const char *
push_app_default(const char *app)
{
	const char *base = strrchr(app, '/');
	base = base ? base + 1 : app;
	return valid_push_name(base, false) ? base : "stackspy";
}

/* --push URL: a URL with credentials (http://user:password@host) works,
 * but every user can read them in ps and /proc/PID/cmdline while stackspy
 * runs: they are wiped from the argument in place (cut out, the rest
 * moved up) and a warning says where to put them instead.  Returns the
 * URL to use (*copy: malloc'd when it had to be copied). */
static const char *
push_url_from_argv(char *arg, char **copy)
{
	char *host = strstr(arg, "://");
	if (!host)
		return arg;
	host += 3;
	size_t hostlen = strcspn(host, "/?#");
	char *at = memchr(host, '@', hostlen);
	if (!at)
		return arg;
	free(*copy);
	*copy = strdup(arg);
	if (!*copy)
		error_msg_and_die("out of memory");
	/* "scheme://" then what followed the '@'; the freed tail zeroed. */
	size_t cut = (size_t)(at + 1 - host), len = strlen(at + 1);
	memmove(host, at + 1, len + 1);
	memset(host + len, 0, cut);
	error_msg("warning: --push: credentials in the URL are visible to every user of the "
		  "host while stackspy starts (ps); use STACKSPY_PUSH_AUTH=USER:PASSWORD or "
		  "--push-auth-file FILE");
	return *copy;
}

/* record's own long options (after the common ones, options.h). */
enum { OPT_THREADS = OPT_COMMAND_FIRST, OPT_INLINE, OPT_CHECKPOINT, OPT_PUSH,
       OPT_PUSH_EVERY, OPT_PUSH_TIMEOUT, OPT_APP, OPT_LABEL, OPT_PUSH_AUTH_FILE };

/* The --push options (c, its argument arg) into o->push, each checked
 * as it comes; that they go together is check_options's. */
static void
push_option(struct record_options *o, int c, char *arg)
{
	long v;

	switch (c) {
	case OPT_PUSH:
#if !defined(HAVE_LIBCURL) || !defined(HAVE_PROTOBUF_C)
		error_msg_and_help("record", "--push needs libcurl and protobuf-c: stackspy was built without them");
#endif
		if (strncmp(arg, "http://", 7) != 0 && strncmp(arg, "https://", 8) != 0)
			error_msg_and_help("record", "invalid --push argument: '%s' (an http:// or https:// URL)",
					   arg);
		o->push.url = push_url_from_argv(arg, &o->push.url_copy);
		break;
	case OPT_PUSH_AUTH_FILE:
		o->push.auth_file = arg;
		break;
	case OPT_PUSH_EVERY:
		if (sampler_parse_long(arg, 1, 3600, &v) < 0)
			error_msg_and_help("record", "invalid --push-every argument: '%s' (1 to 3600 seconds)",
					   arg);
		o->push.every = (unsigned)v;
		break;
	case OPT_PUSH_TIMEOUT:
		if (sampler_parse_long(arg, 1, 600, &v) < 0)
			error_msg_and_help("record", "invalid --push-timeout argument: '%s' (1 to 600 seconds)",
					   arg);
		o->push.timeout = (unsigned)v;
		break;
	case OPT_APP:
		if (!valid_push_name(arg, false))
			error_msg_and_help("record", "invalid --app argument: '%s' (letters, digits, '.', '-', '_')",
					   arg);
		o->push.app = arg;
		break;
	case OPT_LABEL: {
		const char *eq = strchr(arg, '=');
		if (!eq || eq == arg || !valid_push_name(arg, true) || !valid_push_name(eq + 1, false))
			error_msg_and_help("record", "invalid --label argument: '%s' (KEY=VALUE)", arg);
		const char **nl = realloc(o->push.labels, (o->push.nlabels + 1) * sizeof(*nl));
		if (!nl)
			error_msg_and_die("out of memory");
		nl[o->push.nlabels++] = arg;
		o->push.labels = nl;
		break;
	}
	}
}

/* The options that depend on one another, once all are read: --kernel
 * with --idle, the format from the output's name, the engine, and the
 * --push family with its defaults. */
static void
check_options(struct record_options *o)
{
	if (!o->format_given && o->output)
		o->format = format_of_output(o->output);
	if (o->format == FORMAT_PPROF) {
#ifndef HAVE_PROTOBUF_C
		error_msg_and_help("record", "-f pprof needs protobuf-c: stackspy was built without it");
#endif
		/* The thread roots become each sample's labels. */
		o->cfg.threads = true;
	}
	sampler_check_engine_or_help("record", o->cfg.engine);
	if (!o->push.url && (o->push.every || o->push.timeout || o->push.app || o->push.nlabels ||
			     o->push.auth_file))
		error_msg_and_help("record", "--push-every, --push-timeout, --push-auth-file, --app and "
				   "--label go with --push");
	if (o->push.url) {
		if (!o->push.every)
			o->push.every = DEFAULT_PUSH_EVERY;
		if (!o->push.timeout)
			o->push.timeout = DEFAULT_PUSH_TIMEOUT;
		/* No --app: the command's name, or (NULL) the process's. */
		if (!o->push.app && o->cfg.argv)
			o->push.app = push_app_default(o->cfg.argv[0]);
		/* Labels in the profile come from the thread roots. */
		o->cfg.threads = true;
	}
}

static void
parse_options(int argc, char **argv, struct record_options *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "engine", required_argument, NULL, 'e' },
		{ "max-depth", required_argument, NULL, 'm' },
		{ "threads", no_argument, NULL, OPT_THREADS },
		{ "idle", no_argument, NULL, OPT_IDLE },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "subprocesses", no_argument, NULL, OPT_SUBPROCESSES },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "inline", no_argument, NULL, OPT_INLINE },
		{ "checkpoint", required_argument, NULL, OPT_CHECKPOINT },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "push-every", required_argument, NULL, OPT_PUSH_EVERY },
		{ "push-timeout", required_argument, NULL, OPT_PUSH_TIMEOUT },
		{ "app", required_argument, NULL, OPT_APP },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "push-auth-file", required_argument, NULL, OPT_PUSH_AUTH_FILE },
		{ "keep-running", no_argument, NULL, OPT_KEEP_RUNNING },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct common_options co = { .cmd = "record" };
	int c;

	sampler_common_options_init(&o->cfg);
	o->checkpoint = DEFAULT_CHECKPOINT;
	/* '+': options end at the command's name. */
	while ((c = sampler_target_getopt("record", argc, argv, "+:p:r:F:d:o:f:e:m:qVh", longopts,
				  &o->cfg)) != -1) {
		if (sampler_common_option(&co, c, optarg, &o->cfg))
			continue;
		switch (c) {
		case 'd':
			if (sampler_parse_seconds(optarg, DBL_MIN, 1e7, &o->duration) < 0)
				error_msg_and_help("record", "invalid --duration argument: '%s' (above 0; "
						   SECONDS_FORM ")", optarg);
			break;
		case 'o':
			if (!*optarg)
				error_msg_and_help("record", "invalid --output argument: ''");
			o->output = optarg;
			break;
		case 'f':
			if (parse_format(optarg, &o->format) < 0)
				error_msg_and_help("record", "invalid --format argument: '%s' (folded, svg, speedscope or pprof)",
						   optarg);
			o->format_given = true;
			break;
		case OPT_THREADS:
			o->cfg.threads = true;
			o->threads_asked = true;
			break;
		case OPT_CHECKPOINT:
			if (sampler_parse_seconds(optarg, 0, 1e7, &o->checkpoint) < 0 ||
			    (o->checkpoint > 0 && o->checkpoint < 1))
				error_msg_and_help("record", "invalid --checkpoint argument: '%s' (0, or at "
						   "least 1; " SECONDS_FORM ")", optarg);
			break;
		case OPT_INLINE:
			sampler_need_libdw_or_help("record", "--inline");
			o->cfg.inline_frames = true;
			break;
		case OPT_PUSH: case OPT_PUSH_AUTH_FILE: case OPT_PUSH_EVERY: case OPT_PUSH_TIMEOUT:
		case OPT_APP: case OPT_LABEL:
			push_option(o, c, optarg);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			record_usage(stdout);
			exit(0);
		default:
			sampler_option_error_and_help("record", c, argv, longopts);
		}
	}
	sampler_parse_target_or_help("record", "record", argc, argv, &o->cfg);
	sampler_keep_running_or_help("record", &o->cfg);
	check_options(o);
}

static int
write_pprof(FILE *out, const struct record_options *o, struct profiler *p)
{
	struct profiler_stats snap;
	profiler_stats_snapshot(p, &snap);
	const struct profiler_stats *st = &snap;
	int64_t duration = (int64_t)(st->elapsed_s * (double)NS_PER_SEC);
	int64_t end = (int64_t)ptrace_clock_realtime_ns();
	void *buf;
	size_t len;
	int r = profiler_encode_pprof(p, &o->cfg, NULL, 0, end - duration, duration, &buf, &len);
	if (r < 0)
		return r;
	if (fwrite(buf, 1, len, out) != len)
		r = -errno;
	free(buf);
	return r;
}

/* The folded, SVG or speedscope output of c. */
static int
write_collapsed(FILE *out, const struct record_options *o, struct profiler *p,
		const struct collapse *c)
{
	struct profiler_stats snap;
	profiler_stats_snapshot(p, &snap);  /* maybe on the unwinder's thread */
	const struct profiler_stats *st = &snap;
	char title[160], subtitle[320], honest[160] = "";
	const char *what = o->cfg.idle ? "wall-clock" : "on-CPU";

	if (o->cfg.argv)
		snprintf(title, sizeof(title), "%s (%s)", o->cfg.argv[0], what);
	else if (o->cfg.npids == 1)
		snprintf(title, sizeof(title), "%s, pid %d (%s)", profiler_comm(p),
			 (int)o->cfg.pids[0], what);
	else
		snprintf(title, sizeof(title), "%d processes (%s)", o->cfg.npids, what);
	/* What the profile stands for: the rate achieved, not the one asked,
	 * and what the on-CPU rule left out. */
	if (!o->cfg.idle)
		snprintf(honest, sizeof(honest), "; %llu stops not on-CPU, %llu skipped",
			 (unsigned long long)profiler_stats_not_oncpu(st),
			 (unsigned long long)st->skipped);
	switch (o->format) {
	case FORMAT_FOLDED:
		return collapse_write_folded(c, out);
	case FORMAT_SVG: {
		struct collapse_svg_options so;
		collapse_svg_options_init(&so);
		snprintf(subtitle, sizeof(subtitle),
			 "%llu samples at %.1f Hz (asked %.0f) over %.1f s%s, engine %s, stackspy %s",
			 (unsigned long long)st->samples, profiler_stats_rate(st), o->cfg.rate_hz,
			 st->elapsed_s, honest, unwind_engine_name(o->cfg.engine), PACKAGE_VERSION);
		so.title = title;
		so.subtitle = subtitle;
		return collapse_write_svg(c, &so, out);
	}
	case FORMAT_SPEEDSCOPE:
		/* speedscope shows the profile's name: the same facts there. */
		snprintf(subtitle, sizeof(subtitle), "%s: %llu samples at %.1f Hz (asked %.0f) over %.1f s%s",
			 title, (unsigned long long)st->samples, profiler_stats_rate(st),
			 o->cfg.rate_hz, st->elapsed_s, honest);
		return collapse_write_speedscope(c, subtitle, out);
	case FORMAT_PPROF:
		break;
	}
	return -EINVAL;
}

static int
write_output_locked(FILE *out, const struct record_options *o, struct profiler *p)
{
	if (o->format == FORMAT_PPROF)
		return write_pprof(out, o, p);
	/* The thread roots that --push records for its labels are left out
	 * unless --threads was given. */
	if (!o->cfg.threads || o->threads_asked)
		return write_collapsed(out, o, p, profiler_stacks(p));
	struct collapse *own = collapse_without_level(profiler_stacks(p),
						      profiler_thread_root_level(p));
	if (!own)
		return -ENOMEM;
	int r = write_collapsed(out, o, p, own);
	collapse_free(own);
	return r;
}

static int
write_output(FILE *out, const struct record_options *o, struct profiler *p)
{
	profiler_stacks_lock(p);
	int r = write_output_locked(out, o, p);
	profiler_stacks_unlock(p);
	return r;
}

/* --checkpoint: the profile so far replaces FILE, through a temporary file
 * of its own, so that a stackspy killed in a long recording leaves the
 * last one (tests/record-crash.test).  Written by the unwinder
 * (profiler_call_in_unwinder), with every sample taken before it: the
 * tracer goes on meanwhile.  A failure is said once and recording goes
 * on; the final write will say it too. */
static void
write_checkpoint(struct profiler *p, void *arg)
{
	const struct record_options *o = arg;
	static bool failed;
	struct out_file cp;
	int r = sampler_out_file_open(&cp, o->output, NULL, 0);

	if (r == 0) {
		r = write_output(cp.f, o, p);
		if (r == 0)
			r = sampler_out_file_commit(&cp);
		else
			sampler_out_file_discard(&cp);
	}
	if (r < 0 && !failed) {
		perror_msg(r, "warning: cannot write checkpoint to %s", o->output);
		failed = true;
	}
}

/* The watchdog is about to kill a stuck stackspy (ptrace/watchdog.c): the
 * profile so far replaces FILE, as a checkpoint does, from the unwinder's
 * thread (the tracer is the one stuck). */
static void
rescue_output(struct profiler *p, void *arg)
{
	const struct record_options *o = arg;
	write_checkpoint(p, arg);
	error_msg("stackspy is stuck and its watchdog ends it: the profile so far is in %s",
		  o->output);
}

/* Sample until the duration, a signal, or the targets' end, with
 * checkpoints when writing to a regular file and progress lines on a
 * terminal: profiler_run in slices that end at each. */
static void
record_run(const struct record_options *o, const struct out_file *out, struct profiler *p)
{
	bool checkpoints = o->output && !out->in_place && o->checkpoint > 0;
	bool progress = sampler_feedback_progress_wanted(&o->cfg);
	double next_checkpoint = o->checkpoint;

	for (;;) {
		double until = o->duration;  /* 0: no end */
		if (checkpoints && (until == 0 || next_checkpoint < until))
			until = next_checkpoint;
		if (progress) {
			double second = floor(profiler_stats(p)->elapsed_s) + 1;
			if (until == 0 || second < until)
				until = second;
		}
		profiler_run(p, until);
		/* Ended before until: a signal, or no target left. */
		if (until == 0 || stop_signal || profiler_stats(p)->elapsed_s < until ||
		    until == o->duration)
			return;
		if (checkpoints && until >= next_checkpoint) {
			profiler_call_in_unwinder(p, write_checkpoint, (void *)o);
			next_checkpoint += o->checkpoint;
		}
		if (progress)
			sampler_feedback_progress(p, &o->cfg, o->duration);
	}
}

/* The end line: the file written and how to look at it. */
static void
report_written(const char *path, enum record_format f)
{
	char how[512];
	switch (f) {
	case FORMAT_SVG:
		snprintf(how, sizeof(how), "open it in a browser");
		break;
	case FORMAT_SPEEDSCOPE:
		snprintf(how, sizeof(how), "open it in https://www.speedscope.app");
		break;
	case FORMAT_PPROF:
		snprintf(how, sizeof(how), "go tool pprof -http=: %s", path);
		break;
	default:
		snprintf(how, sizeof(how), "folded stacks: flamegraph.pl %s > flame.svg, "
			 "or open it in https://www.speedscope.app", path);
		break;
	}
	sampler_feedback_wrote(path, how);
}

/* -p targets that exited while recorded: said, for a recording that ends
 * early with them is otherwise a mystery (a command started here has
 * profiler_report_command). */
static void
report_exited_targets(struct profiler *p, const struct record_options *o)
{
	if (o->cfg.argv)
		return;
	size_t n = profiler_process_count(p), gone = 0;
	for (size_t i = 0; i < n; i++) {
		if (!profiler_process_exited(p, i))
			continue;
		gone++;
		error_msg("%s (pid %d) exited during the recording", profiler_process_comm(p, i),
			  (int)profiler_process_pid(p, i));
	}
	const struct profiler_stats *st = profiler_stats(p);
	if (!gone || gone < n || stop_signal)
		return;
	if (o->duration > 0 && st->elapsed_s < o->duration)
		error_msg("the recording ended with %s, after %.1f s of the %g s asked",
			  n == 1 ? "it" : "them", st->elapsed_s, o->duration);
	else if (o->duration == 0)
		error_msg("the recording ended with %s, after %.1f s", n == 1 ? "it" : "them",
			  st->elapsed_s);
}

int
sampler_cmd_record(int argc, char **argv)
{
	struct record_options o;
	memset(&o, 0, sizeof(o));
	parse_options(argc, argv, &o);

	/* Before attaching: a bad path must not cost the target anything.
	 * Until the end the output goes to a temporary file: an existing
	 * FILE keeps its contents if nothing gets recorded or stackspy is
	 * killed (sampler/out-file.c). */
	if (o.push.url && sampler_push_load_auth(&o.push) < 0) {
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	struct out_file out;
	if (sampler_out_file_open_or_say(&out, o.output, !o.push.url) < 0) {
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	sampler_info_init(o.quiet);
	struct profiler *p;
	int r = profiler_start(&o.cfg, &p);
	if (r < 0) {
		sampler_out_file_discard(&out);
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	/* The tracer thread only traces (DESIGN.md). */
	if (o.output && !out.in_place && !o.push.url)
		profiler_set_rescue(p, rescue_output, &o);
	r = profiler_unwind_in_background(p);
	if (r < 0)
		perror_msg(r, "warning: cannot start the unwinder's thread: unwinding between ticks");
	sampler_feedback_start(p, &o.cfg, o.duration);
	int push_r = 0;
	if (o.push.url)
		push_r = sampler_push_record(p, &o.cfg, &o.push, o.duration);
	else
		record_run(&o, &out, p);
	if (!stop_signal)
		profiler_take_deferred(p);
	sampler_status_line_clear();
	sampler_feedback_sampling_ended(p);
	profiler_stop(p);
	/* Detached first: every signal reaches the command. */
	profiler_end_command(p);
	sampler_cleanup_release_before_output();

	int rc = 0;
	/* --push without -o: the server has it all. */
	bool wrote_file = o.output && !out.in_place;
	r = o.push.url && !o.output ? 0 : write_output(out.f, &o, p);
	if (r == 0)
		r = sampler_out_file_commit(&out);
	else
		sampler_out_file_discard(&out);
	if (r < 0) {
		sampler_out_file_write_error(r, o.output);
		rc = EXIT_FATAL;
	}
	profiler_print_summary(p, &o.cfg);
	profiler_report_command(p);
	report_exited_targets(p, &o);
	if (rc == 0 && push_r < 0)
		rc = EXIT_FATAL;
	if (rc == 0 && push_r > 0)
		rc = EXIT_PARTIAL;
	if (rc == 0 && o.cfg.npids > 1 && profiler_attached_count(p) < (size_t)o.cfg.npids)
		rc = EXIT_PARTIAL;
	/* Threads left out: the profile is not the whole process. */
	size_t refused = profiler_refused_threads(p);
	if (refused)
		error_msg("%zu thread%s could not be traced (another tracer): not in the profile",
			  refused, refused == 1 ? "" : "s");
	if (rc == 0 && (refused || profiler_stats(p)->errors[PROF_ERR_PROCFS] ||
			profiler_stats(p)->not_unwound || profiler_stats_mostly_lost(profiler_stats(p))))
		rc = EXIT_PARTIAL;
	if (r == 0 && wrote_file)
		report_written(o.output, o.format);
	sampler_feedback_hints(p, &o.cfg);
	profiler_free(p);
	free(o.cfg.pids);
	free(o.push.labels);
	free(o.push.url_copy);
	free(o.push.userpwd);
	return rc;
}
