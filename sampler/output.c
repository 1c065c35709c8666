/* sampler/output.c - dump output: text for people, JSON for scripts
 * (DESIGN.md, "dump --format json"). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "collapse/collapse.h"
#include "ptrace/procfs.h"
#include "sampler/output.h"
#include "unwind/unwind.h"

/* Text output: control characters from the target (a thread named with an
 * escape sequence or a newline) must not drive the terminal or forge
 * lines: the one rule of collapse/text.c. */
static void
text_string(FILE *out, const char *s)
{
	collapse_text_write(out, s);
}

/* Names by (ip, caller) for one dump_output call: the threads of a
 * process share most of their frames (1000 parked threads: 7 distinct
 * ips for 7000 frames), and naming one is a binary search, a symbol
 * lookup and a demangling.  The strings belong to the target. */
struct sym_entry {
	uint64_t key;             /* ip << 1 | caller (ip 0 is not cached) */
	struct unwind_symbol sym;
};
static struct sym_entry *sym_cache;
static size_t sym_cache_n, sym_cache_cap;
static struct base_index sym_index;   /* key -> position in sym_cache */

static void
sym_cache_reset(void)
{
	free(sym_cache);
	sym_cache = NULL;
	sym_cache_n = sym_cache_cap = 0;
	base_index_free(&sym_index);
}

static bool
sym_equal(const void *owner, const void *key, uint32_t id)
{
	return ((const struct sym_entry *)owner)[id].key == *(const uint64_t *)key;
}

static void
symbolize_cached(struct unwind_target *t, uint64_t ip, bool caller, unsigned flags,
		 struct unwind_symbol *sym)
{
	uint64_t key = ip << 1 | (caller ? 1 : 0);
	if (!ip || ip >> 63) {
		unwind_symbolize(t, ip, caller, flags, sym);
		return;
	}
	uint64_t hash = base_mix64(key);
	uint32_t id = base_index_find(&sym_index, hash, sym_equal, sym_cache, &key);
	if (id != BASE_INDEX_NONE) {
		*sym = sym_cache[id].sym;
		return;
	}
	unwind_symbolize(t, ip, caller, flags, sym);
	/* Out of memory: named, not cached. */
	if (sym_cache_n >= UINT32_MAX - 1 ||
	    BASE_GROW(sym_cache, sym_cache_cap, sym_cache_n + 1, 128) < 0 ||
	    base_index_insert(&sym_index, hash, (uint32_t)sym_cache_n) < 0)
		return;
	sym_cache[sym_cache_n++] = (struct sym_entry){ .key = key, .sym = *sym };
}

/* Source-level frames per physical frame that --source prints at most. */
#define MAX_INLINE 32

/* With OUTPUT_SOURCE: the source frames of frame i (see unwind_source), the
 * physical one last; 0 without debug information or --source. */
static int
source_frames(struct unwind_target *t, const struct dump_thread *d, int i,
	      unsigned flags, struct unwind_source_frame *src)
{
	int n;

	if (!(flags & OUTPUT_SOURCE))
		return 0;
	n = unwind_source(t, d->frames[i].ip, unwind_frame_is_caller(d->frames, i),
			  flags & ~OUTPUT_SOURCE, src, MAX_INLINE);
	return n > 0 ? n : 0;
}

static void
text_at(FILE *out, const struct unwind_source_frame *s)
{
	if (!s->file)
		return;
	fputs(" at ", out);
	text_string(out, s->file);
	if (s->line)
		fprintf(out, ":%u", s->line);
}

static const struct dump_thread *
find_thread(const struct dump_process *p, pid_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return &p->threads[i];
	return NULL;
}

/* "thread 12 (name)" */
static void
text_thread_ref(FILE *out, const struct dump_process *p, pid_t tid)
{
	const struct dump_thread *d = find_thread(p, tid);
	fprintf(out, "thread %d", (int)tid);
	if (d) {
		fputs(" (", out);
		text_string(out, d->name);
		putc(')', out);
	}
}


