/* ptrace/registry.c - who is ours: every target from attach to release,
 * the threads still seized after a detach gave up on them ("lingering"),
 * and how many tracees we hold (the watchdog's and the signal handlers'
 * count).  Below attach, follow, poll and detach, which all look things
 * up here; it calls only the watchdog and /proc (procfs.c).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "base/base.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"
#include "ptrace/watchdog.h"

/* Every target from attach to release, in one list: waitpid(-1) returns
 * the stops of all our tracees, and one that belongs to another target than
 * the one being polled must still be handled, not dropped (it would stay
 * stopped); ptrace_detach_all() walks it on every exit path.  Targets are
 * allocated here, so their addresses never move. */
static struct ptrace_target *registry;
/* Targets in it that follow their children (ATTACH_FOLLOW): while there is
 * none, a stop of an unknown tracee cannot be a new child.  Kept here,
 * not counted at each stop (a build follows hundreds). */
static size_t nfollowing;

/* Threads still seized after a detach gave up on them (they did not stop
 * by its deadline: uninterruptible sleep).  They trap when they leave it,
 * and must then be let go at once: ptrace_target_poll() and
 * ptrace_release_lingering() do. */
static pid_t *lingering;
static size_t nlingering, lingering_cap;

/* Threads the kernel attached for us that no target lists yet (follow.c
 * says how many). */
static size_t nloose;

/* Read by signal handlers and by the watchdog. */
static volatile sig_atomic_t held;

struct tracee *
ptrace_target_find(struct ptrace_target *t, pid_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return &t->threads[i];
	return NULL;
}

struct tracee *
ptrace_target_add(struct ptrace_target *t, pid_t tid)
{
	if (BASE_GROW(t->threads, t->cap, t->nthreads + 1, 16) < 0)
		return NULL;
	struct tracee *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return th;
}

void
ptrace_linger_add(pid_t tid)
{
	if (BASE_GROW(lingering, lingering_cap, nlingering + 1, 16) < 0)
		return;  /* the kernel lets it go when we exit */
	lingering[nlingering++] = tid;
}

bool
ptrace_linger_has(pid_t tid)
{
	for (size_t i = 0; i < nlingering; i++)
		if (lingering[i] == tid)
			return true;
	return false;
}

void
ptrace_linger_remove(pid_t tid)
{
	for (size_t i = 0; i < nlingering; i++) {
		if (lingering[i] == tid) {
			lingering[i] = lingering[--nlingering];
			return;
		}
	}
}

size_t
ptrace_linger_count(void)
{
	return nlingering;
}

pid_t
ptrace_linger_at(size_t i)
{
	return lingering[i];
}

void
ptrace_linger_forget(void)
{
	nlingering = 0;
}

void
ptrace_held_update(void)
{
	int n = (int)nlingering + (int)nloose;
	for (struct ptrace_target *t = registry; t; t = t->next)
		n += !t->detached;
	held = n;
	ptrace_watchdog_set_busy(n);
}

void
ptrace_registry_set_loose(size_t n)
{
	nloose = n;
	ptrace_held_update();
}

int
ptrace_held_count(void)
{
	return held;
}

struct ptrace_target *
ptrace_registry_new(pid_t pid, unsigned flags)
{
	struct ptrace_target *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = pid;
	t->flags = flags;
	t->next = registry;
	registry = t;
	nfollowing += (flags & ATTACH_FOLLOW) != 0;
	/* Before the first seize: from now on a SIGSTOPped stackspy would
	 * stall its tracees. */
	ptrace_watchdog_start();
	ptrace_held_update();
	return t;
}

void
ptrace_registry_remove(struct ptrace_target *t)
{
	for (struct ptrace_target **pp = &registry; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			nfollowing -= (t->flags & ATTACH_FOLLOW) != 0;
			ptrace_held_update();
			return;
		}
	}
}

struct ptrace_target *
ptrace_registry_head(void)
{
	return registry;
}

size_t
ptrace_registry_following(void)
{
	return nfollowing;
}

struct tracee *
ptrace_registry_find(struct ptrace_target *hint, pid_t tid, struct ptrace_target **owner)
{
	struct tracee *th = hint ? ptrace_target_find(hint, tid) : NULL;
	*owner = hint;
	for (struct ptrace_target *t = registry; !th && t; t = t->next) {
		if (t != hint) {
			th = ptrace_target_find(t, tid);
			*owner = t;
		}
	}
	return th;
}

struct ptrace_target *
ptrace_registry_next_unannounced(void)
{
	for (struct ptrace_target *t = registry; t; t = t->next) {
		if (t->followed && !t->announced) {
			t->announced = true;
			return t;
		}
	}
	return NULL;
}

/* A thread the kernel attached for us (follow.c): listed, running. */
int
ptrace_registry_adopt_thread(struct ptrace_target *t, pid_t tid)
{
	struct tracee *th = ptrace_target_add(t, tid);
	if (!th)
		return -ENOMEM;
	th->state = TRACEE_RUNNING;
	th->proc_state = 'R';
	ptrace_thread_info(t->pid, tid, NULL, th->name, sizeof(th->name));
	return 1;
}

void
ptrace_target_fill_new_process(struct ptrace_target *t)
{
	ptrace_procfs_start_time(t->pid, &t->start_time);
	ptrace_registry_adopt_thread(t, t->pid);
}
