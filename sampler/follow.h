/* sampler/follow.h - dump --follow: the waits of the processes dumped,
 * the processes at their other ends, and the chains and cycles across
 * processes (sampler/follow.c).  For sampler/cmd-dump.c and dump-live.c.
 */
#ifndef STACKSPY_SAMPLER_FOLLOW_H
#define STACKSPY_SAMPLER_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "sampler/output.h"

/* At most this many processes dumped in all (the given ones first), and
 * this many steps of one chain. */
#define FOLLOW_MAX_PROCS 64
#define FOLLOW_MAX_STEPS 32

struct wait_graph;

struct wait_graph *dump_follow_new(void);
void dump_follow_free(struct wait_graph *g);
/* The waits of process dp, just dumped (given: on the command line). */
void dump_follow_add(struct wait_graph *g, const struct dump_process *dp, bool given);
/* Process pid was given on the command line: chains start there. */
void dump_follow_given(struct wait_graph *g, pid_t pid);
/* Process pid could not be dumped: why (copied). */
void dump_follow_skip(struct wait_graph *g, pid_t pid, const char *why);
/* The processes at the other end of a wait that are not in g yet, at
 * most max, into out.  Returns how many. */
size_t dump_follow_next(const struct wait_graph *g, pid_t *out, size_t max);
/* The chains from the given processes' blocked threads and the cycles
 * among them: text ("Waits across processes:"), or the JSON members
 * ", \"chains\": [...], \"cycles\": [...], \"skipped\": [...]". */
void dump_follow_print(FILE *out, enum output_format f, const struct wait_graph *g);

#endif