/* "waits for mutex 0x... (name) held by thread 12 (name)" */
static void
text_wait(FILE *out, const struct dump_process *p, const struct dump_thread *d)
{
	fprintf(out, "waits for %s 0x%" PRIx64, d->wait_kind, d->wait_addr);
	if (d->wait_symbol[0]) {
		fputs(" (", out);
		text_string(out, d->wait_symbol);
		putc(')', out);
	}
	if (d->wait_owner) {
		fputs(" held by ", out);
		text_thread_ref(out, p, d->wait_owner);
	}
}

/* What the thread waits for (sampler/locks.c) and how it was read, as
 * the note at the end of its first frame line ("<...>", the one place the
 * text format has for notes: tests/jsonq.py parses the rest). */
static void
text_note(FILE *out, const struct dump_process *p, const struct dump_thread *d)
{
	const char *sep = " <";
	if (d->unstopped) {
		fprintf(out, "%snot stopped, read while blocked", sep);
		if (d->in_syscall)
			fprintf(out, " in system call %" PRId64, d->syscall_nr);
		sep = "; ";
	}
	if (d->wchan[0]) {
		fprintf(out, "%swchan ", sep);
		text_string(out, d->wchan);
		sep = "; ";
	}
	if (d->wait_kind) {
		fputs(sep, out);
		text_wait(out, p, d);
		sep = "; ";
	}
	if (sep[0] == ';')
		putc('>', out);
}

/* The stack of d: kernel frames (innermost, marked), then user frames. */
static void text_frames(FILE *out, const struct dump_process *p, const struct dump_thread *d,
			struct unwind_target *t, unsigned flags);

static void
text_thread(FILE *out, const struct dump_process *p, const struct dump_thread *d,
	    struct unwind_target *t, unsigned flags)
{
	fprintf(out, "\nThread %d \"", (int)d->tid);
	text_string(out, d->name);
	fprintf(out, "\" state %c%s\n", d->state >= 0x20 && d->state < 0x7f ? d->state : '?',
		p->gil_holder && p->gil_holder == d->tid ? ", holds the GIL" : "");
	text_frames(out, p, d, t, flags);
}

/* A Python frame: "#5  [python]  handler at app/views.py:42".  false for
 * a native one. */
static bool
text_python_frame(FILE *out, struct unwind_target *t, const struct unwind_frame *f, int no)
{
	struct unwind_python_name py;
	if (!unwind_python_name(t, f, &py))
		return false;
	fprintf(out, "  #%-2d %-18s ", no, "[python]");
	text_string(out, py.function);
	fputs(" at ", out);
	text_string(out, py.file);
	if (py.line)
		fprintf(out, ":%u", py.line);
	putc('\n', out);
	return true;
}

