/* sampler/cmd-dump.c - `stackspy dump`: one-shot stacks of every thread.
 *
 * The command: its options, --subprocesses, the JSON array around several
 * processes.  The sampling of a live process is sampler/dump-live.c's, a
 * core file's sampler/dump-core.c's (sampler/dump-internal.h).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "sampler/dump-internal.h"
#include "sampler/follow.h"
#include "sampler/error.h"
#include "sampler/options.h"
#include "sampler/out-file.h"
#include "sampler/output.h"
#include "sampler/sampler.h"

static void
dump_usage(FILE *f)
{
	/* A format, for the default depth: a literal % here is written %%. */
	fprintf(f, "Usage: stackspy dump [-p] PID[,PID...] [PID...] [OPTIONS]\n"
	           "       stackspy dump --core FILE [--exe FILE] [--sysroot DIR] [OPTIONS]\n"
	           "Print the stack of every thread of a running process, once: attach,\n"
	           "stop each thread just long enough to copy its registers and stack,\n"
	           "detach, then unwind and print.  The process keeps running (a process\n"
	           "that was stopped with SIGSTOP stays stopped).\n"
	           "\n"
	           "Target:\n"
	           "  -p, --pid PID[,PID...]  process(es) to dump; PIDs may also be given as\n"
	           "                          arguments, separately or as comma lists, any number\n"
	           "  -t, --tid TID           only this thread\n"
	           "      --core FILE         a core file (kernel core dump or gcore output)\n"
	           "                          instead of a process; no PID then\n"
	           "      --exe FILE          with --core: the executable, when the one the\n"
	           "                          core names is not at that path here\n"
	           "      --sysroot DIR       with --core: look for the core's files under DIR\n"
	           "                          (the container's or the other machine's root)\n"
	           "\n"
	           "Unwinding:\n"
	           "  -e, --engine ENGINE     auto (default: DWARF CFI where the code has it,\n"
	           "                          frame pointers elsewhere), cfi, fp, mips\n"
	           "  -m, --max-depth N       at most N frames per thread (default %d, 0: no limit)\n"
	           "      --timeout SECONDS   give up unwinding a process SECONDS after its last\n"
	           "                          thread was copied (default %g): threads not done\n"
	           "                          are printed as far as they got, frames of files\n"
	           "                          not read yet as module+offset; exit status 1\n"
	           "\n"
	           "Output:\n"
	           "  -f, --format FORMAT     text (default) or json\n"
	           "  -o, --output FILE       write here (default: standard output); complete or\n"
	           "                          not at all, as record -o (same rules as root)\n"
	           "      --no-demangle       print C++/Rust symbols as they are in the binary\n"
	           "      --source            source file:line of each frame, and the functions\n"
	           "                          inlined at its address as frames of their own\n"
	           "                          (\"[inlined]\"), from the debug information\n"
	           "      --kernel            also the kernel stack of every thread\n"
	           "                          (/proc/TID/stack, root only); threads blocked\n"
	           "                          in uninterruptible sleep (D) always get theirs\n"
	           "      --group             each distinct stack once, with how many threads\n"
	           "                          share it and which, most common first\n"
	           "      --consistent        keep every thread stopped until all are copied\n"
	           "                          (one instant, as gdb; each thread is then stopped\n"
	           "                          for the whole sampling; default: only until its\n"
	           "                          own copy and the one before it)\n"
	           "      --python=MODE       CPython 3.11+ frames (file:line) where the eval\n"
	           "                          loop runs them: on (default), beside (and keep the\n"
	           "                          _PyEval_EvalFrameDefault frame), off (native only)\n"
	           "      --no-debuginfod     do not fetch missing debug files from the servers\n"
	           "                          of DEBUGINFOD_URLS (default: fetched, at most\n"
	           "                          DEBUGINFOD_TIMEOUT seconds, default 5, a module)\n"
	           "      --subprocesses      also every process below the given ones (their\n"
	           "                          children, grandchildren...) as they are now\n"
	           "      --follow            follow each wait into the process at its other end\n"
	           "                          (a pipe's writer, a socket's peer, a child, a\n"
	           "                          mutex's owner), dump it too, and print the chains\n"
	           "                          and the cycles across processes (at most 64)\n"
	           "  -h, --help              show this help\n"
	           "  -V, --version           show the version\n"
	           "\n"
	           "Threads that cannot stop (state D, e.g. in vfork or on a hung disk)\n"
	           "are not stopped: their user stack is read while they stay blocked,\n"
	           "from the sp and pc in /proc/TID/syscall, and shown with their kernel\n"
	           "stack and wchan.  Threads blocked in pthread_mutex_lock are shown with\n"
	           "the mutex and its owner; wait-for cycles are printed first as deadlocks.\n"
	           "\n"
	           "Exit status: 0 success, 1 partial (some threads could not be sampled or\n"
	           "unwound in time; output still written), 2 fatal error (nothing written),\n"
	           "64 usage error.\n"
	           "\n"
	           "Examples:\n"
	           "  stackspy dump $(pidof myservice)         every thread's stack (a hang)\n"
	           "  stackspy dump --group PID                1000 identical threads as one stack\n"
	           "  stackspy dump -f json -o stacks.json PID  for scripts, into a file\n"
	           "  stackspy dump --kernel --source PID      kernel frames and file:line too\n"
	           "  stackspy dump --follow PID               who waits for whom, across processes:\n"
	           "      Waits across processes:\n"
	           "        chain 1: thread 19131 (yes) of process 19131 (yes) writes pipe:[18028448]\n"
	           "          -> read by thread 19132 (tr) of process 19132 (tr) writes pipe:[18028449]\n"
	           "          -> read by process 19133 (cat): no thread of it waits on anything\n"
	           "             known (stopped)\n"
	           "  stackspy dump --core core.1234           a core file instead of a process\n",
	           DEFAULT_MAX_DEPTH, DUMP_DEFAULT_TIMEOUT);
}

