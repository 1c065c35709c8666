/* sampler/output.c - dump output: text for people, JSON for scripts
 * (DESIGN.md, "dump --format json"). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "collapse/collapse.h"
#include "sampler/sampler.h"

/* Text output: control characters from the target (a thread named with an
 * escape sequence or a newline) must not drive the terminal or forge
 * lines. */
static void
text_string(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		putc(*p < 0x20 || *p == 0x7f ? '?' : *p, out);
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

static void
text_thread(FILE *out, const struct dump_thread *d, struct unwind_target *t, unsigned flags)
{
	fprintf(out, "\nThread %d \"", (int)d->tid);
	text_string(out, d->name);
	fprintf(out, "\" state %c\n", d->state >= 0x20 && d->state < 0x7f ? d->state : '?');
	if (d->error) {
		fprintf(out, "  error: %s\n", d->error);
		return;
	}
	if (!d->sampled) {
		fprintf(out, "  (thread has exited)\n");
		return;
	}
	for (int i = 0; i < d->nframes; i++) {
		struct unwind_symbol sym;
		struct unwind_source_frame src[MAX_INLINE];
		uint64_t ip = d->frames[i].ip;
		int nsrc = source_frames(t, d, i, flags, src);
		unwind_symbolize(t, ip, unwind_frame_is_caller(d->frames, i),
				 flags & ~OUTPUT_SOURCE, &sym);
		/* Inlined functions first, as gdb's bt: same number, same ip. */
		char buf[2048];
		for (int k = 0; k + 1 < nsrc; k++) {
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 " (%s) [inlined]",
				 src[k].function ? src[k].function : "??",
				 src[k].offset, sym.module ? sym.module : "[unknown]");
			fprintf(out, "  #%-2d 0x%016" PRIx64 " ", i, ip);
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
		fprintf(out, "  #%-2d 0x%016" PRIx64 " ", i, ip);
		text_string(out, buf);
		if (nsrc > 0)
			text_at(out, &src[nsrc - 1]);
		if (d->frames[i].signal_frame)
			fputs(" <signal handler called>", out);
		putc('\n', out);
	}
	if (d->stop != UNWIND_STOP_END)
		fprintf(out, "  (unwinding stopped: %s)\n", unwind_stop_reason(d->stop));
}

static void
json_thread(FILE *out, const struct dump_thread *d, struct unwind_target *t, unsigned flags)
{
	fprintf(out, "{\"tid\": %d, \"name\": ", (int)d->tid);
	collapse_json_string(out, d->name);
	char state[2] = { d->state, '\0' };
	fputs(", \"state\": ", out);
	collapse_json_string(out, state);
	fputs(", \"error\": ", out);
	collapse_json_string(out, d->error);
	fprintf(out, ", \"pause_us\": %.1f, \"stop\": ", d->pause_us);
	collapse_json_string(out, d->sampled ? unwind_stop_reason(d->stop) : NULL);
	fputs(", \"frames\": [", out);
	for (int i = 0, nout = 0; i < d->nframes; i++) {
		struct unwind_symbol sym;
		struct unwind_source_frame src[MAX_INLINE];
		uint64_t ip = d->frames[i].ip;
		int nsrc = source_frames(t, d, i, flags, src);
		unwind_symbolize(t, ip, unwind_frame_is_caller(d->frames, i),
				 flags & ~OUTPUT_SOURCE, &sym);
		/* One entry per inlined function, then the physical frame's
		 * (named from the symbol table, as without --source). */
		for (int k = 0; k < (nsrc > 0 ? nsrc : 1); k++) {
			bool inl = k + 1 < nsrc;
			const char *fn = inl ? src[k].function : sym.function;
			fprintf(out, "%s\n    {\"ip\": \"0x%" PRIx64 "\", \"function\": ",
				nout++ ? "," : "", ip);
			collapse_json_string(out, fn);
			if (fn)
				fprintf(out, ", \"offset\": \"0x%" PRIx64 "\"",
					inl ? src[k].offset : sym.offset);
			else
				fputs(", \"offset\": null", out);
			fputs(", \"module\": ", out);
			collapse_json_string(out, sym.module);
			fprintf(out, ", \"module_offset\": \"0x%" PRIx64 "\", \"file\": ",
				sym.module_offset);
			collapse_json_string(out, nsrc > 0 ? src[k].file : NULL);
			if (nsrc > 0 && src[k].line)
				fprintf(out, ", \"line\": %u", src[k].line);
			else
				fputs(", \"line\": null", out);
			fprintf(out, ", \"inlined\": %s, \"signal_frame\": %s, \"how\": \"%s\"}",
				inl ? "true" : "false",
				!inl && d->frames[i].signal_frame ? "true" : "false",
				unwind_how_name(d->frames[i].how));
		}
	}
	fputs("]}", out);
}

int
output_dump(FILE *out, enum output_format f, const struct dump_process *p,
	    struct unwind_target *t, unsigned flags)
{
	if (f == OUTPUT_TEXT) {
		fprintf(out, "Process %d (", (int)p->pid);
		text_string(out, p->comm);
		fprintf(out, "), %zu thread%s, engine %s\n", p->nthreads,
			p->nthreads == 1 ? "" : "s", unwind_engine_name(p->engine));
		for (size_t i = 0; i < p->nthreads; i++)
			text_thread(out, &p->threads[i], t, flags);
	} else {
		fprintf(out, "{\"pid\": %d, \"comm\": ", (int)p->pid);
		collapse_json_string(out, p->comm);
		fprintf(out, ", \"engine\": \"%s\", \"threads\": [", unwind_engine_name(p->engine));
		for (size_t i = 0; i < p->nthreads; i++) {
			fputs(i ? ",\n  " : "\n  ", out);
			json_thread(out, &p->threads[i], t, flags);
		}
		fputs("]}\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