static void
text_frames(FILE *out, const struct dump_process *p, const struct dump_thread *d,
	    struct unwind_target *t, unsigned flags)
{
	/* (text_waits' section, when there is one, comes before the first
	 * thread: after the header's blank line, ending at its own.) */
	/* The note goes on the first user frame, else the first kernel one. */
	int note_at = d->nframes > 0 ? d->nkframes : 0;
	if (d->error) {
		/* It may name a file of the target. */
		fputs("  error: ", out);
		text_string(out, d->error);
		putc('\n', out);
		return;
	}
	if (!d->sampled) {
		fprintf(out, "  (thread has exited)\n");
		return;
	}
	for (int k = 0; k < d->nkframes; k++) {
		const struct kernel_frame *kf = &d->kframes[k];
		char fn[160];
		snprintf(fn, sizeof(fn), "%s+0x%" PRIx64, kf->function, kf->offset);
		fprintf(out, "  #%-2d 0x%016" PRIx64 " ", k, kf->addr);
		text_string(out, fn);
		fputs(" ([kernel])", out);
		if (k == note_at)
			text_note(out, p, d);
		putc('\n', out);
	}
	for (int i = 0; i < d->nframes; i++) {
		struct unwind_symbol sym;
		struct unwind_source_frame src[MAX_INLINE];
		uint64_t ip = d->frames[i].ip;
		if (text_python_frame(out, t, &d->frames[i], i + d->nkframes))
			continue;
		int nsrc = source_frames(t, d, i, flags, src);
		symbolize_cached(t, ip, unwind_frame_is_caller(d->frames, i),
				 flags & ~OUTPUT_SOURCE, &sym);
		/* Inlined functions first, as gdb's bt: same number, same ip. */
		char buf[2048];
		for (int k = 0; k + 1 < nsrc; k++) {
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 " (%s) [inlined]",
				 src[k].function ? src[k].function : "??",
				 src[k].offset, sym.module ? sym.module : "[unknown]");
			fprintf(out, "  #%-2d 0x%016" PRIx64 " ", i + d->nkframes, ip);
			text_string(out, buf);
			text_at(out, &src[k]);
			putc('\n', out);
		}
		if (sym.function)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 " (%s)", sym.function, sym.offset,
				 sym.module ? sym.module : "[unknown]");
		else if (sym.module)
			snprintf(buf, sizeof(buf), "?? (%s+0x%" PRIx64 ")", sym.module, sym.module_offset);
		else
			snprintf(buf, sizeof(buf), "?? ([unknown])");
		fprintf(out, "  #%-2d 0x%016" PRIx64 " ", i + d->nkframes, ip);
		text_string(out, buf);
		if (nsrc > 0)
			text_at(out, &src[nsrc - 1]);
		if (d->frames[i].signal_frame)
			fputs(" <signal handler called>", out);
		else if (i + d->nkframes == note_at)
			text_note(out, p, d);
		else if (d->frames[i].how == UNWIND_HOW_SCAN)
			fputs(" <guessed: found by scanning the stack>", out);
		putc('\n', out);
	}
	if (d->stop != UNWIND_STOP_END)
		fprintf(out, "  (unwinding stopped: %s%s)\n", unwind_stop_reason(d->stop),
			d->unstopped ? "; only sp, pc and the system call's argument"
				       " registers were known" : "");
}

