/*
 * threads.c: the main test target, built at several flag sets
 * (threads-O0, threads-O2, threads-O2-nopie, threads-O2-fp).
 *
 * Threads and the call chain each one is blocked in (innermost first; the
 * tests assert these names and this order, see tests/init.sh):
 *
 *   t-main    read <- main_f3 <- main_f2 <- main_f1 <- main
 *   t-read    read <- read_f3 <- read_f2 <- read_f1 <- read_thread
 *   t-mutex   futex <- pthread_mutex_lock <- mutex_f3 <- mutex_f2 <- mutex_f1
 *             <- mutex_thread
 *   t-cond    futex <- pthread_cond_wait <- cond_f3 <- cond_f2 <- cond_f1
 *             <- cond_thread
 *   t-signal  read <- sig_f3 <- sig_f2 <- sig_f1 <- sig_handler
 *             <- [signal frame] <- read <- sigwait_f2 <- sigwait_f1
 *             <- signal_thread
 *   t-dlopen  read <- dlt_f3 <- dlt_f2 <- dlt_f1 (libdlt.so) <- dlopen_thread
 *   t-deep    read <- deep_leaf <- recurse x DEEP_LEVELS <- deep_thread
 *
 * Usage: threads [LIBDLT]; LIBDLT defaults to libdlt.so beside the program.
 */
#include "target.h"

#include <dlfcn.h>
#include <limits.h>

#define DEEP_LEVELS 48

enum { SLOT_READ, SLOT_MUTEX, SLOT_COND, SLOT_SIGNAL, SLOT_DLOPEN, SLOT_DEEP,
       NSLOTS };

static volatile pid_t tids[NSLOTS];
static const char *const names[NSLOTS] = {
	"t-read", "t-mutex", "t-cond", "t-signal", "t-dlopen", "t-deep",
};

static int never[2];		/* a pipe nobody writes to */
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;  /* main holds it */
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static volatile int cond_flag;
static volatile sig_atomic_t in_handler;
static int (*dlt_f1)(int fd);

int read_f3(void);
int read_f2(void);
int read_f1(void);
int mutex_f3(void);
int mutex_f2(void);
int mutex_f1(void);
int cond_f3(void);
int cond_f2(void);
int cond_f1(void);
int sig_f3(void);
int sig_f2(void);
int sig_f1(void);
void sig_handler(int sig);
int sigwait_f2(void);
int sigwait_f1(void);
int deep_leaf(void);
int recurse(int n);
int main_f3(char *buf, size_t size);
int main_f2(char *buf, size_t size);
int main_f1(char *buf, size_t size);
void *read_thread(void *arg);
void *mutex_thread(void *arg);
void *cond_thread(void *arg);
void *signal_thread(void *arg);
void *dlopen_thread(void *arg);
void *deep_thread(void *arg);

/* Always inlined: at -O0 too, so the chains are the same at every level. */
static inline __attribute__((always_inline)) int
block_read(void)
{
	char c;

	return (int) read(never[0], &c, 1);
}

NOINLINE int read_f3(void) { int r = block_read(); BARRIER(); return r; }
NOINLINE int read_f2(void) { int r = read_f3(); BARRIER(); return r + 1; }
NOINLINE int read_f1(void) { int r = read_f2(); BARRIER(); return r + 1; }

NOINLINE int
mutex_f3(void)
{
	int r = pthread_mutex_lock(&mutex);
	BARRIER();
	return r;
}
NOINLINE int mutex_f2(void) { int r = mutex_f3(); BARRIER(); return r + 1; }
NOINLINE int mutex_f1(void) { int r = mutex_f2(); BARRIER(); return r + 1; }

NOINLINE int
cond_f3(void)
{
	int r = 0;

	pthread_mutex_lock(&cond_mutex);
	while (!cond_flag)
		r = pthread_cond_wait(&cond, &cond_mutex);
	BARRIER();
	pthread_mutex_unlock(&cond_mutex);
	return r;
}
NOINLINE int cond_f2(void) { int r = cond_f3(); BARRIER(); return r + 1; }
NOINLINE int cond_f1(void) { int r = cond_f2(); BARRIER(); return r + 1; }

/* read(2) is async-signal-safe: the handler blocks in it for good. */
NOINLINE int sig_f3(void) { int r = block_read(); BARRIER(); return r; }
NOINLINE int sig_f2(void) { int r = sig_f3(); BARRIER(); return r + 1; }
NOINLINE int sig_f1(void) { int r = sig_f2(); BARRIER(); return r + 1; }

NOINLINE void
sig_handler(int sig)
{
	(void) sig;
	in_handler = 1;
	sig_f1();
	BARRIER();
}

NOINLINE int sigwait_f2(void) { int r = block_read(); BARRIER(); return r; }
NOINLINE int sigwait_f1(void) { int r = sigwait_f2(); BARRIER(); return r + 1; }