static void
parse_options(int argc, char **argv, struct dump_options *o)
{
	enum { OPT_CORE = OPT_COMMAND_FIRST, OPT_EXE, OPT_SYSROOT, OPT_SOURCE, OPT_GROUP,
	       OPT_CONSISTENT, OPT_TIMEOUT, OPT_FOLLOW };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "engine", required_argument, NULL, 'e' },
		{ "max-depth", required_argument, NULL, 'm' },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "source", no_argument, NULL, OPT_SOURCE },
		{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "core", required_argument, NULL, OPT_CORE },
		{ "exe", required_argument, NULL, OPT_EXE },
		{ "sysroot", required_argument, NULL, OPT_SYSROOT },
		{ "kernel", no_argument, NULL, OPT_KERNEL },
		{ "group", no_argument, NULL, OPT_GROUP },
		{ "consistent", no_argument, NULL, OPT_CONSISTENT },
		{ "subprocesses", no_argument, NULL, OPT_SUBPROCESSES },
		{ "follow", no_argument, NULL, OPT_FOLLOW },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct common_options co = { .cmd = "dump", .depth_zero_ok = true };
	long v;
	int c;

	sampler_common_options_init(&o->cfg);
	o->format = OUTPUT_TEXT;
	o->timeout = DUMP_DEFAULT_TIMEOUT;
	while ((c = getopt_long(argc, argv, ":p:t:f:o:e:m:Vh", longopts, NULL)) != -1) {
		if (sampler_common_option(&co, c, optarg, &o->cfg))
			continue;
		switch (c) {
		case 't':
			if (sampler_parse_long(optarg, 1, INT_MAX, &v) < 0)
				error_msg_and_help("dump", "invalid --tid argument: '%s'", optarg);
			o->tid = (pid_t)v;
			break;
		case 'f':
			if (strcmp(optarg, "text") == 0)
				o->format = OUTPUT_TEXT;
			else if (strcmp(optarg, "json") == 0)
				o->format = OUTPUT_JSON;
			else
				error_msg_and_help("dump", "invalid --format argument: '%s' (text or json)", optarg);
			break;
		case 'o':
			if (!*optarg)
				error_msg_and_help("dump", "invalid --output argument: ''");
			o->output = optarg;
			break;
		case OPT_SOURCE:
			sampler_need_libdw_or_help("dump", "--source");
			o->cfg.sym_flags |= OUTPUT_SOURCE;
			break;
		case OPT_CORE:
			o->core = optarg;
			break;
		case OPT_TIMEOUT:
			if (sampler_parse_double(optarg, 0.001, 86400, &o->timeout) < 0)
				error_msg_and_help("dump", "invalid --timeout argument: '%s' (seconds, "
						   "0.001 to 86400)", optarg);
			break;
		case OPT_EXE:
			o->exe = optarg;
			break;
		case OPT_SYSROOT:
			o->sysroot = optarg;
			break;
		case OPT_CONSISTENT:
			o->consistent = true;
			break;
		case OPT_FOLLOW:
			o->follow = true;
			break;
		case OPT_GROUP:
			o->group = true;
			o->cfg.sym_flags |= OUTPUT_GROUP;
			break;
		case 'h':
			dump_usage(stdout);
			exit(0);
		default:
			sampler_option_error_and_help("dump", c, argv, longopts);
		}
	}
	/* PIDs as arguments too: stackspy dump $(pidof nginx). */
	while (optind < argc)
		sampler_pid_list_append_or_die("dump", argv[optind++], &o->cfg.pids, &o->cfg.npids);
	if ((o->exe || o->sysroot) && !o->core)
		error_msg_and_help("dump", "--%s needs --core", o->exe ? "exe" : "sysroot");
	if (o->core) {
		if (o->cfg.npids)
			error_msg_and_help("dump", "--core takes no PID");
		/* Engines are checked against the core's architecture
		 * once it is open (--engine mips reads MIPS cores here). */
		return;
	}
	if (!o->cfg.npids)
		error_msg_and_help("dump", "no process given: stackspy dump PID");
	sampler_check_engine_or_help("dump", o->cfg.engine);
	if (o->tid && o->cfg.npids > 1)
		error_msg_and_help("dump", "--tid needs a single PID");
	if (o->tid && o->cfg.subprocesses)
		error_msg_and_help("dump", "--tid and --subprocesses cannot be combined");
	if (o->tid && o->follow)
		error_msg_and_help("dump", "--tid and --follow cannot be combined");
	o->ngiven = o->cfg.npids;
}

