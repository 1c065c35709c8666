/*
 * busy: a target that is never still, for tests/accuracy.test and
 * bench/accuracy.sh (stop it anywhere, compare stackspy with gdb), plus two
 * blocking modes for single-purpose tests.
 *
 *   busy            run forever: the main thread loops through code that
 *                   unwinders find hard (prologues and epilogues at -O2
 *                   without frame pointers, tail calls, PLT stubs, the vdso,
 *                   libc's hand-written string functions, qsort calling
 *                   back into us, a function without CFI (busy-nocfi.c),
 *                   a SIGPROF handler taken anywhere); a second thread
 *                   recurses deeper than the 64 KiB stack snapshot.
 *   busy deep N     recurse N levels of 1 KiB frames, then block in read(2)
 *                   (tests/dump-deep.test: a stack deeper than the window)
 *   busy recurse N  the same with small frames: 10,000 levels fit the
 *                   default 8 MiB stack (tests/dump-deep.test, --max-depth 0)
 *   busy jit [N]    copy code into anonymous executable memory, describe
 *                   it in /tmp/perf-PID.map, block inside it
 *                   (tests/symbols-perfmap.test); with N, the map has N
 *                   lines: one not in perf's format and code that never
 *                   runs before the running code's line, the last
 *                   (tests/symbols-perfmap-big.test)
 *
 * Prints "ready" (and "thread NAME TID" lines) per tests/targets/target.h.
 */
#include "target.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/time.h>

/* busy-nocfi.c, built without unwind tables and with frame pointers. */
long nocfi_frame(long (*cb)(long), long x);

static volatile long sink;
static char buf_a[8192], buf_b[8192];

NOINLINE static long
leaf_math(long x)
{
	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	return x;
}

NOINLINE static long
use_vdso(long x)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	BARRIER();
	return x + ts.tv_nsec;
}

NOINLINE static long
use_string(long x)
{
	memcpy(buf_a, buf_b, sizeof(buf_a) - (size_t)(x & 511));
	buf_a[4000 + (x & 63)] = 0;
	BARRIER();
	return x + (long)strlen(buf_a);
}

static int
cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

NOINLINE static long
use_qsort(long x)
{
	long v[64];

	for (int i = 0; i < 64; i++)
		v[i] = leaf_math(x + i) & 0xffff;
	qsort(v, 64, sizeof(v[0]), cmp_long);
	BARRIER();
	return v[x & 63];
}

/* Plain tail calls at -O2: tail_a's frame is gone when tail_b runs. */
NOINLINE static long tail_c(long x) { return leaf_math(x) + 1; }
__attribute__((noinline)) static long tail_b(long x) { return tail_c(x ^ 5); }
__attribute__((noinline)) static long tail_a(long x) { return tail_b(x + 3); }

NOINLINE static long
through_nocfi(long x)
{
	long r = nocfi_frame(use_string, x);

	BARRIER();
	return r;
}

NOINLINE static long
step(long x)
{
	long r;

	switch (x & 7) {
	case 0: r = use_vdso(x); break;
	case 1: r = use_string(x); break;
	case 2: r = use_qsort(x); break;
	case 3: r = tail_a(x); break;
	case 4: r = through_nocfi(x); break;
	case 5: r = (long)getpid() + x; break;     /* a PLT call */
	default: r = leaf_math(x); break;
	}
	BARRIER();
	return r;
}

NOINLINE static long
nest(int depth, long x)
{
	long r;

	if (depth == 0)
		return step(x);
	r = nest(depth - 1, x + depth);
	BARRIER();
	return r;
}

static void
on_prof(int sig)
{
	(void)sig;
	sink = leaf_math(sink);
}

/* 1 KiB per level, so that the stack outgrows the snapshot window. */
NOINLINE static long
deep(int n, long x)
{
	volatile char pad[1024];
	long r;

	pad[n & 1023] = (char)x;
	if (n == 0) {
		r = step(x);
	} else {
		r = deep(n - 1, x + pad[(n * 7) & 1023]);
	}
	BARRIER();
	return r + pad[0];
}

static void *
deep_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "deep");
	for (long i = 0;; i++)
		sink += deep(100 + (int)(i & 31), i);
	return NULL;
}

__attribute__((noreturn)) static void
run_busy(void)
{
	pthread_t th;
	pthread_attr_t attr;
	struct sigaction sa;
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	memset(buf_b, 'x', sizeof(buf_b));
	/* 131 frames of 1 KiB: more than musl's default thread stack
	 * (128 KiB), which the C library's own threads do not need. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 1 << 20);
	if (pthread_create(&th, &attr, deep_thread, NULL) != 0)
		target_die("pthread_create");
	puts("ready");
	for (long i = 0;; i++)
		sink += nest((int)(i % 5), i);
}

/* ---- deep N: block at the bottom of a deep stack ---------------------------- */

/* At the bottom: "ready", then serve stdin (target.h) until its end. */
NOINLINE static void
serve_stdin(void)
{
	char cmd[64];

	puts("ready");
	while (target_command(cmd, sizeof(cmd), read(0, cmd, sizeof(cmd) - 1)))
		;
}

NOINLINE static long
recurse(int n)
{
	if (n == 0) {
		serve_stdin();
		return 0;
	}
	long r = recurse(n - 1);
	BARRIER();
	return r + n;
}

NOINLINE static long
deep_block(int n)
{
	volatile char pad[1024];

	pad[n & 1023] = 1;
	if (n == 0) {
		serve_stdin();
		return 0;
	}
	long r = deep_block(n - 1);
	BARRIER();
	return r + pad[n & 1023];
}

/* ---- jit: block in code that only a perf map names -------------------------- */

static int
run_jit(long lines)
{
	/* mov $34,%eax (pause); syscall; jmp back to the mov */
	static const unsigned char code[] = {
		0xb8, 0x22, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xeb, 0xf7,
	};
	char path[64];
	FILE *f;
	unsigned char *mem;

#if !defined(__x86_64__)
	puts("unsupported");
	return 0;
#endif
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		target_die("mmap");
	/* Not at the start of the page, as real JITs place code. */
	memcpy(mem + 0x40, code, sizeof(code));
	if (mprotect(mem, 4096, PROT_READ | PROT_EXEC) != 0)
		target_die("mprotect");
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		target_die(path);
	fprintf(f, "%lx 10 jitted_helper\n",
		(unsigned long)(uintptr_t)(mem + 0x200));
	if (lines > 3)
		fputs("not a line of a perf map\n", f);
	/* About 60 bytes a line, as V8's are. */
	for (long i = 0; i + 3 < lines; i++)
		fprintf(f, "%llx 20 LazyCompile:*filler_%ld /app/module_%ld.js:%ld\n",
			0x7e0000000000ull + 0x20ull * (unsigned long long)i, i, i % 97, i % 1000);
	fprintf(f, "%lx %zx LazyCompile:*jitted_spin /app/main.js:12\n",
		(unsigned long)(uintptr_t)(mem + 0x40), sizeof(code));
	fclose(f);
	printf("jit %lx\n", (unsigned long)(uintptr_t)(mem + 0x40));
	puts("ready");
	((void (*)(void))(mem + 0x40))();
	return 0;
}

int
main(int argc, char **argv)
{
	target_init();
	if (argc >= 3 && strcmp(argv[1], "deep") == 0)
		return (int)deep_block(atoi(argv[2]));
	if (argc >= 3 && strcmp(argv[1], "recurse") == 0)
		return (int)recurse(atoi(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "jit") == 0)
		return run_jit(argc >= 3 ? atol(argv[2]) : 0);
	run_busy();
}
