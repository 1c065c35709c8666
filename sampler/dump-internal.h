/* sampler/dump-internal.h - the pieces of `stackspy dump`, shared by its
 * files only (sampler.h has its public face, sampler_cmd_dump).
 *
 *   cmd-dump.c    the command: usage, options, --subprocesses, the JSON
 *                 array around several processes; calls the two below
 *   dump-live.c   a running process: attach, sample its threads (those in
 *                 D unstopped, with their kernel stack), detach, unwind
 *                 (a second thread meanwhile), print (dump_one)
 *   dump-core.c   a core file instead (dump_core)
 *
 * One way only: cmd-dump.c calls dump-live.c and dump-core.c, which call
 * neither each other nor it back (tests/layering.test).
 */
#ifndef STACKSPY_DUMP_INTERNAL_H
#define STACKSPY_DUMP_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "sampler/output.h"
#include "sampler/profiler.h"

/* --timeout's default: a dump of 20,000 threads unwinds in about 2 s. */
#define DUMP_DEFAULT_TIMEOUT 10.0

struct dump_options {
	struct profiler_config cfg;  /* the options shared with record and top:
					pids, engine, max_depth, sym_flags,
					kernel (every thread's kernel stack),
					subprocesses (as they are now) */
	pid_t tid;                /* 0: all threads */
	enum output_format format;
	const char *core;         /* --core: dump this core file instead */
	const char *exe;          /* --exe (with --core) */
	const char *sysroot;      /* --sysroot (with --core) */
	bool group;               /* --group: each distinct stack once */
	bool consistent;          /* --consistent: every thread stopped together */
	bool follow;              /* --follow: into the processes at the other
				     ends of the waits */
	int ngiven;               /* pids[0, ngiven) were given; the rest are
				     descendants (their exit is no error) */
	double timeout;           /* --timeout: seconds the unwinding of a
				     process may take after its last copy */
	const char *output;       /* -o FILE; NULL: standard output */
	FILE *out;                /* where the dump goes: stdout or -o's file */
	struct wait_graph *graph; /* --follow: the waits of every process
				     dumped go here (sampler/follow.c) */
};

/* Dump process pid (a TID: that thread of its process) to o->out, adding
 * to *partial when some thread could not be sampled.  Writes before (the
 * JSON array's separator, or "") just before its output, and then sets
 * *begun.  Returns 0 or a negative errno (already reported). */
int dump_one(const struct dump_options *o, pid_t pid, bool *partial, const char *before,
	     bool *begun);

/* dump --core: the same output from o->core.  Returns 0 or a negative
 * errno (already reported). */
int dump_core(const struct dump_options *o, bool *partial);

#endif
