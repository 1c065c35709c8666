/* sampler/launch.c - getting hold of the targets: attach to the processes
 * asked for, or launch the command and follow it from its first
 * instruction. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "ptrace/launch.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "sampler/error.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "sampler/signals.h"
#include "unwind/unwind.h"

/* While the unwinder reads a large file (a symbol table, a perf map),
 * signals to our tracees are handed on from inside its loops. */
static void
poll_while_busy(void *arg)
{
	(void)arg;
	ptrace_poll_all_from_yield();
}

void
profiler_report_refused(pid_t pid, const struct tracee *th)
{
	if (!th->attach_error)
		return;
	if (th->tracer > 0) {
		char comm[64];
		ptrace_read_comm(th->tracer, comm, sizeof(comm));
		error_msg("thread %d (%s) of process %d is traced by process %d (%s): not sampled",
			  (int)th->tid, th->name, (int)pid, (int)th->tracer, comm);
	} else {
		perror_msg(th->attach_error, "cannot attach to thread %d (%s) of process %d",
			   (int)th->tid, th->name, (int)pid);
	}
}

size_t
profiler_refused_threads(const struct profiler *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].pt)
			n += p->procs[i].pt->refused_total;
	return n;
}

int
profiler_attach_one(struct profiler *p, struct proc_state *ps, pid_t pid)
{
	char why[256];
	ps->pid = pid;
	int r = ptrace_target_check(pid, why, sizeof(why));
	if (r == -EINVAL) {
		error_msg("cannot attach to process %d: %s", (int)pid, why);
		return r;
	}
	if (r == 0) {
		ps->pt = ptrace_target_attach(pid, profiler_attach_flags(p), &r);
		if (ps->pt)
			r = 0;
	}
	if (r < 0) {
		perror_msg(r, "cannot attach to process %d", (int)pid);
		if (r == -EPERM)
			sampler_hint_msg("%s", ptrace_explain_eperm(pid, why, sizeof(why)));
		return r;
	}
	ps->attached = true;
	unwind_set_yield(poll_while_busy, NULL);
	for (size_t i = 0; i < ps->pt->nthreads; i++)
		profiler_report_refused(pid, &ps->pt->threads[i]);
	ps->ut = unwind_target_open(pid, &r);
	if (!ps->ut) {
		perror_msg(r, "cannot read the memory map of process %d", (int)pid);
		ptrace_target_release(ps->pt);
		ps->pt = NULL;
		ps->attached = false;
		return r;
	}
	unwinder_push_map(p, ps);
	ptrace_read_comm(pid, ps->comm, sizeof(ps->comm));
	profiler_proc_set_root(p, ps);
	p->stats.processes_seen++;
	return 0;
}

unsigned
profiler_attach_flags(const struct profiler *p)
{
	return ATTACH_EXEC | (p->cfg.subprocesses ? ATTACH_FOLLOW : 0);
}

void
profiler_proc_set_root(struct profiler *p, struct proc_state *ps)
{
	char name[160];
	collapse_name_root(name, sizeof(name), ps->comm, ps->pid, 0);
	int id = profiler_intern(p, name);
	ps->root_id = id < 0 ? 0 : (uint32_t)id;
}

struct proc_state *
profiler_proc_new(struct profiler *p)
{
	/* The output jobs on the unwinder's thread (a checkpoint, --push)
	 * read procs[0] and nprocs under the lock: the array may move here
	 * (--subprocesses adopting a child). */
	struct proc_state *ps = NULL;
	profiler_stacks_lock(p);
	if (BASE_GROW(p->procs, p->procs_cap, p->nprocs + 1, 8) == 0) {
		ps = &p->procs[p->nprocs++];
		memset(ps, 0, sizeof(*ps));
	}
	profiler_stacks_unlock(p);
	return ps;
}

static bool
proc_known(const struct profiler *p, pid_t pid)
{
	for (size_t i = 0; i < p->nprocs; i++)
		if (p->procs[i].pid == pid && p->procs[i].attached)
			return true;
	return false;
}

/* A process found or created under a target: like profiler_attach_one, but one
 * that is gone already, or that the kernel attached for us meanwhile (it
 * comes through profiler_proc_adopt_new), is no error. */