NOINLINE int deep_leaf(void) { int r = block_read(); BARRIER(); return r; }

NOINLINE int
recurse(int n)
{
	int r;

	if (n <= 0)
		r = deep_leaf();
	else
		r = recurse(n - 1);
	BARRIER();
	return r + 1;
}

NOINLINE void *
read_thread(void *arg)
{
	target_register(names[SLOT_READ], &tids[SLOT_READ]);
	read_f1();
	BARRIER();
	return arg;
}

NOINLINE void *
mutex_thread(void *arg)
{
	target_register(names[SLOT_MUTEX], &tids[SLOT_MUTEX]);
	mutex_f1();
	BARRIER();
	return arg;
}

NOINLINE void *
cond_thread(void *arg)
{
	target_register(names[SLOT_COND], &tids[SLOT_COND]);
	cond_f1();
	BARRIER();
	return arg;
}

NOINLINE void *
signal_thread(void *arg)
{
	target_register(names[SLOT_SIGNAL], &tids[SLOT_SIGNAL]);
	sigwait_f1();
	BARRIER();
	return arg;
}

NOINLINE void *
dlopen_thread(void *arg)
{
	target_register(names[SLOT_DLOPEN], &tids[SLOT_DLOPEN]);
	dlt_f1(never[0]);
	BARRIER();
	return arg;
}

NOINLINE void *
deep_thread(void *arg)
{
	target_register(names[SLOT_DEEP], &tids[SLOT_DEEP]);
	recurse(DEEP_LEVELS);
	BARRIER();
	return arg;
}

NOINLINE int
main_f3(char *buf, size_t size)
{
	int r = (int) read(0, buf, size - 1);
	BARRIER();
	return r;
}
NOINLINE int main_f2(char *buf, size_t size)
{ int r = main_f3(buf, size); BARRIER(); return r; }
NOINLINE int main_f1(char *buf, size_t size)
{ int r = main_f2(buf, size); BARRIER(); return r; }

static void
load_lib(const char *argv0, const char *path)
{
	char buf[PATH_MAX], *slash;
	void *handle;
	ssize_t n;

	if (!path) {
		n = readlink("/proc/self/exe", buf, sizeof buf - 16);
		if (n < 0)
			target_die("readlink(/proc/self/exe)");
		buf[n] = '\0';
		slash = strrchr(buf, '/');
		strcpy(slash ? slash + 1 : buf, "libdlt.so");
		path = buf;
	}
	(void) argv0;
	if (!(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "target: dlopen: %s\n", dlerror());
		_exit(3);
	}
	*(void **) &dlt_f1 = dlsym(handle, "dlt_f1");
	if (!dlt_f1) {
		fprintf(stderr, "target: dlsym(dlt_f1): %s\n", dlerror());
		_exit(3);
	}
}

int
main(int argc, char **argv)
{
	void *(*const start[NSLOTS])(void *) = {
		read_thread, mutex_thread, cond_thread, signal_thread,
		dlopen_thread, deep_thread,
	};
	struct sigaction sa;
	pthread_t threads[NSLOTS];
	char buf[256];
	int i;

	target_init();
	pthread_setname_np(pthread_self(), "t-main");
	if (pipe(never) != 0)
		target_die("pipe");
	load_lib(argv[0], argc > 1 ? argv[1] : NULL);

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		target_die("sigaction");

	pthread_mutex_lock(&mutex);
	for (i = 0; i < NSLOTS; i++) {
		errno = pthread_create(&threads[i], NULL, start[i], NULL);
		if (errno)
			target_die("pthread_create");
	}

	for (i = 0; i < NSLOTS; i++) {
		pid_t tid = target_wait_tid(&tids[i]);
		long nr = (i == SLOT_MUTEX || i == SLOT_COND) ? -2 : SYS_read;
		target_wait_blocked(names[i], tid, nr);
	}

	/* The signal thread now sits in sigwait_f2's read; interrupt it. */
	errno = pthread_kill(threads[SLOT_SIGNAL], SIGUSR1);
	if (errno)
		target_die("pthread_kill");
	for (i = 0; i < TARGET_READY_TIMEOUT_MS && !in_handler; i++)
		target_sleep_ms(1);
	if (!in_handler) {
		fprintf(stderr, "target: SIGUSR1 was not handled\n");
		_exit(3);
	}
	target_wait_blocked("t-signal handler", tids[SLOT_SIGNAL], SYS_read);

	printf("thread t-main %d\n", (int) getpid());
	for (i = 0; i < NSLOTS; i++)
		printf("thread %s %d\n", names[i], (int) tids[i]);
	printf("ready\n");

	while (target_command(buf, sizeof buf, main_f1(buf, sizeof buf)))
		;
	return 0;
}
