/*
 * The speedscope file format (collapse_write_speedscope()): one "sampled"
 * profile whose samples are the distinct stacks, each weighted by its count.
 * https://www.speedscope.app/file-format-schema.json
 *
 * The stacks are written in flamegraph order (collapse_sorted_stacks()), so
 * speedscope's "Time Order" view shows merged frames like a flamegraph and
 * the same samples always give the same file.
 */
#include "config.h"

#include "collapse/collapse-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int collapse_write_speedscope(const struct collapse *c, const char *name,
			      FILE *out)
{
	size_t nframes = collapse_distinct_frames(c);
	struct collapse_stack *stacks;
	long nstacks;

	if (!name)
		name = "stackspy";
	nstacks = collapse_sorted_stacks(c, &stacks);
	if (nstacks < 0)
		return (int)nstacks;

	errno = 0;
	fputs("{\"$schema\": "
	      "\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"shared\": {\"frames\": [", out);
	for (uint32_t id = 0; id < nframes; id++) {
		fputs(id ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
		collapse_json_string(out, collapse_frame_name(c, id));
		putc('}', out);
	}
	fputs("]},\n\"profiles\": [{\"type\": \"sampled\", \"name\": ", out);
	collapse_json_string(out, name);
	fprintf(out, ", \"unit\": \"none\", \"startValue\": 0, "
		"\"endValue\": %" PRIu64 ",\n \"samples\": [",
		collapse_total_samples(c));
	for (long s = 0; s < nstacks; s++) {
		fputs(s ? ",\n  [" : "\n  [", out);
		for (size_t i = 0; i < stacks[s].n; i++)
			fprintf(out, i ? ",%" PRIu32 : "%" PRIu32,
				stacks[s].ids[i]);
		putc(']', out);
	}
	fputs("],\n \"weights\": [", out);
	for (long s = 0; s < nstacks; s++)
		fprintf(out, s ? ",%" PRIu64 : "%" PRIu64, stacks[s].count);
	fputs("]}],\n\"name\": ", out);
	collapse_json_string(out, name);
	fputs(",\n\"activeProfileIndex\": 0,\n"
	      "\"exporter\": \"" PACKAGE_NAME " " PACKAGE_VERSION "\"}\n", out);
	free(stacks);
	return collapse_flush(out);
}