static void
attach_child(struct profiler *p, pid_t pid)
{
	char why[256];
	if (ptrace_target_check(pid, why, sizeof(why)) < 0)
		return;  /* gone, or a zombie: nothing to sample */
	size_t slot = p->nprocs;
	struct proc_state *ps = profiler_proc_new(p);
	if (!ps)
		return;
	int r;
	ps->pid = pid;
	ps->followed = true;
	ps->pt = ptrace_target_attach(pid, profiler_attach_flags(p), &r);
	if (!ps->pt) {
		if (r != -ESRCH && r != -EALREADY)
			perror_msg(r, "cannot attach to process %d", (int)pid);
		p->nprocs = slot;  /* the slot is free again */
		return;
	}
	ps->attached = true;
	ptrace_read_comm(pid, ps->comm, sizeof(ps->comm));
	profiler_proc_set_root(p, ps);
	/* Its map is read by its first tick, as an adopted one's. */
	ps->map_pending = true;
	p->stats.processes_seen++;
}

void
profiler_proc_attach_descendants(struct profiler *p)
{
	/* p->procs grows while we walk it: each process is attached before
	 * its children are listed. */
	for (size_t i = 0; i < p->nprocs; i++) {
		if (!p->procs[i].attached)
			continue;
		pid_t *kids = NULL;
		int n = ptrace_children(p->procs[i].pid, &kids);
		for (int k = 0; k < n; k++)
			if (!proc_known(p, kids[k]))
				attach_child(p, kids[k]);
		free(kids);
		profiler_proc_adopt_new(p);
	}
}

void
profiler_proc_adopt_new(struct profiler *p)
{
	struct ptrace_target *t;
	while ((t = ptrace_target_next_new())) {
		struct proc_state *ps = profiler_proc_new(p);
		if (!ps) {
			ptrace_target_release(t);  /* let it go rather than hold it */
			continue;
		}
		ps->pid = t->pid;
		ps->pt = t;
		ps->attached = true;
		ps->followed = true;
		ptrace_read_comm(t->pid, ps->comm, sizeof(ps->comm));
		profiler_proc_set_root(p, ps);
		/* Its memory map is read by its first tick (sample.c), which
		 * lets it go if it has none to give. */
		ps->map_pending = true;
		p->stats.processes_seen++;
		p->stats.processes_followed++;
	}
}

void
profiler_proc_release(struct profiler *p, struct proc_state *ps)
{
	ps->exited = true;
	ps->attached = false;
	unwinder_push_end(p, ps);
	unwind_target_free(ps->ut);
	ps->ut = NULL;
	thread_table_free(ps);
	ptrace_target_release(ps->pt);
	ps->pt = NULL;
}

/* How many times (1 ms apart) an empty memory map of a live process is read
 * again before the process counts as gone (an exec takes milliseconds). */
#define MAP_TRIES 200

/* An unreadable map of a process that may still get one: not gone, not a
 * zombie (whose exit another poll may have taken before the process was
 * ours). */
bool
profiler_proc_may_map(struct proc_state *ps)
{
	char state = 0;
	return !ps->pt->gone && !ps->pt->leader_exited &&
	       ptrace_thread_info(ps->pid, ps->pid, &state, NULL, 0) == 0 &&
	       state != 'Z' && state != 'X';
}

struct unwind_target *
profiler_proc_open_map(struct proc_state *ps, int *err)
{
	struct unwind_target *ut = unwind_target_open(ps->pid, err);
	/* An empty memory map while it runs: it is in an exec (sh -c
	 * '...; exec prog': the old memory gone, the new one not built
	 * yet).  Its exec stop comes; look again.  Taken for an exit, a
	 * started command was ended at once (tests/cli-command-end.test,
	 * under load). */
	for (int tries = 0; !ut && *err == -ESRCH && tries < MAP_TRIES; tries++) {
		ptrace_target_poll(ps->pt);
		if (!profiler_proc_may_map(ps))
			break;
		struct timespec ts = ns_to_timespec(NS_PER_MS);
		nanosleep(&ts, NULL);
		ut = unwind_target_open(ps->pid, err);
	}
	return ut;
}

/* Launch mode: ptrace_launch() runs the command traced and stopped at its
 * exec, before its first instruction. */