/* The value of "waits_for": the object (and a mutex's owner), or null. */
/* v as 0x and lowercase hex digits, as "0x%" PRIx64 prints it. */
static void
put_hex(FILE *out, uint64_t v)
{
	char buf[2 + 16];
	size_t n = sizeof(buf);
	do {
		buf[--n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[--n] = 'x';
	buf[--n] = '0';
	fwrite(buf + n, 1, sizeof(buf) - n, out);
}

static void
json_waits_for(FILE *out, const struct dump_thread *d)
{
	if (!d->wait_kind) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"%s\": \"0x%" PRIx64 "\", \"symbol\": ", d->wait_kind, d->wait_addr);
	collapse_json_string(out, d->wait_symbol[0] ? d->wait_symbol : NULL);
	if (strcmp(d->wait_kind, "mutex") == 0) {
		if (d->wait_owner)
			fprintf(out, ", \"owner\": %d", (int)d->wait_owner);
		else
			fputs(", \"owner\": null", out);
	}
	putc('}', out);
}

/* "waits_on": null, or {"kind", "object", "owner"|"peer": {pid, tid},
 * "peers": [...]}. */
static void
json_waits_on(FILE *out, const struct dump_wait *w)
{
	if (!w->kind) {
		fputs("null", out);
		return;
	}
	fprintf(out, "{\"kind\": \"%s\", \"object\": ", w->kind);
	collapse_json_string(out, w->object);
	if (w->npeers) {
		fprintf(out, ", \"%s\": {\"pid\": %d, \"tid\": ",
			strcmp(w->kind, "mutex") == 0 || strcmp(w->kind, "rwlock") == 0 ? "owner" : "peer",
			(int)w->peers[0].pid);
		if (w->peers[0].tid)
			fprintf(out, "%d}", (int)w->peers[0].tid);
		else
			fputs("null}", out);
	}
	fputs(", \"peers\": [", out);
	for (int k = 0; k < w->npeers; k++) {
		char comm[64] = "";
		ptrace_read_comm(w->peers[k].pid, comm, sizeof(comm));
		fprintf(out, "%s{\"pid\": %d, \"tid\": ", k ? ", " : "", (int)w->peers[k].pid);
		if (w->peers[k].tid)
			fprintf(out, "%d", (int)w->peers[k].tid);
		else
			fputs("null", out);
		fputs(", \"comm\": ", out);
		collapse_json_string(out, comm[0] ? comm : NULL);
		putc('}', out);
	}
	fprintf(out, "], \"more\": %s}", w->more_peers ? "true" : "false");
}

static void
json_thread(FILE *out, const struct dump_process *p, const struct dump_thread *d,
	    struct unwind_target *t, unsigned flags)
{
	fprintf(out, "{\"tid\": %d, \"name\": ", (int)d->tid);
	collapse_json_string(out, d->name);
	char state[2] = { d->state, '\0' };
	fputs(", \"state\": ", out);
	collapse_json_string(out, state);
	fputs(", \"error\": ", out);
	collapse_json_string(out, d->error);
	fprintf(out, ", \"pause_us\": %.1f, \"unstopped\": %s, \"wchan\": ", d->pause_us,
		d->unstopped ? "true" : "false");
	collapse_json_string(out, d->wchan[0] ? d->wchan : NULL);
	if (d->in_syscall)
		fprintf(out, ", \"syscall\": %" PRId64, d->syscall_nr);
	else
		fputs(", \"syscall\": null", out);
	fputs(", \"waits_for\": ", out);
	json_waits_for(out, d);
	fputs(", \"waits_on\": ", out);
	json_waits_on(out, &d->waits_on);
	if (p->python_version)
		fprintf(out, ", \"holds_gil\": %s", p->gil_holder == d->tid ? "true" : "false");
	fputs(", \"stop\": ", out);
	/* A thread read unstopped has most registers unknown: a walk that
	 * ends on a bad frame or read ends where one was needed. */
	if (d->sampled && d->unstopped &&
	    (d->stop == UNWIND_STOP_BAD_FRAME || d->stop == UNWIND_STOP_MEMORY))
		collapse_json_string(out, "register unknown");
	else
		collapse_json_string(out, d->sampled ? unwind_stop_reason(d->stop) : NULL);
	fputs(", \"frames\": [", out);
	int nout = 0;
	for (int k = 0; d->sampled && k < d->nkframes; k++) {
		const struct kernel_frame *kf = &d->kframes[k];
		uint64_t addr = kf->addr;
		const char *fn = kf->function;
		unsigned long long off = kf->offset;
		fprintf(out, "%s\n    {\"kernel\": true, \"ip\": \"0x%" PRIx64 "\", \"function\": ",
			nout++ ? "," : "", addr);
		collapse_json_string(out, fn);
		fprintf(out, ", \"offset\": \"0x%llx\", \"module\": \"[kernel]\", "
			"\"module_offset\": null, \"file\": null, \"line\": null, "
			"\"inlined\": false, \"signal_frame\": false, \"how\": \"kernel\"}", off);
	}
	for (int i = 0; i < d->nframes; i++) {
		struct unwind_symbol sym;
		struct unwind_source_frame src[MAX_INLINE];
		uint64_t ip = d->frames[i].ip;
		struct unwind_python_name py;
		if (unwind_python_name(t, &d->frames[i], &py)) {
			/* ip: the code object; offset: the instruction's in its
			 * bytecode. */
			fprintf(out, "%s\n    {\"kernel\": false, \"lang\": \"python\", \"ip\": \"0x%"
				PRIx64 "\", \"function\": ", nout++ ? "," : "", py.code);
			collapse_json_string(out, py.function);
			fprintf(out, ", \"offset\": \"0x%" PRIx32 "\", \"module\": null, "
				"\"module_offset\": null, \"file\": ", py.offset);
			collapse_json_string(out, py.file);
			if (py.line)
				fprintf(out, ", \"line\": %u", py.line);
			else
				fputs(", \"line\": null", out);
			fputs(", \"inlined\": false, \"signal_frame\": false, \"how\": \"python\"}", out);
			continue;
		}
		int nsrc = source_frames(t, d, i, flags, src);
		symbolize_cached(t, ip, unwind_frame_is_caller(d->frames, i),
				 flags & ~OUTPUT_SOURCE, &sym);
		/* One entry per inlined function, then the physical frame's
		 * (named from the symbol table, as without --source). */
		/* Without fprintf: its format parsing, four times a frame,
		 * was most of a 1000-thread dump's JSON. */
		for (int k = 0; k < (nsrc > 0 ? nsrc : 1); k++) {
			bool inl = k + 1 < nsrc;
			const char *fn = inl ? src[k].function : sym.function;
			fputs(nout++ ? ",\n    {\"kernel\": false, \"lang\": \"c\", \"ip\": \"" :
				       "\n    {\"kernel\": false, \"lang\": \"c\", \"ip\": \"", out);
			put_hex(out, ip);
			fputs("\", \"function\": ", out);
			collapse_json_string(out, fn);
			if (fn) {
				fputs(", \"offset\": \"", out);
				put_hex(out, inl ? src[k].offset : sym.offset);
				putc('"', out);
			} else {
				fputs(", \"offset\": null", out);
			}
			fputs(", \"module\": ", out);
			collapse_json_string(out, sym.module);
			fputs(", \"module_offset\": \"", out);
			put_hex(out, sym.module_offset);
			fputs("\", \"file\": ", out);
			collapse_json_string(out, nsrc > 0 ? src[k].file : NULL);
			if (nsrc > 0 && src[k].line)
				fprintf(out, ", \"line\": %u", src[k].line);
			else
				fputs(", \"line\": null", out);
			fputs(inl ? ", \"inlined\": true" : ", \"inlined\": false", out);
			fputs(!inl && d->frames[i].signal_frame ? ", \"signal_frame\": true, \"how\": \"" :
				", \"signal_frame\": false, \"how\": \"", out);
			fputs(unwind_how_name(d->frames[i].how), out);
			fputs("\"}", out);
		}
	}
	fputs("]}", out);
}

/* Deadlocks first: they are what a hang dump is read for. */
static void
text_deadlocks(FILE *out, const struct dump_process *p)
{
	for (size_t c = 0; c < p->ncycles; c++) {
		fputs("deadlock: ", out);
		for (size_t k = 0; k < p->ncycle[c]; k++) {
			const struct dump_thread *d = &p->threads[p->cycles[c][k]];
			if (k)
				fputs(", ", out);
			text_thread_ref(out, p, d->tid);
			fprintf(out, " waits for mutex 0x%" PRIx64, d->wait_addr);
			if (d->wait_symbol[0]) {
				fputs(" (", out);
				text_string(out, d->wait_symbol);
				putc(')', out);
			}
			fputs(" held by ", out);
			text_thread_ref(out, p, d->wait_owner);
		}
		putc('\n', out);
	}
}

static void
json_deadlocks(FILE *out, const struct dump_process *p)
{
	fputs(", \"deadlocks\": [", out);
	for (size_t c = 0; c < p->ncycles; c++) {
		fputs(c ? ", {\"threads\": [" : "{\"threads\": [", out);
		for (size_t k = 0; k < p->ncycle[c]; k++)
			fprintf(out, "%s%d", k ? ", " : "", (int)p->threads[p->cycles[c][k]].tid);
		fputs("], \"mutexes\": [", out);
		for (size_t k = 0; k < p->ncycle[c]; k++)
			fprintf(out, "%s\"0x%" PRIx64 "\"", k ? ", " : "",
				p->threads[p->cycles[c][k]].wait_addr);
		fputs("]}", out);
	}
	putc(']', out);
}

void
dump_python_facts(struct dump_process *p, struct unwind_target *t)
{
	unwind_python_prepare(t);
	p->python_version = unwind_python_version(t);
	const char *note = unwind_python_note(t);
	snprintf(p->python_note, sizeof(p->python_note), "%s", note ? note : "");
	p->gil_holder = unwind_python_gil_holder(t);
}

/* "process 901 (php-fpm)" or "thread 902 of process 901 (php-fpm)". */
static void
text_peer(FILE *out, const struct wait_peer *w)
{
	char comm[64] = "";
	ptrace_read_comm(w->pid, comm, sizeof(comm));
	if (w->tid && w->tid != w->pid)
		fprintf(out, "thread %d of ", (int)w->tid);
	fprintf(out, "process %d (", (int)w->pid);
	text_string(out, comm[0] ? comm : "?");
	putc(')', out);
}

/* One line per blocked thread whose wait is known: what, and who is at
 * the other end ("Waits:" before the stacks). */
static void
text_waits(FILE *out, const struct dump_process *p)
{
	bool any = false;
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct dump_thread *d = &p->threads[i];
		const struct dump_wait *w = &d->waits_on;
		if (!w->kind)
			continue;
		if (!any)
			fputs("\nWaits:\n", out);
		any = true;
		fprintf(out, "  thread %d (", (int)d->tid);
		text_string(out, d->name);
		fprintf(out, ") %s ", w->verb ? w->verb : "waits on");
		text_string(out, w->object);
		for (int k = 0; k < w->npeers; k++) {
			fprintf(out, "%s", k ? ", " : w->role ? ", " : ": ");
			if (!k && w->role)
				fprintf(out, "%s ", w->role);
			text_peer(out, &w->peers[k]);
		}
		if (w->more_peers)
			fputs(", ...", out);
		if (!w->npeers && (!strcmp(w->kind, "pipe") || !strcmp(w->kind, "socket")))
			fputs(", no other end found", out);
		putc('\n', out);
	}
}

