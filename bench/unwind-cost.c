/*
 * unwind-cost: the unwinding cost per sample, without ptrace: every
 * thread of a core file (gcore of a live process) unwound ROUNDS times
 * from its snapshot with one engine, timed with the monotonic clock.
 *
 *	bench/unwind-cost CORE [ENGINE [ROUNDS]]
 *
 * Prints "ENGINE: N walks, F frames, X ns per walk, Y ns per frame".  The
 * input is the same bytes for every build, so two builds' figures (each
 * printed as the best of 5 runs of ROUNDS) compare their walks alone:
 * bench/unwind-cost.sh runs both on the cores it makes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptrace/sample.h"
#include "unwind/unwind.h"

#define MAX_FRAMES 256

static double
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: unwind-cost CORE [ENGINE [ROUNDS]]\n");
		return 64;
	}
	enum unwind_engine e = UNWIND_ENGINE_AUTO;
	if (argc > 2 && unwind_engine_parse(argv[2], &e) < 0) {
		fprintf(stderr, "unwind-cost: unknown engine '%s'\n", argv[2]);
		return 64;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 20;
	if (rounds < 1)
		rounds = 1;

	int err = 0;
	char why[256] = "";
	struct unwind_target *t = unwind_target_open_core(argv[1], NULL, NULL, &err, why,
							  sizeof(why));
	if (!t) {
		fprintf(stderr, "unwind-cost: %s: %s (%s)\n", argv[1], strerror(-err), why);
		return 2;
	}
	struct unwind_core_info info;
	if (unwind_core_info(t, &info) < 0 || info.nthreads == 0) {
		fprintf(stderr, "unwind-cost: %s: no threads\n", argv[1]);
		return 2;
	}
	struct stack_snapshot *snaps = calloc(info.nthreads, sizeof(*snaps));
	if (!snaps)
		return 2;
	for (size_t i = 0; i < info.nthreads; i++)
		if (unwind_core_thread(t, i, &snaps[i]) < 0)
			snaps[i].regs_len = 0;

	static struct unwind_frame frames[MAX_FRAMES];
	enum unwind_stop stop;
	double best = 0;
	unsigned long long nframes = 0, walks = 0;
	for (int run = 0; run < 5; run++) {
		unsigned long long f = 0, w = 0;
		double t0 = now_ns();
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < info.nthreads; i++) {
				if (!snaps[i].regs_len)
					continue;
				int n = unwind_walk(t, e, &snaps[i], frames, MAX_FRAMES, &stop);
				f += n > 0 ? (unsigned long long)n : 0;
				w++;
			}
		double dt = now_ns() - t0;
		if (run == 0 || dt < best)
			best = dt;
		nframes = f;
		walks = w;
	}
	printf("%s: %llu walks, %llu frames, %.0f ns per walk, %.1f ns per frame\n",
	       unwind_engine_name(e), walks, nframes, best / (double)(walks ? walks : 1),
	       best / (double)(nframes ? nframes : 1));
	for (size_t i = 0; i < info.nthreads; i++)
		ptrace_snapshot_release(&snaps[i]);
	free(snaps);
	unwind_target_free(t);
	return 0;
}
