/* sampler/feedback.c - what a person at a terminal sees while record or
 * top runs: a start line (what is sampled, how to stop), a progress line
 * rewritten in place about once a second, the end ("wrote FILE (open it
 * in a browser)") and hints where the result is empty or odd.  All of it
 * only when standard error is a terminal and --quiet was not given:
 * scripts and logs get the summary lines alone.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/procfs.h"
#include "sampler/error.h"
#include "sampler/feedback.h"
#include "sampler/profiler.h"


/* CPU time (utime + stime, clock ticks) of one process, and of its
 * children it has waited for (cutime + cstime), for the busy-children
 * hint. */
struct proc_cpu {
	pid_t pid;
	unsigned long long start;  /* start time: a recycled pid is another */
	unsigned long long own, reaped;
};

static struct proc_cpu *cpu_before;
static size_t ncpu_before;
static unsigned long long targets_own_before;

/* /proc/PID/stat: its CPU times and start time. */
static int
read_proc_cpu(pid_t pid, struct proc_cpu *out)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	struct proc_stat ps;
	if (ptrace_proc_stat_parse(buf, &ps) < 0)
		return -EINVAL;
	out->pid = pid;
	out->start = ps.start_time;
	out->own = ps.utime + ps.stime;
	out->reaped = ps.cutime + ps.cstime;
	return 0;
}

/* The descendants of every target, with their CPU times now, into a
 * malloc'd array (NULL, 0 when none or out of memory); the targets' own
 * CPU time in *targets_own. */
static struct proc_cpu *
descendants_cpu(struct profiler *p, size_t *count, unsigned long long *targets_own)
{
	struct proc_cpu *v = NULL;
	size_t n = 0;
	*targets_own = 0;
	for (size_t i = 0; i < profiler_process_count(p); i++) {
		pid_t pid = profiler_process_pid(p, i);
		struct proc_cpu self;
		pid_t *kids = NULL;
		if (read_proc_cpu(pid, &self) < 0)
			continue;
		*targets_own += self.own;
		int k = ptrace_descendants(pid, &kids);
		/* The target's waited-for children count as children: a
		 * make or a shell reaps its compilers itself. */
		struct proc_cpu *nv = realloc(v, (n + 1 + (size_t)(k > 0 ? k : 0)) * sizeof(*nv));
		if (!nv) {
			free(kids);
			break;
		}
		v = nv;
		self.own = 0;
		v[n++] = self;
		for (int j = 0; j < k; j++)
			if (read_proc_cpu(kids[j], &v[n]) == 0)
				n++;
		free(kids);
	}
	*count = n;
	return v;
}

static void
plural(char *buf, size_t len, size_t n, const char *what)
{
	snprintf(buf, len, "%zu %s%s", n, what, n == 1 ? "" : "s");
}

void
sampler_feedback_sampling_started(struct profiler *p)
{
	free(cpu_before);
	cpu_before = sampler_info_on() ?
		     descendants_cpu(p, &ncpu_before, &targets_own_before) : NULL;
}

void
sampler_feedback_start(struct profiler *p, const struct profiler_config *cfg, double duration)
{
	sampler_feedback_sampling_started(p);
	if (!sampler_info_on())
		return;
	char what[256], threads[32], how[96];
	size_t nprocs = profiler_process_count(p);
	size_t len = 0;
	if (cfg->argv) {
		snprintf(what, sizeof(what), "%s (pid %d)", cfg->argv[0], (int)profiler_pid(p));
	} else if (nprocs == 1) {
		snprintf(what, sizeof(what), "%s (pid %d)", profiler_comm(p), (int)profiler_pid(p));
	} else {
		len = (size_t)snprintf(what, sizeof(what), "%zu processes (", nprocs);
		for (size_t i = 0; i < nprocs && len < sizeof(what); i++) {
			/* Enough to recognize them; the root frames have all. */
			if (i == 4) {
				len += (size_t)snprintf(what + len, sizeof(what) - len, ", ...");
				break;
			}
			len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s %d",
						i ? ", " : "", profiler_process_comm(p, i),
						(int)profiler_process_pid(p, i));
		}
		if (len < sizeof(what))
			snprintf(what + len, sizeof(what) - len, ")");
	}
	plural(threads, sizeof(threads), profiler_thread_count(p), "thread");
	if (duration > 0)
		snprintf(how, sizeof(how), "for %g s (Ctrl-C stops sooner)", duration);
	else if (cfg->argv)
		snprintf(how, sizeof(how), "until it exits (Ctrl-C stops sooner)");
	else
		snprintf(how, sizeof(how), "Ctrl-C to stop");
	sampler_info_msg("recording %s, %s, at %g Hz %s; %s", what, threads, cfg->rate_hz,
		     cfg->idle ? "wall-clock" : "on-CPU", how);
}

bool
sampler_feedback_progress_wanted(const struct profiler_config *cfg)
{
	/* A command started here writes to the same terminal, and its
	 * lines would land in the middle of ours. */
	return sampler_info_on() && !(cfg->argv && isatty(STDOUT_FILENO));
}

/* The CPU time (clock ticks) the targets' descendants used since
 * sampler_feedback_sampling_started, those alive now and those reaped. */
