/* sampler/stats.c - the counters of a run: the pause histogram (1 us
 * buckets up to 10 ms, then 100 us buckets up to 1 s), its p99, and the
 * end-of-run summary. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace/clock.h"
#include "sampler/error.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"

int
profiler_pause_hist_init(struct pause_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->buckets = calloc(PAUSE_BUCKETS, sizeof(*h->buckets));
	return h->buckets ? 0 : -ENOMEM;
}

void
profiler_pause_hist_release(struct pause_hist *h)
{
	free(h->buckets);
	h->buckets = NULL;
}

void
profiler_pause_hist_add(struct pause_hist *h, uint64_t ns)
{
	uint64_t us = ns / NS_PER_US;
	uint64_t b = us < PAUSE_FINE_US ? us : PAUSE_FINE_US + (us - PAUSE_FINE_US) / 100;
	h->buckets[b < PAUSE_BUCKETS ? b : PAUSE_BUCKETS - 1]++;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

void
profiler_pause_hist_summary(const struct pause_hist *h, double *mean_us, double *p99_us,
			    double *max_us)
{
	*mean_us = h->n ? (double)h->sum_ns / (double)NS_PER_US / (double)h->n : 0;
	*max_us = (double)h->max_ns / (double)NS_PER_US;
	*p99_us = 0;
	uint64_t want = h->n - h->n / 100, seen = 0;
	for (size_t i = 0; h->n && i < PAUSE_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= want) {
			double edge = i < PAUSE_FINE_US ? (double)(i + 1)
				: (double)PAUSE_FINE_US + 100.0 * (double)(i - PAUSE_FINE_US + 1);
			*p99_us = i == PAUSE_BUCKETS - 1 ? *max_us : fmin(edge, *max_us);
			break;
		}
	}
}

/* The summary fields of s: the unwinder's counts, the time so far, the
 * pauses. */
static void
fill_summary(struct profiler *p, struct profiler_stats *s)
{
	/* The unwinder's counts (its own thread may be adding to them). */
	pthread_mutex_lock(&p->counts_lock);
	s->samples = p->uw_samples;
	s->errors[PROF_ERR_NOSTACK] = p->uw_nostack;
	pthread_mutex_unlock(&p->counts_lock);
	if (!p->stopped)
		s->elapsed_s = (double)(ptrace_clock_monotonic_ns() - p->tr.ticks.start_ns) /
			       (double)NS_PER_SEC;
	profiler_pause_hist_summary(&p->pauses, &s->pause_mean_us, &s->pause_p99_us,
				    &s->pause_max_us);
}

const struct profiler_stats *
profiler_stats(struct profiler *p)
{
	/* The tracer's (the output jobs on the unwinder's thread take
	 * profiler_stats_snapshot: this writes p->stats). */
	fill_summary(p, &p->stats);
	return &p->stats;
}

void
profiler_stats_snapshot(struct profiler *p, struct profiler_stats *out)
{
	/* The tracer's counters as they are: read while it may add to them
	 * (profiler-internal.h, "Races"), never written here. */
	*out = p->stats;
	fill_summary(p, out);
}

double
profiler_stats_rate(const struct profiler_stats *s)
{
	return s->elapsed_s > 0 ? (double)s->ticks / s->elapsed_s : 0;
}

uint64_t
profiler_stats_not_oncpu(const struct profiler_stats *s)
{
	uint64_t n = 0;
	for (int i = 0; i < ONCPU_DROP_MAX; i++)
		n += s->dropped[i];
	return n;
}

uint64_t
profiler_stats_lost(const struct profiler_stats *s)
{
	return s->deferred_lost + s->queue_dropped + s->not_unwound;
}

bool
profiler_stats_mostly_lost(const struct profiler_stats *s)
{
	return profiler_stats_lost(s) > s->samples;
}

#define PLURAL(n) ((n) == 1 ? "" : "s")

/* Below this share of the CPU time, or above the second, the summary
 * warns: a profile that lost or gained that much may have lost it
 * unevenly (a server's time in system calls, before issue 33). */
#define ONCPU_SHARE_LOW  0.7
#define ONCPU_SHARE_HIGH 1.3
/* ... when the CPU time owes at least this many samples. */
#define ONCPU_SHARE_MIN_OWED 20.0

