/* tests/pprof-gen - folded lines (standard input) through struct collapse
 * and collapse_encode_pprof() to a pprof file (standard output), so that a
 * test can compare go tool pprof's reading of it with the folded text of
 * the very same stacks (tests/pprof-record.test).
 *
 *   pprof-gen ROOTS PERIOD_NS < x.folded > x.pb.gz
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse/collapse.h"

int main(int argc, char **argv)
{
	struct collapse_pprof_options o = { 0 };
	struct collapse *c = collapse_new();
	char line[65536];
	uint32_t ids[4096];

	if (argc != 3 || !c)
		return 2;
	o.roots = strtoul(argv[1], NULL, 10);
	o.period_ns = strtoull(argv[2], NULL, 10);
	while (fgets(line, sizeof(line), stdin)) {
		char *sp = strrchr(line, ' '), *f, *save = NULL;
		size_t n = 0;

		if (!sp)
			return 2;
		*sp = '\0';
		for (f = strtok_r(line, ";", &save); f && n < 4096;
		     f = strtok_r(NULL, ";", &save)) {
			int id = collapse_intern(c, f);

			if (id < 0)
				return 2;
			ids[n++] = (uint32_t)id;
		}
		if (!n || collapse_add(c, ids, n, strtoull(sp + 1, NULL, 10)) < 0)
			return 2;
	}
	if (collapse_write_pprof(c, &o, stdout) < 0 || fflush(stdout))
		return 1;
	collapse_free(c);
	return 0;
}