/* The interpreter's line: its version, who holds the GIL, or why its
 * frames are not shown. */
static void
text_python(FILE *out, const struct dump_process *p)
{
	if (p->python_version)
		fprintf(out, "Python %u.%u.%u", p->python_version >> 24,
			(p->python_version >> 16) & 0xff, (p->python_version >> 8) & 0xff);
	if (p->python_note[0]) {
		fputs(p->python_version ? ": " : "Python: ", out);
		text_string(out, p->python_note);
		fputs("; native frames only", out);
	} else if (p->python_version && p->gil_holder) {
		fprintf(out, ", thread %d holds the GIL", (int)p->gil_holder);
	} else if (p->python_version) {
		fputs(", no thread holds the GIL", out);
	}
	if (p->python_version || p->python_note[0])
		putc('\n', out);
}

/* "python": null, or {"version": "3.11.2", "gil": tid|null, "note": ...}. */
static void
json_python(FILE *out, const struct dump_process *p)
{
	fputs(", \"python\": ", out);
	if (!p->python_version && !p->python_note[0]) {
		fputs("null", out);
		return;
	}
	fputs("{\"version\": ", out);
	if (p->python_version)
		fprintf(out, "\"%u.%u.%u\"", p->python_version >> 24,
			(p->python_version >> 16) & 0xff, (p->python_version >> 8) & 0xff);
	else
		fputs("null", out);
	if (p->gil_holder)
		fprintf(out, ", \"gil\": %d", (int)p->gil_holder);
	else
		fputs(", \"gil\": null", out);
	fputs(", \"note\": ", out);
	collapse_json_string(out, p->python_note[0] ? p->python_note : NULL);
	putc('}', out);
}