int
profiler_launch(struct profiler *p, struct proc_state *ps)
{
	int r;
	bool exec_failed;
	unsigned flags = profiler_attach_flags(p);
	if (!p->cfg.keep_running)
		flags |= ATTACH_END_WITH_TRACER;
	ps->pt = ptrace_launch(p->cfg.argv, flags, &r, &exec_failed);
	if (!ps->pt) {
		if (exec_failed)
			perror_msg(r, "cannot run '%s'", p->cfg.argv[0]);
		else
			perror_msg(r, "cannot trace the command");
		return r;
	}
	unwind_set_yield(poll_while_busy, NULL);
	pid_t child = ps->pt->pid;
	p->tr.child = child;
	ps->pid = child;
	ps->attached = true;
	if (ps->pt->leader_exited)
		ps->exited = true;
	ps->ut = profiler_proc_open_map(ps, &r);
	if (!ps->ut) {
		if (r != -ESRCH) {
			perror_msg(r, "cannot read the memory map of the command");
			/* We started it; we do not leave it running untraced
			 * and unreaped. */
			kill(child, SIGKILL);
			return r;
		}
		/* It ran and exited before we could look: an empty profile. */
		ps->exited = true;
		ptrace_target_poll(ps->pt);
		int st;
		if (ptrace_child_status(ps->pt, &st))
			p->tr.child_status = st;
	}
	if (ps->ut)
		unwinder_push_map(p, ps);
	snprintf(ps->comm, sizeof(ps->comm), "%s", strrchr(p->cfg.argv[0], '/') ?
		 strrchr(p->cfg.argv[0], '/') + 1 : p->cfg.argv[0]);
	profiler_proc_set_root(p, ps);
	p->stats.processes_seen++;
	return 0;
}

char *
profiler_command_status_text(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %s%s", sampler_signal_name(WTERMSIG(st)),
			 WCOREDUMP(st) ? " (core dumped)" : "");
	else
		snprintf(buf, len, "ended (wait status 0x%x)", (unsigned)st);
	return buf;
}

int
profiler_end_command(struct profiler *p)
{
	if (!p->cfg.argv || p->nprocs == 0 || !p->procs[0].pt || p->tr.child_status != -1)
		return 0;
	struct proc_state *ps = &p->procs[0];
	int st;
	if (ptrace_child_status(ps->pt, &st)) {
		p->tr.child_status = st;
		return 0;
	}
	if (p->cfg.keep_running)
		return 0;
	/* Ended by a signal: Ctrl-C (or a kill of the process group)
	 * reached the command too, handed on at the detach; it acts as the
	 * command wants before any SIGTERM of ours (tests/cli-command-end.test
	 * saw SIGTERM win under load). */
	if (stop_signal && ptrace_child_wait(ps->pt, SIGNALLED_GRACE_MS, &st)) {
		p->tr.child_status = st;
		return 0;
	}
	sampler_info_msg("ending %s (pid %d): SIGTERM, SIGKILL after %d s", p->cfg.argv[0],
		 (int)p->tr.child, (int)(COMMAND_GRACE_MS / MS_PER_SEC));
	bool killed;
	int r = ptrace_child_end(ps->pt, COMMAND_GRACE_MS, &st, &killed);
	if (r < 0) {
		perror_msg(r, "cannot end %s (pid %d)", p->cfg.argv[0], (int)p->tr.child);
		return 0;
	}
	p->tr.child_status = st;
	if (killed)
		error_msg("%s (pid %d) did not exit within %d s of SIGTERM: sent SIGKILL",
			  p->cfg.argv[0], (int)p->tr.child, (int)(COMMAND_GRACE_MS / MS_PER_SEC));
	return r;
}

void
profiler_report_command(const struct profiler *p)
{
	char how[96];
	if (!p->cfg.argv || p->tr.child <= 0)
		return;
	if (p->tr.child_status != -1)
		error_msg("%s (pid %d) %s", p->cfg.argv[0], (int)p->tr.child,
			  profiler_command_status_text(p->tr.child_status, how, sizeof(how)));
	else if (p->cfg.keep_running)
		error_msg("%s (pid %d) keeps running (--keep-running)", p->cfg.argv[0],
			  (int)p->tr.child);
}
