/* sampler/follow.c - dump --follow: the waits of every process dumped
 * (sampler/waits.c's waits_on), the processes at their other ends to dump
 * next, and the chains and cycles across processes they make.
 *
 * A chain starts at a blocked thread of a process given on the command
 * line and steps to what it waits on: a thread (a mutex's owner), or a
 * process (a pipe's writers, a socket's peer, a child), whose one blocked
 * thread with a known wait goes on (the lowest tid when several).  It
 * ends at a thread or process that waits on nothing known (running,
 * stopped, sleeping in pause), one not dumped (and why), or at a thread
 * already in it: a cycle, a deadlock across processes when it spans more
 * than one.  Bounded: FOLLOW_MAX_PROCS processes, FOLLOW_MAX_STEPS steps.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "sampler/error.h"
#include "sampler/follow.h"

struct wg_thread {
	pid_t pid, tid;
	char name[64];
	char state;
	struct dump_wait w;
};

struct wg_proc {
	pid_t pid;
	char comm[64];
	size_t first, n;          /* its threads in g->th */
	char skipped[160];        /* not dumped: why, or "" */
	bool given;               /* on the command line */
};

struct wait_graph {
	struct wg_proc *procs;
	size_t np, pcap;
	struct wg_thread *th;
	size_t nt, tcap;
};

struct wait_graph *
dump_follow_new(void)
{
	struct wait_graph *g = calloc(1, sizeof(*g));
	if (!g)
		error_msg_and_die("out of memory");
	return g;
}

void
dump_follow_free(struct wait_graph *g)
{
	if (!g)
		return;
	free(g->procs);
	free(g->th);
	free(g);
}

static struct wg_proc *
proc_of(const struct wait_graph *g, pid_t pid)
{
	for (size_t i = 0; i < g->np; i++)
		if (g->procs[i].pid == pid)
			return &g->procs[i];
	return NULL;
}

static struct wg_proc *
add_proc(struct wait_graph *g, pid_t pid)
{
	struct wg_proc *p = proc_of(g, pid);
	if (p)
		return p;
	if (BASE_GROW(g->procs, g->pcap, g->np + 1, 16) < 0)
		error_msg_and_die("out of memory");
	p = &g->procs[g->np++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

void
dump_follow_add(struct wait_graph *g, const struct dump_process *dp, bool given)
{
	struct wg_proc *p = add_proc(g, dp->pid);
	snprintf(p->comm, sizeof(p->comm), "%s", dp->comm);
	p->given = given;
	p->skipped[0] = '\0';
	p->first = g->nt;
	for (size_t i = 0; i < dp->nthreads; i++) {
		const struct dump_thread *d = &dp->threads[i];
		if (!d->tid)
			continue;
		if (BASE_GROW(g->th, g->tcap, g->nt + 1, 64) < 0)
			error_msg_and_die("out of memory");
		struct wg_thread *t = &g->th[g->nt++];
		t->pid = dp->pid;
		t->tid = d->tid;
		snprintf(t->name, sizeof(t->name), "%s", d->name);
		t->state = d->state;
		t->w = d->waits_on;
	}
	p->n = g->nt - p->first;
}

void
dump_follow_given(struct wait_graph *g, pid_t pid)
{
	struct wg_proc *p = proc_of(g, pid);
	if (p)
		p->given = true;
}

void
dump_follow_skip(struct wait_graph *g, pid_t pid, const char *why)
{
	struct wg_proc *p = add_proc(g, pid);
	if (!p->n)
		snprintf(p->skipped, sizeof(p->skipped), "%s", why);
}

size_t
dump_follow_next(const struct wait_graph *g, pid_t *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < g->nt; i++) {
		const struct dump_wait *w = &g->th[i].w;
		for (int k = 0; k < w->npeers; k++) {
			pid_t pid = w->peers[k].pid;
			bool have = proc_of(g, pid) != NULL;
			for (size_t j = 0; j < n && !have; j++)
				have = out[j] == pid;
			if (!have && n < max)
				out[n++] = pid;
		}
	}
	return n;
}

/* ---- chains -------------------------------------------------------------- */

static const struct wg_thread *
thread_of(const struct wait_graph *g, pid_t pid, pid_t tid)
{
	const struct wg_proc *p = proc_of(g, pid);
	for (size_t i = 0; p && i < p->n; i++)
		if (g->th[p->first + i].tid == tid)
			return &g->th[p->first + i];
	return NULL;
}

/* The thread of process p a chain goes on through: its blocked thread
 * with a known wait (the lowest tid of several), NULL if none. */
static const struct wg_thread *
waiting_thread(const struct wait_graph *g, const struct wg_proc *p)
{
	const struct wg_thread *best = NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct wg_thread *t = &g->th[p->first + i];
		if (t->w.kind && (!best || t->tid < best->tid))
			best = t;
	}
	return best;
}