/* On-CPU: how much of the targets' CPU time (their process clocks,
 * what /proc/PID/stat's utime + stime count) the samples kept stand for
 * at the rate the ticks ran. */
static void
oncpu_cpu_summary(const struct profiler_stats *s, double rate)
{
	if (!s->target_cpu_ns || rate <= 0)
		return;
	double cpu_s = (double)s->target_cpu_ns / (double)NS_PER_SEC;
	double owed = cpu_s * rate;
	double share = (double)s->samples / owed;
	error_msg("on-CPU: the %" PRIu64 " samples stand for %.2f of the targets' CPU time "
		  "(%.2f s of CPU x %.1f Hz = %.0f samples)", s->samples, share, cpu_s, rate, owed);
	if (owed < ONCPU_SHARE_MIN_OWED)
		return;
	if (share < ONCPU_SHARE_LOW)
		error_msg("warning: the samples stand for only %.2f of the targets' CPU time: "
			  "the stops not counted or not stopped in time (above) may have left out "
			  "some code more than other code", share);
	else if (share > ONCPU_SHARE_HIGH)
		error_msg("warning: the samples stand for %.2f of the targets' CPU time: more "
			  "than the threads ran (threads waiting for a CPU were counted?)", share);
}

void
profiler_print_summary(struct profiler *p, const struct profiler_config *cfg)
{
	const struct profiler_stats *s = profiler_stats(p);
	double rate = profiler_stats_rate(s);
	char errors[256] = "";
	static const char *const kinds[PROF_ERR_MAX] = {
		[PROF_ERR_TIMEOUT] = "did not stop in time",
		[PROF_ERR_PTRACE] = "ptrace failed",
		[PROF_ERR_NOSTACK] = "no frame unwound",
		[PROF_ERR_PROCFS] = "/proc file not opened",
	};
	char procs[128] = "";
	if (cfg->subprocesses)
		snprintf(procs, sizeof(procs), " in %zu processes (%zu of them created while recording)",
			 s->processes_seen, s->processes_followed);
	size_t len = 0;
	for (int i = 0; i < PROF_ERR_MAX; i++)
		if (s->errors[i] && len < sizeof(errors))
			len += (size_t)snprintf(errors + len, sizeof(errors) - len, "%s%" PRIu64 " %s",
						len ? ", " : "", s->errors[i], kinds[i]);
	/* Scripts read this line by its words (tests/record-lib.sh
	 * summary_field, bench/record-build.sh: "N samples in", "ticks at"),
	 * which stay as they are whatever the counts. */
	error_msg("%" PRIu64 " samples in %.1f s: %" PRIu64 " ticks at %.1f Hz (asked %.1f Hz), "
		  "%" PRIu64 " missed; %zu thread%s seen%s",
		  s->samples, s->elapsed_s, s->ticks, rate, cfg->rate_hz, s->missed_ticks,
		  s->threads_seen, PLURAL(s->threads_seen), procs);
	char reused[128] = "";
	if (cfg->idle)
		snprintf(reused, sizeof(reused), ", %" PRIu64 " reused without stopping, %" PRIu64
			 " read unstopped in D state", s->reused, s->unstopped);
	error_msg("pause per thread-sample: mean %.1f us, p99 %.1f us, max %.1f us "
		  "(%" PRIu64 " stopped%s); errors: %s",
		  s->pause_mean_us, s->pause_p99_us, s->pause_max_us, s->stopped,
		  reused, errors[0] ? errors : "none");
	unwinder_report_inputs(p);
	if (s->queue_dropped)
		error_msg("warning: %" PRIu64 " thread-samples dropped: the unwinder was %u samples "
			  "behind (naming frames took that long: a large or slow debug file?)",
			  s->queue_dropped, UNWIND_QUEUE_SAMPLES);
	if (s->not_unwound)
		error_msg("warning: %" PRIu64 " thread-samples not in the output: the unwinder made "
			  "no progress for %.1f s after the recording ended", s->not_unwound,
			  (double)unwinder_finish_ms() / (double)MS_PER_SEC);
	if (s->deferred) {
		char lost[128] = "";
		if (s->deferred_lost)
			snprintf(lost, sizeof(lost), ", %" PRIu64 " of them lost (the thread ran "
				 "first, or the recording ended)", s->deferred_lost);
		/* A share says what a count of millions (5,000 threads for
		 * ten seconds) does not: how much of the profile came late.
		 * Of the thread-samples kept and lost, which those put off
		 * are among: of the kept alone it read "2000100% of the 6"
		 * when nearly all were lost. */
		uint64_t all = s->samples + s->deferred_lost;
		double share = all ? 100.0 * (double)s->deferred / (double)all : 0.0;
		error_msg("%" PRIu64 " thread-samples put off to a later stop (%.0f%% of the %"
			  PRIu64 " kept and lost; more threads than a tick can look at or stop)%s",
			  s->deferred, share > 100.0 ? 100.0 : share, all, lost);
	}
	if (profiler_stats_mostly_lost(s))
		error_msg("warning: most of the profile was lost: %" PRIu64 " thread-samples lost "
			  "or dropped, %" PRIu64 " kept", profiler_stats_lost(s), s->samples);
	/* Counts that are 0 are left out: "0 of them" says nothing. */
	char late[96] = "";
	if (s->late)
		snprintf(late, sizeof(late), ", %" PRIu64 " of them taken when they stopped", s->late);
	if (cfg->idle && s->skipped)
		error_msg("%" PRIu64 " thread-sample%s not stopped by the tick's deadline (waiting "
			  "for a CPU)%s", s->skipped, PLURAL(s->skipped), late);
	if (!cfg->idle) {
		char skipped[192] = "";
		if (s->skipped)
			snprintf(skipped, sizeof(skipped), "; %" PRIu64 " thread-sample%s not stopped "
				 "by the tick's deadline (%.2f per tick)%s", s->skipped,
				 PLURAL(s->skipped), s->ticks ? (double)s->skipped / (double)s->ticks : 0.0,
				 late);
		uint64_t not_oncpu = profiler_stats_not_oncpu(s);
		error_msg("on-CPU: %" PRIu64 " stop%s not counted (%" PRIu64 " asleep in a system "
			  "call, %" PRIu64 " waiting for a CPU, %" PRIu64 " idle)%s",
			  not_oncpu, PLURAL(not_oncpu), s->dropped[ONCPU_DROP_ASLEEP],
			  s->dropped[ONCPU_DROP_WAITING], s->dropped[ONCPU_DROP_IDLE], skipped);
		if (s->oncpu_between)
			error_msg("on-CPU: %" PRIu64 " of the samples are CPU time the threads ran "
				  "between the ticks that counted them, given to the stack of their "
				  "next counted stop%s", s->oncpu_between,
				  s->oncpu_lost_ns ? " (what one stop would carry beyond its thread's "
				  "last ticks is lost)" : "");
	}
	if (!cfg->idle)
		oncpu_cpu_summary(s, rate);
	/* STACKSPY_DEBUG=1: the hand-off's cost per tick (bench/
	 * record-overhead.sh, bench/record-cost.sh compare them between
	 * builds: unlike times, a loaded host does not move them much). */
	if (sampler_debug() && s->ticks) {
		double t = (double)s->ticks;
		error_msg("debug: per tick: %.2f wake-ups of the unwinder, %.2f voluntary and "
			  "%.2f involuntary context switches of the tracer; %.2f stops; "
			  "%.2f CPUs held",
			  (double)unwinder_wakes(p) / t, (double)s->tracer_vcsw / t,
			  (double)s->tracer_ivcsw / t, (double)s->stopped / t,
			  (double)s->held_ticks / t);
		/* What the ticks did with each process (sample.c). */
		for (size_t i = 0; i < p->nprocs; i++) {
			const struct proc_state *ps = &p->procs[i];
			error_msg("debug: process %d (%s): %u ticks (%u with its map pending), "
				  "%u looks at a thread, %u chosen, %u samples, %u reused, "
				  "%u put off, %u late", (int)ps->pid, ps->comm, ps->dbg.ticks,
				  ps->dbg.map_pending, ps->dbg.looks, ps->dbg.chosen, ps->dbg.taken,
				  ps->dbg.reused, ps->dbg.deferred, ps->dbg.late);
		}
	}
}