static unsigned long long
children_cpu_since_start(struct profiler *p, unsigned long long *targets)
{
	size_t nafter = 0;
	unsigned long long own_after = 0, kids = 0;
	struct proc_cpu *after = descendants_cpu(p, &nafter, &own_after);
	for (size_t i = 0; i < nafter; i++) {
		const struct proc_cpu *b = NULL;
		for (size_t j = 0; j < ncpu_before && !b; j++)
			if (cpu_before[j].pid == after[i].pid && cpu_before[j].start == after[i].start)
				b = &cpu_before[j];
		unsigned long long used = after[i].own + after[i].reaped;
		if (b && b->own + b->reaped <= used)
			used -= b->own + b->reaped;
		kids += used;
	}
	free(after);
	*targets = own_after > targets_own_before ? own_after - targets_own_before : 0;
	return kids;
}

static double
clock_ticks_s(unsigned long long ticks)
{
	long hz = sysconf(_SC_CLK_TCK);
	return (double)ticks / (double)(hz > 0 ? hz : 100);
}

/* The hint given while recording (feedback_early_hint), not repeated at
 * the end. */
enum early_hint { EARLY_NONE, EARLY_CHILDREN, EARLY_IDLE };
static enum early_hint early_hint;
static bool early_looked;

/* A whole second with no sample kept: say why now, not after a 30 s
 * recording of nothing (nginx's master forks its workers and sleeps). */
static void
feedback_early_hint(struct profiler *p, const struct profiler_config *cfg)
{
	const struct profiler_stats *st = profiler_stats(p);
	if (early_looked || st->elapsed_s < 1 || st->samples > 0 || cfg->idle)
		return;
	early_looked = true;
	unsigned long long own = 0, kids = cfg->subprocesses ? 0 : children_cpu_since_start(p, &own);
	if (kids > own) {
		early_hint = EARLY_CHILDREN;
		sampler_hint_msg("no sample yet, but the target's children used %.1f s of CPU: "
				 "the process forks its workers; add --subprocesses "
				 "(or give the workers' PIDs)", clock_ticks_s(kids));
	} else {
		early_hint = EARLY_IDLE;
		sampler_hint_msg("no sample yet: the target has not run on a CPU "
				 "(it sleeps or waits); --idle records where its threads wait");
	}
}

void
sampler_feedback_progress(struct profiler *p, const struct profiler_config *cfg, double duration)
{
	if (!sampler_info_on())
		return;
	feedback_early_hint(p, cfg);
	const struct profiler_stats *st = profiler_stats(p);
	uint64_t errors = 0;
	for (int i = 0; i < PROF_ERR_MAX; i++)
		errors += st->errors[i];
	char elapsed[48], line[200];
	if (duration > 0)
		snprintf(elapsed, sizeof(elapsed), "%.0f/%g s", st->elapsed_s, duration);
	else
		snprintf(elapsed, sizeof(elapsed), "%.0f s", st->elapsed_s);
	/* The samples kept (on-CPU: those where a thread ran), not the
	 * ticks: 0 of them for a second says more than the tick rate. */
	snprintf(line, sizeof(line), "stackspy: %s: %llu samples kept (%.1f/s; ticks at %.1f Hz), "
		 "%llu error%s", elapsed, (unsigned long long)st->samples,
		 st->elapsed_s > 0 ? (double)st->samples / st->elapsed_s : 0.0,
		 profiler_stats_rate(st), (unsigned long long)errors, errors == 1 ? "" : "s");
	sampler_status_line_show(line);
}

void
sampler_feedback_wrote(const char *path, const char *how_to_open)
{
	sampler_info_msg("wrote %s (%s)", path, how_to_open);
}

/* CPU time of the targets' descendants and their own during the
 * recording, in clock ticks (sampler_feedback_sampling_ended). */
static unsigned long long kids_used, targets_used;

void
sampler_feedback_sampling_ended(struct profiler *p)
{
	/* Busy children: the CPU time of the targets' descendants (those
	 * alive now, and those their parents reaped meanwhile) against the
	 * targets' own. */
	unsigned long long own = 0;
	kids_used = sampler_info_on() ? children_cpu_since_start(p, &own) : 0;
	targets_used = own;
	free(cpu_before);
	cpu_before = NULL;
	ncpu_before = 0;
}

void
sampler_feedback_hints(struct profiler *p, const struct profiler_config *cfg)
{
	if (!sampler_info_on())
		return;
	const struct profiler_stats *st = profiler_stats(p);
	unsigned long long kids = kids_used, own = targets_used;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		hz = 100;
	/* More than twice the targets' time, and a tenth of a CPU at least
	 * (a shell waiting for its one busy child is the case to catch; on
	 * a loaded host that child gets less than a whole CPU). */
	bool busy_kids = !cfg->subprocesses && kids > 0 && kids > 2 * own &&
			 (double)kids / (double)hz >= 0.1 * st->elapsed_s;
	if (busy_kids && early_hint == EARLY_CHILDREN)
		;  /* said while recording */
	else if (busy_kids)
		sampler_hint_msg("the children of the target used %.1f s of CPU time, "
				 "the target itself %.1f s: --subprocesses records them too",
				 (double)kids / (double)hz, (double)own / (double)hz);
	/* (A command that exits at once gets no sample either.) */
	else if (!cfg->idle && st->elapsed_s >= 0.5 && st->samples == 0 && early_hint != EARLY_IDLE)
		sampler_hint_msg("no sample: the target never ran on a CPU while it was recorded "
			 "(it sleeps or waits); --idle records where its threads wait");
}
