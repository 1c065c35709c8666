/*
 * events.c: a target for what may happen to stackspy or to its target
 * while it is traced (tests/record-stop.test, record-exec.test, ...).
 *
 * Usage: events sig THREADS
 *   THREADS workers "e-N" block in read; SIGUSR1 to the process is counted
 *   by its handler, which prints "got N" (so a test sees at once whether a
 *   signal was delivered or is parked in a tracing stop) with the time it
 *   was handled (CLOCK_REALTIME ns); one more thread "e-spin" runs half of
 *   the time (2 ms, then sleeps 2 ms), so an on-CPU record has something to
 *   sample.
 * Usage: events jit THREADS
 *   As sig, but e-spin spins in an anonymous executable page (as JIT code
 *   does), whose address it prints ("jit ADDR"), so that a sample of it
 *   makes stackspy read /tmp/perf-PID.map (bench/event-latency.sh).
 * Usage: events vfork THREADS CHILD_MS
 *   THREADS workers "e-N" block in read; thread "e-vfork" loops: vfork(),
 *   the child sleeps CHILD_MS and exits, so the thread spends nearly all
 *   its time in D (a tracer's PTRACE_INTERRUPT waits until it leaves);
 *   it prints "vfork" before each vfork, the first one after "ready" (so
 *   that a test starts right at the beginning of a wait without waiting
 *   out a whole CHILD_MS for the next one).
 * Usage: events exec DELAY_MS [traced]
 *   Threads "e-exec" and "e-sleep"; after DELAY_MS, e-exec (not the main
 *   thread) execs this program again as "events after", which runs
 *   300 ms (main thread "e-after") and exits 0.  With "traced", DELAY_MS
 *   counts from the moment e-exec is traced (a tracer attached), not from
 *   its start: the exec comes while traced however late the tracer is.
 * Prints "thread NAME TID" per thread, then "ready"; then serves stdin as
 * every target (sig mode).
 */
#include "target.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

static int never[2];
static volatile pid_t *tids;
static long exec_delay_ms;
static int exec_when_traced;
static char **self_argv;
static volatile sig_atomic_t got;

static void
on_usr1(int sig)
{
	char buf[64];
	struct timespec ts;
	int n;

	(void) sig;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof buf, "got %d %lld%09ld\n", (int) ++got,
		     (long long) ts.tv_sec, ts.tv_nsec);
	if (write(1, buf, (size_t) n) < 0) {
		/* nothing to do */
	}
}

NOINLINE void *
sleeper(void *arg)
{
	char name[16], c;
	long i = (long) arg;

	snprintf(name, sizeof name, "e-%ld", i);
	target_register(name, &tids[i]);
	while (read(never[0], &c, 1) < 0 && errno == EINTR)
		;
	BARRIER();
	return arg;
}

static void *jit_page;

NOINLINE void *
jit_spinner(void *arg)
{
	pthread_setname_np(pthread_self(), "e-jit");
	((void (*)(void)) jit_page)();
	return arg;
}

/* An endless loop in fresh anonymous executable memory. */
static void
jit_setup(void)
{
#if defined(__x86_64__) || defined(__i386__)
	static const unsigned char loop[] = { 0xeb, 0xfe };          /* jmp . */
#elif defined(__aarch64__)
	static const unsigned char loop[] = { 0x00, 0x00, 0x00, 0x14 }; /* b . */
#else
	static const unsigned char loop[] = { 0 };
	target_die("jit: not on this architecture");
#endif
	jit_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit_page == MAP_FAILED)
		target_die("mmap");
	memcpy(jit_page, loop, sizeof loop);
	__builtin___clear_cache((char *) jit_page, (char *) jit_page + sizeof loop);
	printf("jit %lx\n", (unsigned long) jit_page);
}

/* Busy half of the time, 2 ms at a time: something for an on-CPU record to
 * sample, and a CPU left for the tests that run beside this one. */
NOINLINE void *
spinner(void *arg)
{
	volatile unsigned long x = 0;

	struct target_duty d = { 2, 2, 0 };

	pthread_setname_np(pthread_self(), "e-spin");
	for (;;) {
		for (int i = 0; i < 1000; i++)
			x = x * 3 + 1;
		target_duty(&d);
	}
	return arg;
}

static long vfork_child_ms;
static volatile pid_t vfork_tid;
/* Written once "ready" is out: the first vfork waits for it. */
static int vfork_go[2];

