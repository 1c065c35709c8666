/* sampler/output.c - dump output: text for people, JSON for scripts
 * (DESIGN.md, "dump --format json"). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sampler/sampler.h"

static void
json_string(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	putc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				fprintf(out, "\\u%04x", *p);
			else
				putc(*p, out);
		}
	}
	putc('"', out);
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
	if (s->file && s->line)
		fprintf(out, " at %s:%u", s->file, s->line);
	else if (s->file)
		fprintf(out, " at %s", s->file);
}

static void
text_thread(FILE *out, const struct dump_thread *d, struct unwind_target *t, unsigned flags)
{
	fprintf(out, "\nThread %d \"%s\" state %c\n", (int)d->tid, d->name, d->state);
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
		for (int k = 0; k + 1 < nsrc; k++) {
			fprintf(out, "  #%-2d 0x%016" PRIx64 " %s+0x%" PRIx64 " (%s) [inlined]",
				i, ip, src[k].function ? src[k].function : "??",
				src[k].offset, sym.module ? sym.module : "[unknown]");
			text_at(out, &src[k]);
			putc('\n', out);
		}
		fprintf(out, "  #%-2d 0x%016" PRIx64 " ", i, ip);
		if (sym.function)
			fprintf(out, "%s+0x%" PRIx64 " (%s)", sym.function, sym.offset,
				sym.module ? sym.module : "[unknown]");
		else if (sym.module)
			fprintf(out, "?? (%s+0x%" PRIx64 ")", sym.module, sym.module_offset);
		else
			fputs("?? ([unknown])", out);
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
	json_string(out, d->name);
	fprintf(out, ", \"state\": \"%c\", \"error\": ", d->state);
	json_string(out, d->error);
	fprintf(out, ", \"pause_us\": %.1f, \"stop\": ", d->pause_us);
	json_string(out, d->sampled ? unwind_stop_reason(d->stop) : NULL);
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
			json_string(out, fn);
			if (fn)
				fprintf(out, ", \"offset\": \"0x%" PRIx64 "\"",
					inl ? src[k].offset : sym.offset);
			else
				fputs(", \"offset\": null", out);
			fputs(", \"module\": ", out);
			json_string(out, sym.module);
			fprintf(out, ", \"module_offset\": \"0x%" PRIx64 "\", \"file\": ",
				sym.module_offset);
			json_string(out, nsrc > 0 ? src[k].file : NULL);
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
		fprintf(out, "Process %d (%s), %zu thread%s, engine %s\n", (int)p->pid, p->comm,
			p->nthreads, p->nthreads == 1 ? "" : "s", unwind_engine_name(p->engine));
		for (size_t i = 0; i < p->nthreads; i++)
			text_thread(out, &p->threads[i], t, flags);
	} else {
		fprintf(out, "{\"pid\": %d, \"comm\": ", (int)p->pid);
		json_string(out, p->comm);
		fprintf(out, ", \"engine\": \"%s\", \"threads\": [", unwind_engine_name(p->engine));
		for (size_t i = 0; i < p->nthreads; i++) {
			fputs(i ? ",\n  " : "\n  ", out);
			json_thread(out, &p->threads[i], t, flags);
		}
		fputs("]}\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