/* Append pid to the processes to dump, unless it is there.  0, or
 * -ENOMEM. */
static int
add_pid(struct dump_options *o, pid_t pid)
{
	for (int j = 0; j < o->cfg.npids; j++)
		if (o->cfg.pids[j] == pid)
			return 0;
	pid_t *nv = realloc(o->cfg.pids, (size_t)(o->cfg.npids + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	o->cfg.pids = nv;
	o->cfg.pids[o->cfg.npids++] = pid;
	return 0;
}

/* --subprocesses: append the descendants of the given processes (each
 * once), as the process tree is now. */
static void
add_descendants(struct dump_options *o)
{
	for (int i = 0; i < o->ngiven; i++) {
		pid_t *below = NULL;
		int n = ptrace_descendants(o->cfg.pids[i], &below);
		for (int k = 0; k < n && add_pid(o, below[k]) == 0; k++)
			;
		free(below);
	}
}

/* Several PIDs with --format json: one JSON array of the process objects
 * (a single PID stays one object, as DESIGN.md specifies).  What goes
 * before the next object, which dump_one writes just before its output
 * (nothing when it has none to write). */
static int json_objects;

static const char *
json_array_next(const struct dump_options *o)
{
	if (o->format == OUTPUT_JSON && o->graph)
		return json_objects ? "," : "";
	if (o->format == OUTPUT_JSON && o->cfg.npids > 1)
		return json_objects ? "," : "[";
	return "";
}

/* Why a process a wait leads to was not dumped (in buf when it says who
 * holds it). */
static const char *
follow_why(pid_t pid, int r, char *buf, size_t len)
{
	switch (r) {
	case -EPERM:
	case -EACCES:
		return ptrace_explain_eperm(pid, buf, len);
	case -ESRCH:
		return "it exited";
	case -EBUSY:
		return "another tracer holds it";
	default:
		return strerror(-r);
	}
}

/* --follow: the processes at the other end of the waits dumped so far,
 * appended to the list (FOLLOW_MAX_PROCS in all). */
static void
follow_more(struct dump_options *o)
{
	pid_t next[FOLLOW_MAX_PROCS];
	int room = FOLLOW_MAX_PROCS - o->cfg.npids;
	size_t n = room > 0 ? dump_follow_next(o->graph, next, (size_t)room) : 0;
	for (size_t k = 0; k < n; k++)
		if (add_pid(o, next[k]) < 0)
			error_msg_and_die("out of memory");
}

/* The end of a dump: standard output flushed, or -o's file committed
 * (nothing written: FILE left as it was).  Returns exit status rc, or
 * EXIT_FATAL when the output could not be written. */
static int
dump_finish(struct out_file *of, int rc)
{
	int r = 0;
	if (!of->path) {
		if (fflush(stdout) != 0)
			r = -errno;
	} else if (rc == EXIT_FATAL) {
		sampler_out_file_discard(of);
		return rc;
	} else {
		r = sampler_out_file_commit(of);
	}
	if (r < 0) {
		sampler_out_file_write_error(r, of->path);
		return EXIT_FATAL;
	}
	return rc;
}

int
sampler_cmd_dump(int argc, char **argv)
{
	struct dump_options o;
	memset(&o, 0, sizeof(o));
	parse_options(argc, argv, &o);

	/* Before attaching: a bad path must not cost the target anything. */
	struct out_file of;
	if (sampler_out_file_open_or_say(&of, o.output, true) < 0) {
		free(o.cfg.pids);
		return EXIT_FATAL;
	}
	o.out = of.f;
	/* Written at the end, all at once: in 256 KiB writes, not stdio's
	 * 4 KiB (a 1000-thread JSON dump was 534 write calls, a millisecond
	 * and more of its output).  A terminal stays line-buffered. */
	static char out_buf[256 * 1024];
	if (!isatty(fileno(o.out)))
		setvbuf(o.out, out_buf, _IOFBF, sizeof(out_buf));

	int failed = 0;
	bool partial = false;
	if (o.core) {
		failed = dump_core(&o, &partial) < 0;
		return dump_finish(&of, failed ? EXIT_FATAL : partial ? EXIT_PARTIAL : 0);
	}
	if (o.cfg.subprocesses)
		add_descendants(&o);
	/* --follow: the processes' output is held until the chains, which
	 * go first, are known. */
	FILE *real_out = o.out;
	char *held = NULL;
	size_t held_len = 0;
	if (o.follow) {
		o.graph = dump_follow_new();
		if (!(o.out = open_memstream(&held, &held_len)))
			error_msg_and_die("out of memory");
		if (o.format == OUTPUT_JSON)
			fputs("{\"processes\": [", o.out);
	}
	for (int i = 0; i < o.cfg.npids; i++) {
		/* A descendant that exited since the tree was read is no
		 * error: it is not there to dump. */
		if (i >= o.ngiven && kill(o.cfg.pids[i], 0) < 0 && errno == ESRCH)
			continue;
		if (i > 0 && o.format == OUTPUT_TEXT)
			putc('\n', o.out);
		const char *before = json_array_next(&o);
		bool begun = false;
		int r = dump_one(&o, o.cfg.pids[i], &partial, before, &begun);
		if (r < 0)
			failed++;
		if (begun && (*before || o.graph))
			json_objects++;
		if (o.graph) {
			if (r < 0)
			{
				char why[256];
				dump_follow_skip(o.graph, o.cfg.pids[i],
						 follow_why(o.cfg.pids[i], r, why, sizeof(why)));
			}
			else if (i < o.ngiven)
				dump_follow_given(o.graph, o.cfg.pids[i]);
			follow_more(&o);
		}
	}
	dump_waits_done();
	if (o.graph) {
		if (o.format == OUTPUT_JSON)
			fputs("]", o.out);
		fclose(o.out);
		o.out = real_out;
		if (o.format == OUTPUT_TEXT) {
			dump_follow_print(o.out, o.format, o.graph);
			fwrite(held, 1, held_len, o.out);
		} else {
			fwrite(held, 1, held_len, o.out);
			dump_follow_print(o.out, o.format, o.graph);
			fputs("}\n", o.out);
		}
		free(held);
		dump_follow_free(o.graph);
		json_objects = 0;
	}
	int npids = o.cfg.npids;
	free(o.cfg.pids);
	if (json_objects)
		fputs("]\n", o.out);
	if (failed == npids)
		return dump_finish(&of, EXIT_FATAL);
	return dump_finish(&of, failed || partial ? EXIT_PARTIAL : 0);
}