NOINLINE void *
vforker(void *arg)
{
	pthread_setname_np(pthread_self(), "e-vfork");
	__atomic_store_n(&vfork_tid, target_gettid(), __ATOMIC_RELEASE);
	char go;
	while (read(vfork_go[0], &go, 1) < 0 && errno == EINTR)
		;
	for (;;) {
		/* Lets a test start right at the beginning of a wait. */
		printf("vfork\n");
		pid_t child = vfork();
		if (child == 0) {
			struct timespec ts = { vfork_child_ms / 1000,
					       (vfork_child_ms % 1000) * 1000000L };
			nanosleep(&ts, NULL);
			_exit(0);
		}
		if (child < 0)
			target_die("vfork");
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return arg;
}

/* Wait until this thread has a tracer (TracerPid in its status). */
static void
wait_traced(void)
{
	int fd = open("/proc/thread-self/status", O_RDONLY);

	if (fd < 0)
		target_die("open /proc/thread-self/status");
	for (long ms = 0; ms < TARGET_READY_TIMEOUT_MS; ms++) {
		if (target_tracer_of(fd) > 0) {
			close(fd);
			return;
		}
		target_sleep_ms(1);
	}
	fprintf(stderr, "target: e-exec never traced\n");
	_exit(3);
}

NOINLINE void *
execer(void *arg)
{
	char *args[] = { self_argv[0], (char *) "after", NULL };

	target_register("e-exec", &tids[0]);
	if (exec_when_traced)
		wait_traced();
	target_sleep_ms(exec_delay_ms);
	execv("/proc/self/exe", args);
	target_die("execv");
	return arg;
}

int
main(int argc, char **argv)
{
	long i, n;
	pthread_t thread;
	char buf[256];
	ssize_t r;

	target_init();
	self_argv = argv;
	if (argc > 1 && strcmp(argv[1], "after") == 0) {
		pthread_setname_np(pthread_self(), "e-after");
		printf("after %d\n", (int) getpid());
		target_sleep_ms(300);
		return 0;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: events sig|jit THREADS | vfork THREADS CHILD_MS | exec DELAY_MS [traced]\n");
		return 99;
	}
	if (pipe(never) != 0)
		target_die("pipe");
	pthread_setname_np(pthread_self(), "e-main");
	if (strcmp(argv[1], "exec") == 0) {
		exec_delay_ms = atol(argv[2]);
		exec_when_traced = argc > 3 && strcmp(argv[3], "traced") == 0;
		if (!(tids = calloc(2, sizeof *tids)))
			target_die("calloc");
		if ((errno = pthread_create(&thread, NULL, sleeper, (void *) 1L)) ||
		    (errno = pthread_create(&thread, NULL, execer, NULL)))
			target_die("pthread_create");
		printf("thread e-exec %d\n", (int) target_wait_tid(&tids[0]));
		printf("thread e-1 %d\n", (int) target_wait_tid(&tids[1]));
		printf("ready\n");
		for (;;)
			target_sleep_ms(1000);
	}
	n = atol(argv[2]);
	if (strcmp(argv[1], "vfork") == 0) {
		vfork_child_ms = argc > 3 ? atol(argv[3]) : 1500;
		if (pipe(vfork_go) != 0)
			target_die("pipe");
		if ((errno = pthread_create(&thread, NULL, vforker, NULL)))
			target_die("pthread_create");
		printf("thread e-vfork %d\n", (int) target_wait_tid(&vfork_tid));
	}
	signal(SIGUSR1, on_usr1);
	if (!(tids = calloc(n, sizeof *tids)))
		target_die("calloc");
	for (i = 0; i < n; i++) {
		if ((errno = pthread_create(&thread, NULL, sleeper, (void *) i)))
			target_die("pthread_create");
	}
	if (strcmp(argv[1], "sig") == 0 &&
	    (errno = pthread_create(&thread, NULL, spinner, NULL)))
		target_die("pthread_create");
	if (strcmp(argv[1], "jit") == 0) {
		jit_setup();
		if ((errno = pthread_create(&thread, NULL, jit_spinner, NULL)))
			target_die("pthread_create");
	}
	for (i = 0; i < n; i++) {
		pid_t tid = target_wait_tid(&tids[i]);
		target_wait_blocked("worker", tid, SYS_read);
		printf("thread e-%ld %d\n", i, (int) tid);
	}
	printf("ready\n");
	if (vfork_tid && write(vfork_go[1], "g", 1) != 1)
		target_die("write");
	do
		r = read(0, buf, sizeof buf - 1);
	while (target_command(buf, sizeof buf, r) || (r < 0 && errno == EINTR));
	return 0;
}
