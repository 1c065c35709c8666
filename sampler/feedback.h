/* sampler/feedback.h - lines for a person at a terminal while record or
 * top samples: the start line, the progress line, the hints at the end.
 * Defined in sampler/feedback.c (above the profiler, below the commands).
 *
 * For the commands record and top.
 */
#ifndef STACKSPY_SAMPLER_FEEDBACK_H
#define STACKSPY_SAMPLER_FEEDBACK_H

#include <stdbool.h>

struct profiler;
struct profiler_config;

/* After profiler_start: the start line (what is sampled, how many
 * processes and threads, the rate, how to stop: Ctrl-C, or after duration
 * seconds), and the CPU times the busy-children hint starts from. */
void sampler_feedback_start(struct profiler *p, const struct profiler_config *cfg, double duration);
/* The same without the line (top: the screen says it). */
void sampler_feedback_sampling_started(struct profiler *p);
/* Will progress lines be shown?  Not when a command started here shares
 * the terminal (its lines would cut ours). */
bool sampler_feedback_progress_wanted(const struct profiler_config *cfg);
/* The progress line (elapsed, samples kept and their rate, the tick rate,
 * errors), rewritten in place: call it about once a second.  After the
 * first second without a sample kept, a hint (--subprocesses when the
 * target's children used the CPU, else --idle), once. */
void sampler_feedback_progress(struct profiler *p, const struct profiler_config *cfg,
			       double duration);
/* "wrote FILE (how_to_open)". */
void sampler_feedback_wrote(const char *path, const char *how_to_open);
/* When sampling ends, before a command started here is ended: the CPU time
 * the targets' children used meanwhile. */
void sampler_feedback_sampling_ended(struct profiler *p);
/* After the summary: hints where the result is empty (nothing on-CPU:
 * --idle) or odd (the children did the work: --subprocesses). */
void sampler_feedback_hints(struct profiler *p, const struct profiler_config *cfg);

#endif
