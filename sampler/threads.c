/* sampler/threads.c - the thread table of a process: one state per thread
 * (its stat files, its root frame, --idle's last stack), open addressing on
 * the tid, swept of the threads that are gone. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "sampler/profiler-internal.h"

void
thread_state_release(struct thread_state *ts)
{
	if (ts->stat_fd >= 0)
		close(ts->stat_fd);
	if (ts->schedstat_fd >= 0)
		close(ts->schedstat_fd);
	free(ts->last_ids);
}

static struct thread_state *
thread_slot(struct proc_state *ps, pid_t tid)
{
	for (size_t i = collapse_hash64((uint64_t)tid) & (ps->tcap - 1);; i = (i + 1) & (ps->tcap - 1))
		if (ps->threads[i].tid == tid || ps->threads[i].tid == 0)
			return &ps->threads[i];
}

/* Rebuild the table with ncap slots.  With keep_tick, the states of
 * threads not seen in that tick are released.  Entries are never deleted
 * in place: with open addressing that would cut probe chains.  On failure
 * nothing changes.  Returns 0 or -ENOMEM. */
static int
thread_table_rebuild(struct proc_state *ps, size_t ncap, const unsigned *keep_tick)
{
	struct thread_state *fresh = calloc(ncap, sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	struct thread_state *old = ps->threads;
	size_t ocap = ps->tcap;
	ps->threads = fresh;
	ps->tcap = ncap;
	ps->tn = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].tid)
			continue;
		if (keep_tick && old[i].seen_tick != *keep_tick) {
			thread_state_release(&old[i]);
			continue;
		}
		*thread_slot(ps, old[i].tid) = old[i];
		ps->tn++;
	}
	free(old);
	return 0;
}

static int
thread_table_grow(struct proc_state *ps)
{
	return thread_table_rebuild(ps, ps->tcap ? 2 * ps->tcap : 64, NULL);
}

void
thread_table_sweep(struct proc_state *ps, unsigned tick)
{
	if (ps->tcap)
		thread_table_rebuild(ps, ps->tcap, &tick);
}

struct thread_state *
thread_state_get(struct profiler *p, struct proc_state *ps, const struct tracee *th)
{
	if (2 * (ps->tn + 1) > ps->tcap && thread_table_grow(ps) < 0)
		return NULL;
	struct thread_state *ts = thread_slot(ps, th->tid);
	if (ts->tid && !ts->dead)
		return ts;
	if (ts->tid) {
		/* A new thread under a recycled tid: start afresh. */
		thread_state_release(ts);
		ps->tn--;
	}
	memset(ts, 0, sizeof(*ts));
	ts->tid = th->tid;
	ts->stat_fd = task_file_open(ps->pid, th->tid, "stat");
	/* Both modes: --idle for the CPU time, on-CPU for the scheduled-in
	 * count of the rule (oncpu.c). */
	ts->schedstat_fd = task_file_open(ps->pid, th->tid, "schedstat");
	char name[160];
	snprintf(ts->name, sizeof(ts->name), "%s", th->name);
	collapse_name_root(name, sizeof(name), th->name, ps->pid, th->tid);
	int id = collapse_intern(p->stacks, name);
	ts->root_id = id < 0 ? 0 : (uint32_t)id;
	ps->tn++;
	p->stats.threads_seen++;
	return ts;
}

/* The thread's name as of now.  A new thread often names itself
 * (pthread_setname_np) just after we seized it under its creator's name;
 * --threads' root must follow (tests/record-threads.test), and the hook
 * (top's thread list) gets the name of the sample. */
static void
thread_rename(struct profiler *p, struct proc_state *ps, struct thread_state *ts,
	      const char *comm, size_t len)
{
	if (len >= sizeof(ts->name))
		len = sizeof(ts->name) - 1;
	if (strncmp(ts->name, comm, len) == 0 && ts->name[len] == '\0')
		return;
	memcpy(ts->name, comm, len);
	ts->name[len] = '\0';
	if (!p->cfg.threads)
		return;
	char name[160];
	collapse_name_root(name, sizeof(name), ts->name, ps->pid, ts->tid);
	int id = collapse_intern(p->stacks, name);
	if (id >= 0)
		ts->root_id = (uint32_t)id;
}

char
thread_state_now(struct profiler *p, struct proc_state *ps, struct thread_state *ts)
{
	char buf[512];
	ssize_t n = ts->stat_fd < 0 ? -1 : pread(ts->stat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		ts->dead = true;
		return 0;
	}
	buf[n] = '\0';
	const char *comm;
	size_t len;
	char state = task_stat_parse(buf, &comm, &len);
	if (state && comm)
		thread_rename(p, ps, ts, comm, len);
	return state;
}

uint64_t
thread_cpu_ns(struct thread_state *ts)
{
	struct task_schedstat ss;
	ptrace_read_schedstat(ts->schedstat_fd, &ss);
	return ss.cpu_ns;
}

struct thread_state *
thread_state_find(struct proc_state *ps, pid_t tid)
{
	if (!ps->tcap)
		return NULL;
	struct thread_state *ts = thread_slot(ps, tid);
	return ts->tid == tid ? ts : NULL;
}