/* One chain: the threads it goes through, and how it ends. */
struct chain {
	const struct wg_thread *step[FOLLOW_MAX_STEPS];
	int n;
	int cycle_at;             /* index of the thread it comes back to, -1 */
	const struct wg_proc *end_proc;  /* ends at a process: no thread of
					    it waits on anything known, or
					    it was not dumped */
	const struct wg_thread *end_thread;  /* ... or at this thread */
};

/* The peer a chain goes on through: the first that itself waits on
 * something known (a pipe's writer that is stuck, not the one that
 * sleeps), else the first. */
static const struct wait_peer *
chosen_peer(const struct wait_graph *g, const struct dump_wait *w)
{
	for (int k = 0; k < w->npeers; k++) {
		const struct wait_peer *pe = &w->peers[k];
		const struct wg_proc *p = proc_of(g, pe->pid);
		const struct wg_thread *t = !p ? NULL : pe->tid ? thread_of(g, pe->pid, pe->tid)
								 : waiting_thread(g, p);
		if (t && t->w.kind)
			return pe;
	}
	return &w->peers[0];
}

static void
walk_chain(const struct wait_graph *g, const struct wg_thread *t, struct chain *c)
{
	memset(c, 0, sizeof(*c));
	c->cycle_at = -1;
	while (t && c->n < FOLLOW_MAX_STEPS) {
		for (int i = 0; i < c->n; i++)
			if (c->step[i] == t) {
				c->cycle_at = i;
				return;
			}
		c->step[c->n++] = t;
		if (!t->w.npeers)
			return;           /* waits on nothing with another end */
		const struct wait_peer *pe = chosen_peer(g, &t->w);
		const struct wg_proc *p = proc_of(g, pe->pid);
		if (!p || p->skipped[0]) {
			c->end_proc = p;
			return;
		}
		const struct wg_thread *next = pe->tid ? thread_of(g, pe->pid, pe->tid)
						       : waiting_thread(g, p);
		if (!next) {
			if (pe->tid)
				c->end_thread = thread_of(g, pe->pid, pe->tid);
			c->end_proc = p;
			return;
		}
		if (!next->w.kind) {
			c->end_thread = next;
			return;
		}
		t = next;
	}
}

/* Does the chain's cycle span more than one process? */
static bool
cross_process(const struct chain *c)
{
	for (int i = c->cycle_at + 1; i < c->n; i++)
		if (c->step[i]->pid != c->step[c->cycle_at]->pid)
			return true;
	return false;
}

/* The cycles found so far, each once (by its lowest thread). */
static bool
same_cycle(const struct chain *a, const struct chain *b)
{
	if (a->n - a->cycle_at != b->n - b->cycle_at)
		return false;
	for (int i = a->cycle_at; i < a->n; i++) {
		bool in = false;
		for (int k = b->cycle_at; k < b->n && !in; k++)
			in = a->step[i] == b->step[k];
		if (!in)
			return false;
	}
	return true;
}

static void
text_name(FILE *out, const char *s)
{
	collapse_text_write(out, s);
}