/* --group: threads with the same stack (same frames, kernel frames and
 * error) are one group. */
static bool
same_stack(const struct dump_thread *a, const struct dump_thread *b)
{
	if (a->sampled != b->sampled || a->nframes != b->nframes ||
	    a->nkframes != b->nkframes || a->stop != b->stop)
		return false;
	if ((a->error == NULL) != (b->error == NULL) ||
	    (a->error && strcmp(a->error, b->error) != 0))
		return false;
	for (int i = 0; i < a->nframes; i++)
		if (a->frames[i].ip != b->frames[i].ip || a->frames[i].line != b->frames[i].line)
			return false;
	for (int k = 0; k < a->nkframes; k++)
		if (strcmp(a->kframes[k].function, b->kframes[k].function) != 0 ||
		    a->kframes[k].offset != b->kframes[k].offset)
			return false;
	return true;
}

/* Do a and b wait for the same object (or neither for one)? */
static bool
same_wait(const struct dump_thread *a, const struct dump_thread *b)
{
	if (!a->wait_kind || !b->wait_kind)
		return !a->wait_kind && !b->wait_kind;
	return strcmp(a->wait_kind, b->wait_kind) == 0 && a->wait_addr == b->wait_addr &&
	       a->wait_owner == b->wait_owner;
}

