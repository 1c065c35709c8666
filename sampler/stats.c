/* sampler/stats.c - the counters of a run: the pause histogram (1 us
 * buckets up to 10 ms, then 100 us buckets up to 1 s), its p99, and the
 * end-of-run summary. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "sampler/profiler-internal.h"

void
record_pause(struct profiler *p, uint64_t ns)
{
	uint64_t us = ns / 1000;
	uint64_t b = us < PAUSE_FINE_US ? us : PAUSE_FINE_US + (us - PAUSE_FINE_US) / 100;
	p->pause_hist[b < PAUSE_BUCKETS ? b : PAUSE_BUCKETS - 1]++;
	p->pause_sum_ns += ns;
	if (ns > p->pause_max_ns)
		p->pause_max_ns = ns;
}


const struct profiler_stats *
profiler_stats(struct profiler *p)
{
	struct profiler_stats *s = &p->stats;
	if (!p->stopped)
		s->elapsed_s = (double)(monotonic_ns() - p->start_ns) / 1e9;
	s->pause_mean_us = s->stopped ? (double)p->pause_sum_ns / 1000.0 / (double)s->stopped : 0;
	s->pause_max_us = (double)p->pause_max_ns / 1000.0;
	s->pause_p99_us = 0;
	uint64_t want = s->stopped - s->stopped / 100, seen = 0;
	for (size_t i = 0; s->stopped && i < PAUSE_BUCKETS; i++) {
		seen += p->pause_hist[i];
		if (seen >= want) {
			/* The bucket's upper edge, but never above the maximum
			 * (nor below it in the open-ended last bucket). */
			double edge = i < PAUSE_FINE_US ? (double)(i + 1)
				: (double)PAUSE_FINE_US + 100.0 * (double)(i - PAUSE_FINE_US + 1);
			s->pause_p99_us = i == PAUSE_BUCKETS - 1 ? s->pause_max_us
				: fmin(edge, s->pause_max_us);
			break;
		}
	}
	return s;
}


void
profiler_print_summary(struct profiler *p, const struct profiler_config *cfg)
{
	const struct profiler_stats *s = profiler_stats(p);
	double rate = s->elapsed_s > 0 ? (double)s->ticks / s->elapsed_s : 0;
	char errors[256] = "";
	static const char *const kinds[PROF_ERR_MAX] = {
		[PROF_ERR_TIMEOUT] = "did not stop in time",
		[PROF_ERR_PTRACE] = "ptrace failed",
		[PROF_ERR_NOSTACK] = "no frame unwound",
	};
	size_t len = 0;
	for (int i = 0; i < PROF_ERR_MAX; i++)
		if (s->errors[i] && len < sizeof(errors))
			len += (size_t)snprintf(errors + len, sizeof(errors) - len, "%s%" PRIu64 " %s",
						len ? ", " : "", s->errors[i], kinds[i]);
	error_msg("%" PRIu64 " samples in %.1f s: %" PRIu64 " ticks at %.1f Hz (asked %.1f Hz), "
		  "%" PRIu64 " missed; %zu threads seen",
		  s->samples, s->elapsed_s, s->ticks, rate, cfg->rate_hz, s->missed_ticks,
		  s->threads_seen);
	char reused[64] = "";
	if (cfg->idle)
		snprintf(reused, sizeof(reused), ", %" PRIu64 " reused without stopping", s->reused);
	error_msg("pause per thread-sample: mean %.1f us, p99 %.1f us, max %.1f us "
		  "(%" PRIu64 " stopped%s); errors: %s",
		  s->pause_mean_us, s->pause_p99_us, s->pause_max_us, s->stopped,
		  reused, errors[0] ? errors : "none");
}
