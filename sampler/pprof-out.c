/* sampler/pprof-out.c - the recording as a pprof profile: what collapse/
 * does not know (the module, its build-id and an address of each frame,
 * the rate, the roots that become labels) taken from the profiler. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "ptrace/clock.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "unwind/unwind.h"

/* Build-ids, read once per module file for one profile. */
struct build_ids {
	char **paths;
	char (*hex)[130];
	size_t n;
};

struct pprof_ctx {
	struct profiler *p;
	struct build_ids ids;
};

static const char *
build_id_of(struct build_ids *b, const char *path)
{
	for (size_t i = 0; i < b->n; i++)
		if (strcmp(b->paths[i], path) == 0)
			return b->hex[i];
	char **np = realloc(b->paths, (b->n + 1) * sizeof(*np));
	if (!np)
		return NULL;
	b->paths = np;
	char (*nh)[130] = realloc(b->hex, (b->n + 1) * sizeof(*nh));
	if (!nh)
		return NULL;
	b->hex = nh;
	b->paths[b->n] = strdup(path);
	if (!b->paths[b->n])
		return NULL;
	/* "[vdso]" and files gone since: no build-id, still a mapping. */
	if (unwind_file_build_id(path, b->hex[b->n], sizeof(b->hex[b->n])) <= 0)
		b->hex[b->n][0] = '\0';
	return b->hex[b->n++];
}

static bool
frame_info(void *arg, uint32_t id, struct collapse_pprof_frame *out)
{
	struct pprof_ctx *ctx = arg;
	uint64_t offset;
	out->file = profiler_frame_source(ctx->p, id, &out->line);
	const char *path = profiler_frame_module_path(ctx->p, id, &offset);
	if (!path)
		return out->file != NULL;
	out->module = path;
	out->address = offset;
	out->build_id = path[0] == '/' ? build_id_of(&ctx->ids, path) : NULL;
	return true;
}

int
profiler_encode_pprof(struct profiler *p, const struct profiler_config *cfg,
		      const uint64_t *base, size_t nbase, int64_t start_ns,
		      int64_t duration_ns, void **buf, size_t *len)
{
	struct pprof_ctx ctx = { .p = p };
	char exe_link[64], exe[4096];
	ssize_t n = -1;
	if (p->nprocs) {
		snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", (int)p->procs[0].pid);
		n = readlink(exe_link, exe, sizeof(exe) - 1);
	}
	exe[n > 0 ? n : 0] = '\0';
	struct collapse_pprof_options o = {
		.wall = cfg->idle,
		.period_ns = (uint64_t)((double)NS_PER_SEC / cfg->rate_hz),
		.time_ns = start_ns,
		.duration_ns = duration_ns,
		.roots = profiler_multi(p) + cfg->threads,
		.process_name = !profiler_multi(p) ? profiler_comm(p) : NULL,
		.main_module = n > 0 ? exe : NULL,
		.frame_info = frame_info,
		.arg = &ctx,
		.base = base,
		.nbase = nbase,
	};
	int r = collapse_encode_pprof(p->stacks, &o, buf, len);
	for (size_t i = 0; i < ctx.ids.n; i++)
		free(ctx.ids.paths[i]);
	free(ctx.ids.paths);
	free(ctx.ids.hex);
	return r;
}