struct stack_group {
	size_t first;             /* index of the first thread */
	size_t count;
	bool one_wait;            /* every thread waits for the first's object */
};

static int
cmp_group(const void *x, const void *y)
{
	const struct stack_group *a = x, *b = y;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return (a->first > b->first) - (a->first < b->first);
}

/* group_of[i]: the group of thread i; returns the groups, most common
 * first (ties: in thread order).  Hashing the stacks would be faster; a
 * dump has at most a few distinct stacks per thread scanned. */
static struct stack_group *
make_groups(const struct dump_process *p, size_t *group_of, size_t *ngroups)
{
	struct stack_group *g = calloc(p->nthreads ? p->nthreads : 1, sizeof(*g));
	if (!g)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		size_t k = 0;
		while (k < n && !same_stack(&p->threads[g[k].first], &p->threads[i]))
			k++;
		if (k == n) {
			g[n].first = i;
			g[n++].one_wait = true;
		}
		g[k].count++;
		g[k].one_wait &= same_wait(&p->threads[g[k].first], &p->threads[i]);
		group_of[i] = g[k].first;
	}
	qsort(g, n, sizeof(*g), cmp_group);
	*ngroups = n;
	return g;
}

static int
output_groups(FILE *out, enum output_format f, const struct dump_process *p,
	      struct unwind_target *t, unsigned flags)
{
	size_t *group_of = calloc(p->nthreads ? p->nthreads : 1, sizeof(*group_of));
	size_t ng = 0;
	struct stack_group *g = group_of ? make_groups(p, group_of, &ng) : NULL;
	if (!g) {
		free(group_of);
		return -ENOMEM;
	}
	if (f == OUTPUT_JSON)
		fputs(", \"groups\": [", out);
	for (size_t k = 0; k < ng; k++) {
		/* Threads with one stack that wait for different objects (a
		 * condition variable per worker): the stack is shown without
		 * an object, and each thread with its own, never the first
		 * thread's object for all of them. */
		struct dump_thread shown = p->threads[g[k].first];
		bool each = !g[k].one_wait;
		if (each) {
			shown.wait_kind = NULL;
			shown.wait_symbol[0] = '\0';
			shown.wait_owner = 0;
		}
		if (f == OUTPUT_TEXT) {
			fprintf(out, "\n%zu thread%s:", g[k].count, g[k].count == 1 ? "" : "s");
			for (size_t i = 0, n = 0; i < p->nthreads; i++) {
				const struct dump_thread *d = &p->threads[i];
				if (group_of[i] != g[k].first)
					continue;
				fprintf(out, "%s %d \"", n++ ? "," : "", (int)d->tid);
				text_string(out, d->name);
				putc('"', out);
				if (each && d->wait_kind) {
					fputs(" (", out);
					text_wait(out, p, d);
					putc(')', out);
				}
			}
			putc('\n', out);
			text_frames(out, p, &shown, t, flags);
			continue;
		}
		fprintf(out, "%s\n  {\"count\": %zu, \"threads\": [", k ? "," : "", g[k].count);
		for (size_t i = 0, n = 0; i < p->nthreads; i++) {
			const struct dump_thread *d = &p->threads[i];
			if (group_of[i] != g[k].first)
				continue;
			fprintf(out, "%s{\"tid\": %d, \"name\": ", n++ ? ", " : "", (int)d->tid);
			collapse_json_string(out, d->name);
			if (each) {
				fputs(", \"waits_for\": ", out);
				json_waits_for(out, d);
			}
			putc('}', out);
		}
		fputs("], \"stack\": ", out);
		json_thread(out, p, &shown, t, flags);
		putc('}', out);
	}
	if (f == OUTPUT_JSON)
		fputs("]}\n", out);
	free(g);
	free(group_of);
	return 0;
}

