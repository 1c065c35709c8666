/* sampler/dump-core.c - dump --core: the stacks of a core file's threads. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptrace/sample.h"
#include "sampler/dump-internal.h"
#include "sampler/error.h"
#include "sampler/out-file.h"
#include "sampler/output.h"
#include "unwind/unwind.h"

static int
cmp_thread_tid(const void *a, const void *b)
{
	const struct dump_thread *x = a, *y = b;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* dump --core: the same output from a core file.  Every thread was
 * "sampled" when the process died; its stack is read from the core. */
int
dump_core(const struct dump_options *o, bool *partial)
{
	char why[256];
	int r = 0;
	struct unwind_target *ut = unwind_target_open_core(o->core, o->exe, o->sysroot,
							   &r, why, sizeof(why));
	if (!ut) {
		error_msg("cannot read core file '%s': %s", o->core,
			  why[0] ? why : strerror(-r));
		return r;
	}
	const char *w;
	for (size_t i = 0; (w = unwind_core_warning(ut, i)) != NULL; i++)
		error_msg("warning: core file '%s': %s", o->core, w);
	struct unwind_core_info info;
	unwind_core_info(ut, &info);
	struct dump_process p;
	memset(&p, 0, sizeof(p));
	p.pid = info.pid;
	p.engine = o->cfg.engine;
	snprintf(p.comm, sizeof(p.comm), "%s", info.comm);
	p.threads = calloc(info.nthreads, sizeof(*p.threads));
	if (!p.threads)
		error_msg_and_die("out of memory");
	struct unwind_frame *scratch = NULL;
	for (size_t i = 0; i < info.nthreads; i++) {
		struct stack_snapshot s;
		if (unwind_core_thread(ut, i, &s) < 0 || (o->tid && s.tid != o->tid))
			continue;
		struct dump_thread *d = &p.threads[p.nthreads];
		d->tid = s.tid;
		d->state = info.state;
		/* A core keeps no thread names: the process's for all. */
		snprintf(d->name, sizeof(d->name), "%s", info.comm);
		d->sampled = true;
		if (!scratch && !(scratch = malloc((size_t)o->cfg.max_depth * sizeof(*scratch))))
			error_msg_and_die("out of memory");
		d->nframes = unwind_walk(ut, o->cfg.engine, &s, scratch, o->cfg.max_depth, &d->stop);
		if (d->nframes < 0)
			d->nframes = 0;
		/* Only the frames found: --max-depth 0 is a million. */
		d->frames = malloc((d->nframes ? (size_t)d->nframes : 1) * sizeof(*d->frames));
		if (!d->frames)
			error_msg_and_die("out of memory");
		memcpy(d->frames, scratch, (size_t)d->nframes * sizeof(*d->frames));
		if (d->nframes == 0 && d->stop == UNWIND_STOP_UNSUPPORTED) {
			d->error = "the engine cannot unwind this core's architecture";
			*partial = true;
		}
		p.nthreads++;
	}
	/* Its CPython's frames were read from the core's memory. */
	dump_python_facts(&p, ut);
	if (o->tid && p.nthreads == 0) {
		error_msg("thread %d is not in core file '%s'", (int)o->tid, o->core);
		r = -ESRCH;
	} else {
		qsort(p.threads, p.nthreads, sizeof(*p.threads), cmp_thread_tid);
		if (dump_output(o->out, o->format, &p, ut, o->cfg.sym_flags) < 0) {
			sampler_out_file_write_error(errno ? errno : EIO, o->output);
			r = -EIO;
		}
	}
	for (size_t i = 0; i < p.nthreads; i++)
		free(p.threads[i].frames);
	free(p.threads);
	free(scratch);
	unwind_target_free(ut);
	return r;
}
