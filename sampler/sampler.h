/* sampler/sampler.h - sampler/'s public entry: the commands.
 *
 * sampler/ owns the command layer: main(), the command line, the sampling
 * loop behind record and top (ticks, the thread table, frame naming,
 * statistics), the dump, record and top commands and their output files,
 * and every line stackspy writes on standard error.  It is the only code
 * allowed to exit, and only after detaching every tracee.  It may call
 * every module below it: ui/, collapse/, unwind/, ptrace/, arch/, base/;
 * none of them calls it.  This header is for sampler/main.c (and the
 * cmd-*.c files that define the commands).
 *
 * The files of sampler/ share their jobs through headers of their own:
 *   sampler/error.h     the printers and exit codes (error.c)
 *   sampler/signals.h   the stop signals (signals.c)
 *   sampler/options.h   the options every command shares (options.c)
 *   sampler/profiler.h  the sampling loop behind record and top
 *                       (profiler.c and the files of profiler-internal.h)
 *   sampler/feedback.h  lines for a person at a terminal (feedback.c)
 *   sampler/push.h      record --push (push.c)
 *   sampler/output.h    what dump prints (output.c, locks.c)
 *   sampler/out-file.h  an output file complete or absent (out-file.c)
 * and two private groups: sampler/profiler-internal.h, sampler/dump-internal.h.
 */
#ifndef STACKSPY_SAMPLER_H
#define STACKSPY_SAMPLER_H

int sampler_cmd_dump(int argc, char **argv);
int sampler_cmd_record(int argc, char **argv);
int sampler_cmd_top(int argc, char **argv);

#endif
