/* sampler/profiler.c - the sampling loop behind `record` and `top`.
 *
 * Each tick samples the threads of every target: stop, registers, one stack
 * copy, resume (ptrace_sample); the unwind, the names and the aggregation
 * happen after the thread runs again.  Ticks follow absolute deadlines
 * (one-shot TFD_TIMER_ABSTIME timers, base + k * period, with a small
 * random jitter so that we cannot run in lock step with a timer of the
 * target); a tick that overruns the next deadline counts it as missed.
 *
 * On-CPU (default): only threads that are running ('R' in
 * /proc/PID/task/TID/stat) are stopped.  --idle (wall clock): every thread,
 * but one whose CPU time (schedstat) has not moved since its last sample
 * is not stopped at all: its previous stack is counted again.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/launch.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

int
profiler_start(const struct profiler_config *cfg, struct profiler **out)
{
	struct profiler *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	p->tr.arch = arch_host();
	p->tr.child = -1;
	p->tr.child_status = -1;
	p->tr.timer_fd = -1;
	p->tr.epoll_fd = -1;
	p->nprocs = cfg->argv ? 1 : (size_t)cfg->npids;
	p->procs_cap = p->nprocs;
	p->procs = calloc(p->nprocs, sizeof(*p->procs));
	p->stacks = collapse_new();
	pthread_mutex_init(&p->stacks_lock, NULL);
	pthread_mutex_init(&p->counts_lock, NULL);
	int hist = profiler_pause_hist_init(&p->pauses);
	p->uw_own.frames = calloc((size_t)cfg->max_depth, sizeof(*p->uw_own.frames));
	/* + 64: the kernel frames of a thread in D (blocked.c). */
	p->uw_own.nids = (size_t)cfg->max_depth * MAX_INLINE_PER_FRAME + 2 + 64;
	p->uw_own.ids = calloc(p->uw_own.nids, sizeof(*p->uw_own.ids));
	p->tr.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int uw = unwinder_init(p);
	if (!p->procs || !p->stacks || hist < 0 || !p->uw_own.frames || !p->uw_own.ids ||
	    p->tr.timer_fd < 0 || uw < 0) {
		int e = errno ? -errno : -ENOMEM;
		profiler_free(p);
		return e;
	}
	size_t ok = 0;
	int last = 0;
	if (cfg->argv) {
		last = profiler_launch(p, &p->procs[0]);
		ok = last == 0;
	} else {
		for (size_t i = 0; i < p->nprocs; i++) {
			int r = profiler_attach_one(p, &p->procs[i], cfg->pids[i]);
			if (r == 0)
				ok++;
			else
				last = r;
		}
	}
	if (ok && cfg->subprocesses)
		profiler_proc_attach_descendants(p);
	p->tr.nattached = ok;
	if (ok == 0) {
		profiler_free(p);
		return last ? last : -ESRCH;
	}
	p->tr.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	if (p->tr.epoll_fd < 0 ||
	    epoll_ctl(p->tr.epoll_fd, EPOLL_CTL_ADD, p->tr.timer_fd, &ev) < 0 ||
	    (ptrace_event_fd() >= 0 &&
	     epoll_ctl(p->tr.epoll_fd, EPOLL_CTL_ADD, ptrace_event_fd(), &ev) < 0)) {
		int e = -errno;
		profiler_free(p);
		return e;
	}
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		if (ps->attached && ps->ut && profiler_sample_setup(p, ps) < 0) {
			profiler_free(p);
			return -ENOMEM;
		}
		thread_first_look(p, ps);
	}
	ticks_clock_init(&p->tr.ticks, cfg->rate_hz, ptrace_clock_monotonic_ns());
	ticks_arm(p);
	*out = p;
	return 0;
}

