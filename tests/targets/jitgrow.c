/*
 * jitgrow: a JIT that never stops writing its perf map (tests/
 * symbols-perfmap-grow.test).  It places a spin loop of about a millisecond
 * at a new 64-byte slot of a 1 MiB code area each time (the area is
 * reused after 16384 slots, as a JIT reuses freed code memory), appends
 * the slot's line to /tmp/perf-PID.map ("jit_fn_N", N from a set of 500
 * names, so that names repeat as re-jitted functions do) plus FILLER
 * lines for code that never runs, at ever new addresses, and runs the
 * slot.  About 1000 x (1 + FILLER) lines a second, for ever.
 *
 *   jitgrow [FILLER [wx]]     FILLER: default 5
 *
 * With "wx" after FILLER, the area is never writable and executable at
 * once: each slot's page is made writable to place the code, then
 * executable (W^X, as V8 does); otherwise it is mapped rwx once.
 *
 * Prints "jit AREA_START AREA_END" and "ready" (x86-64 only; elsewhere
 * "unsupported" and exits).
 */
#include "target.h"

#include <stdint.h>
#include <sys/mman.h>

#define AREA  (1u << 20)
#define SLOT  64u

int
main(int argc, char **argv)
{
	/* mov $N,%ecx; 1: dec %ecx; jnz 1b; ret */
	static const unsigned char code[] = {
		0xb9, 0x80, 0x84, 0x1e, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3,
	};
	int filler = argc > 1 ? atoi(argv[1]) : 5;
	int wx = argc > 2 && strcmp(argv[2], "wx") == 0;
	unsigned long long fake = 0x7e0000000000ull, seq = 0;
	char path[64];
	unsigned char *area;
	FILE *map;

	target_init();
#if !defined(__x86_64__)
	(void)code; (void)filler; (void)wx; (void)fake; (void)seq; (void)path; (void)area; (void)map;
	puts("unsupported");
	return 0;
#else
	area = mmap(NULL, AREA, PROT_READ | PROT_WRITE | (wx ? 0 : PROT_EXEC),
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		target_die("mmap");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		target_die(path);
	printf("jit %lx %lx\n", (unsigned long)(uintptr_t)area,
	       (unsigned long)(uintptr_t)(area + AREA));
	for (unsigned long i = 0;; i++) {
		unsigned char *slot = area + (i * SLOT) % AREA;
		unsigned char *page = (unsigned char *)((uintptr_t)slot & ~(uintptr_t)4095);

		if (wx && mprotect(page, 4096, PROT_READ | PROT_WRITE) != 0)
			target_die("mprotect");
		memcpy(slot, code, sizeof(code));
		if (wx && mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0)
			target_die("mprotect");
		fprintf(map, "%lx %zx jit_fn_%lu\n", (unsigned long)(uintptr_t)slot,
			sizeof(code), i % 500);
		for (int k = 0; k < filler; k++, seq++)
			fprintf(map, "%llx 20 filler_%llu\n", fake + seq * 0x20, seq % 3000);
		if (fflush(map) != 0)
			target_die("perf map");
		if (i == 0)
			puts("ready");
		((void (*)(void))slot)();
	}
#endif
}