static void
text_thread(FILE *out, const struct wait_graph *g, const struct wg_thread *t)
{
	const struct wg_proc *p = proc_of(g, t->pid);
	fprintf(out, "thread %d (", (int)t->tid);
	text_name(out, t->name);
	fprintf(out, ") of process %d (", (int)t->pid);
	text_name(out, p ? p->comm : "?");
	putc(')', out);
}

static void
text_end(FILE *out, const struct wait_graph *g, const struct chain *c)
{
	if (c->cycle_at >= 0) {
		fputs("\n    -> back to ", out);
		text_thread(out, g, c->step[c->cycle_at]);
		return;
	}
	const struct wg_thread *last = c->step[c->n - 1];
	if (c->end_proc && c->end_proc->skipped[0]) {
		fprintf(out, "\n    -> %s process %d: not dumped: ",
			last->w.role ? last->w.role : "", (int)c->end_proc->pid);
		text_name(out, c->end_proc->skipped);
	} else if (c->end_thread) {
		fprintf(out, "\n    -> %s ", last->w.role ? last->w.role : "");
		text_thread(out, g, c->end_thread);
		fprintf(out, ", state %c, waiting on nothing known", c->end_thread->state);
	} else if (c->end_proc) {
		fprintf(out, "\n    -> %s process %d (", last->w.role ? last->w.role : "",
			(int)c->end_proc->pid);
		text_name(out, c->end_proc->comm);
		fputs("): no thread of it waits on anything known", out);
		if (c->end_proc->n && (g->th[c->end_proc->first].state == 'T' ||
				       g->th[c->end_proc->first].state == 't'))
			fputs(" (stopped)", out);
	} else if (!c->end_proc && last->w.npeers) {
		fprintf(out, "\n    -> %s process %d: not dumped", last->w.role ? last->w.role : "",
			(int)last->w.peers[0].pid);
	}
}

static void
text_chain(FILE *out, const struct wait_graph *g, const struct chain *c, int no)
{
	fprintf(out, "chain %d: ", no);
	for (int i = 0; i < c->n; i++) {
		const struct wg_thread *t = c->step[i];
		if (i) {
			fprintf(out, "\n    -> %s ", c->step[i - 1]->w.role ? c->step[i - 1]->w.role : "");
		}
		text_thread(out, g, t);
		fprintf(out, " %s ", t->w.verb ? t->w.verb : "waits on");
		text_name(out, t->w.object);
	}
	text_end(out, g, c);
	putc('\n', out);
}

static void
json_step(FILE *out, const struct wg_thread *t, bool first)
{
	fprintf(out, "%s{\"pid\": %d, \"tid\": %d, \"kind\": \"%s\", \"object\": ",
		first ? "" : ", ", (int)t->pid, (int)t->tid, t->w.kind ? t->w.kind : "none");
	collapse_json_string(out, t->w.object);
	putc('}', out);
}

static void
json_chain(FILE *out, const struct wait_graph *g, const struct chain *c, bool first)
{
	fprintf(out, "%s\n  {\"threads\": [", first ? "" : ",");
	for (int i = 0; i < c->n; i++)
		json_step(out, c->step[i], i == 0);
	fputs("], \"end\": ", out);
	if (c->cycle_at >= 0)
		fprintf(out, "{\"cycle\": {\"pid\": %d, \"tid\": %d}}", (int)c->step[c->cycle_at]->pid,
			(int)c->step[c->cycle_at]->tid);
	else if (c->end_proc && c->end_proc->skipped[0])
	{
		fprintf(out, "{\"pid\": %d, \"tid\": null, \"skipped\": ", (int)c->end_proc->pid);
		collapse_json_string(out, c->end_proc->skipped);
		putc('}', out);
	}
	else if (c->end_thread)
		fprintf(out, "{\"pid\": %d, \"tid\": %d, \"state\": \"%c\"}", (int)c->end_thread->pid,
			(int)c->end_thread->tid, c->end_thread->state);
	else if (c->end_proc)
		fprintf(out, "{\"pid\": %d, \"tid\": null, \"state\": \"%c\"}", (int)c->end_proc->pid,
			c->end_proc->n ? g->th[c->end_proc->first].state : '?');
	else
		fputs("null", out);
	putc('}', out);
}

