/* tests/fuzz/fuzz-core.c - libFuzzer target for the core-file reader
 * (unwind/core-file.c, core-target.c) and what runs on a core: the module map built from
 * NT_FILE or from the auxv and r_debug, the files it opens, the memory
 * reader, both engines and the symbolizer.  Built by tests/fuzz/fuzz.sh.
 *
 * The input is a core file.  unwind_core_file_parse sees it in memory; then the
 * whole target is opened through a memfd (unwind_target_open_core takes
 * a path), and every thread is walked and symbolized. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptrace/sample.h"
#include "unwind/core-file.h"
#include "unwind/target.h"
#include "unwind/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
walk_all(struct unwind_target *t)
{
	struct unwind_core_info info;
	struct unwind_frame frames[64];
	static const enum unwind_engine engines[] = { UNWIND_ENGINE_FP, UNWIND_ENGINE_AUTO };

	if (unwind_core_info(t, &info) < 0)
		return;
	for (size_t i = 0; i < info.nthreads && i < 8; i++) {
		struct stack_snapshot s;

		if (unwind_core_thread(t, i, &s) < 0)
			continue;
		for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
			enum unwind_stop stop;
			int n = unwind_walk(t, engines[e], &s, frames, 64, &stop);

			for (int k = 0; k < n; k++) {
				struct unwind_symbol sym;
				unwind_symbolize(t, frames[k].ip, k > 0, 0, &sym);
			}
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct core_file c;
	const char *why;
	unsigned char buf[64];
	uint64_t v;

	if (unwind_core_file_parse(&c, data, size, &why) == 0) {
		/* Reads at the edges of every segment. */
		for (size_t i = 0; i < c.nsegs && i < 64; i++) {
			unwind_core_read(&c, c.segs[i].vaddr, buf, sizeof(buf));
			unwind_core_read(&c, c.segs[i].vaddr + c.segs[i].memsz - 8, buf, 16);
		}
		for (uint64_t at = 0; at < 48; at++)
			unwind_core_auxv(&c, at, &v);
		unwind_core_file_release(&c);
	}

	int fd = memfd_create("fuzz-core", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		char path[64], why2[128];
		int err;
		struct unwind_target *t;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		t = unwind_target_open_core(path, NULL, NULL, &err, why2, sizeof(why2));
		if (t) {
			walk_all(t);
			unwind_target_free(t);
		}
	}
	close(fd);
	return 0;
}