void
profiler_stop(struct profiler *p)
{
	if (p->stopped)
		return;
	p->stopped = true;
	oncpu_hold_stop(p);
	uint64_t end = p->tr.ticks_end_ns ? p->tr.ticks_end_ns : ptrace_clock_monotonic_ns();
	p->stats.elapsed_s = (double)(end - p->tr.ticks.start_ns) / (double)NS_PER_SEC;
	/* Every target at once: threads that cannot stop cost one timeout
	 * in all.  The profiler's targets are the only ones registered. */
	ptrace_detach_all();
	for (size_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		int st;
		if (ps->pt && ps->pid == p->tr.child && ptrace_child_status(ps->pt, &st))
			p->tr.child_status = st;
		ps->attached = false;
	}
	/* The targets run free: what is queued is unwound now, within a
	 * bound (a file it takes too long on costs those samples, not the
	 * output). */
	unwinder_finish(p, unwinder_finish_ms());
}

void
profiler_free(struct profiler *p)
{
	if (!p)
		return;
	profiler_stop(p);
	if (!unwinder_free(p))
		return;  /* left running: what it uses stays until we exit */
	for (size_t i = 0; p->procs && i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		ptrace_target_release(ps->pt);
		unwind_target_free(ps->ut);
		thread_table_free(ps);
	}
	free(p->procs);
	for (size_t i = 0; i < p->nframe_modules; i++) {
		free(p->frame_modules[i]);
		free(p->frame_files[i]);
	}
	free(p->frame_files);
	free(p->frame_lines);
	free(p->frame_modules);
	free(p->frame_offsets);
	collapse_free(p->stacks);
	profiler_pause_hist_release(&p->pauses);
	free(p->uw_own.frames);
	free(p->uw_own.ids);
	free(p->uw_own.seq);
	for (size_t i = 0; i < SAMPLE_BATCH; i++)
		ptrace_snapshot_release(&p->tr.snaps[i]);
	ptrace_snapshot_release(&p->tr.blocked_snap);
	pthread_mutex_destroy(&p->stacks_lock);
	pthread_mutex_destroy(&p->counts_lock);
	if (p->tr.timer_fd >= 0)
		close(p->tr.timer_fd);
	if (p->tr.epoll_fd >= 0)
		close(p->tr.epoll_fd);
	free(p);
}

struct collapse *
profiler_stacks(const struct profiler *p)
{
	return p->stacks;
}

size_t
profiler_attached_count(const struct profiler *p)
{
	return p->tr.nattached;
}

int
profiler_command_status(const struct profiler *p)
{
	return p->tr.child_status;
}

pid_t
profiler_pid(const struct profiler *p)
{
	return p->nprocs ? p->procs[0].pid : 0;
}

const char *
profiler_comm(const struct profiler *p)
{
	return p->nprocs ? p->procs[0].comm : "";
}

const char *
profiler_frame_module(const struct profiler *p, uint32_t id)
{
	return id < p->nframe_modules && p->frame_modules[id] ?
		collapse_module_basename(p->frame_modules[id]) : NULL;
}

const char *
profiler_frame_source(const struct profiler *p, uint32_t id, unsigned *line)
{
	if (id >= p->nframe_modules || !p->frame_files[id])
		return NULL;
	*line = p->frame_lines[id];
	return p->frame_files[id];
}

const char *
profiler_frame_module_path(const struct profiler *p, uint32_t id, uint64_t *offset)
{
	if (id >= p->nframe_modules || !p->frame_modules[id])
		return NULL;
	*offset = p->frame_offsets[id];
	return p->frame_modules[id];
}

void
profiler_set_hook(struct profiler *p, profiler_hook fn, void *arg)
{
	p->hook = fn;
	p->hook_arg = arg;
}

size_t
profiler_process_count(const struct profiler *p)
{
	return p->nprocs;
}

pid_t
profiler_process_pid(const struct profiler *p, size_t i)
{
	return p->procs[i].pid;
}

const char *
profiler_process_comm(const struct profiler *p, size_t i)
{
	return p->procs[i].comm;
}

bool
profiler_process_exited(const struct profiler *p, size_t i)
{
	return p->procs[i].exited && !p->procs[i].followed;
}

size_t
profiler_thread_count(const struct profiler *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nprocs; i++) {
		const struct ptrace_target *t = p->procs[i].pt;
		for (size_t j = 0; t && !p->procs[i].exited && j < t->nthreads; j++)
			n += t->threads[j].state != TRACEE_GONE;
	}
	return n;
}

size_t
profiler_thread_root_level(const struct profiler *p)
{
	return profiler_multi(p) ? 1 : 0;
}