static void
json_cycle(FILE *out, const struct chain *c, bool first)
{
	fprintf(out, "%s\n  {\"threads\": [", first ? "" : ",");
	for (int i = c->cycle_at; i < c->n; i++)
		json_step(out, c->step[i], i == c->cycle_at);
	fprintf(out, "], \"processes\": %s}", cross_process(c) ? "\"several\"" : "\"one\"");
}

/* The chains from every blocked thread of a given process, and the
 * cycles among them (each once). */
static size_t
collect(const struct wait_graph *g, struct chain **out, size_t **cycles, size_t *ncycles)
{
	struct chain *v = NULL;
	size_t n = 0, cap = 0, *cyc = NULL, nc = 0, ccap = 0;
	for (size_t i = 0; i < g->np; i++) {
		const struct wg_proc *p = &g->procs[i];
		for (size_t k = 0; p->given && k < p->n; k++) {
			const struct wg_thread *t = &g->th[p->first + k];
			if (!t->w.kind)
				continue;
			if (BASE_GROW(v, cap, n + 1, 8) < 0)
				error_msg_and_die("out of memory");
			walk_chain(g, t, &v[n]);
			if (v[n].cycle_at >= 0) {
				bool seen = false;
				for (size_t j = 0; j < nc && !seen; j++)
					seen = same_cycle(&v[cyc[j]], &v[n]);
				if (!seen) {
					if (BASE_GROW(cyc, ccap, nc + 1, 8) < 0)
						error_msg_and_die("out of memory");
					cyc[nc++] = n;
				}
			}
			n++;
		}
	}
	*out = v;
	*cycles = cyc;
	*ncycles = nc;
	return n;
}

void
dump_follow_print(FILE *out, enum output_format f, const struct wait_graph *g)
{
	struct chain *c;
	size_t *cyc, nc;
	size_t n = collect(g, &c, &cyc, &nc);
	if (f == OUTPUT_TEXT) {
		fputs("Waits across processes:\n", out);
		if (!n)
			fputs("  no thread of the given processes waits on anything known\n", out);
		for (size_t i = 0; i < nc; i++) {
			const struct chain *k = &c[cyc[i]];
			fputs(cross_process(k) ? "  deadlock across processes: " : "  deadlock: ", out);
			for (int s = k->cycle_at; s < k->n; s++) {
				if (s > k->cycle_at)
					fputs(" -> ", out);
				text_thread(out, g, k->step[s]);
			}
			fputs(" -> back\n", out);
		}
		for (size_t i = 0; i < n; i++) {
			fputs("  ", out);
			text_chain(out, g, &c[i], (int)i + 1);
		}
		for (size_t i = 0; i < g->np; i++)
			if (g->procs[i].skipped[0]) {
				fprintf(out, "  process %d not dumped: ", (int)g->procs[i].pid);
				text_name(out, g->procs[i].skipped);
				putc('\n', out);
			}
		putc('\n', out);
	} else {
		fputs(", \"chains\": [", out);
		for (size_t i = 0; i < n; i++)
			json_chain(out, g, &c[i], i == 0);
		fputs("], \"cycles\": [", out);
		for (size_t i = 0; i < nc; i++)
			json_cycle(out, &c[cyc[i]], i == 0);
		fputs("], \"skipped\": [", out);
		bool first = true;
		for (size_t i = 0; i < g->np; i++) {
			if (!g->procs[i].skipped[0])
				continue;
			fprintf(out, "%s{\"pid\": %d, \"why\": ", first ? "" : ", ", (int)g->procs[i].pid);
			collapse_json_string(out, g->procs[i].skipped);
			putc('}', out);
			first = false;
		}
		fputs("]", out);
	}
	free(c);
	free(cyc);
}