static int output_dump_cached(FILE *out, enum output_format f, const struct dump_process *p,
			      struct unwind_target *t, unsigned flags, bool group);

int
dump_output(FILE *out, enum output_format f, const struct dump_process *p,
	    struct unwind_target *t, unsigned flags)
{
	bool group = flags & OUTPUT_GROUP;
	flags &= ~(unsigned)OUTPUT_GROUP;
	sym_cache_reset();
	/* One writer (this thread; the unwinder's is joined): stdio's lock
	 * on every putc and fprintf, taken because stackspy has had a second
	 * thread, was most of the time of a 1000-thread dump's output. */
	int locking = __fsetlocking(out, FSETLOCKING_BYCALLER);
	int r = output_dump_cached(out, f, p, t, flags, group);
	__fsetlocking(out, locking);
	sym_cache_reset();
	return r;
}

static int
output_dump_cached(FILE *out, enum output_format f, const struct dump_process *p,
		   struct unwind_target *t, unsigned flags, bool group)
{
	if (f == OUTPUT_TEXT) {
		if (p->only_tid)
			fprintf(out, "Thread %d of process %d (", (int)p->only_tid, (int)p->pid);
		else
			fprintf(out, "Process %d (", (int)p->pid);
		text_string(out, p->comm);
		fprintf(out, "), %zu thread%s, engine %s\n", p->nthreads,
			p->nthreads == 1 ? "" : "s", unwind_engine_name(p->engine));
		text_python(out, p);
		text_deadlocks(out, p);
		/* --group: 1000 threads on one pipe are one group, not 1000
		 * lines (JSON keeps each thread's waits_on). */
		if (!group)
			text_waits(out, p);
		if (group) {
			if (output_groups(out, f, p, t, flags) < 0)
				return -ENOMEM;
		} else {
			for (size_t i = 0; i < p->nthreads; i++)
				text_thread(out, p, &p->threads[i], t, flags);
		}
	} else {
		fprintf(out, "{\"pid\": %d, ", (int)p->pid);
		if (p->only_tid)
			fprintf(out, "\"tid\": %d, ", (int)p->only_tid);
		fputs("\"comm\": ", out);
		collapse_json_string(out, p->comm);
		fprintf(out, ", \"engine\": \"%s\", \"unstopped\": %zu", unwind_engine_name(p->engine),
			p->nunstopped);
		json_deadlocks(out, p);
		json_python(out, p);
		if (group)
			return output_groups(out, f, p, t, flags) < 0 ? -ENOMEM
			       : ferror(out) ? -EIO : 0;
		fputs(", \"threads\": [", out);
		for (size_t i = 0; i < p->nthreads; i++) {
			fputs(i ? ",\n  " : "\n  ", out);
			json_thread(out, p, &p->threads[i], t, flags);
		}
		fputs("]}\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
