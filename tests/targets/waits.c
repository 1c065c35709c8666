/* waits: processes that wait on each other in known ways, for
 * tests/dump-waits.test (what each blocked thread waits on, and the
 * chains and cycles across processes of dump --follow).
 *
 *   waits pipes      parent and child each read a pipe the other one
 *                    should write: a deadlock across two processes
 *   waits waitmutex  the parent waits for its child (waitpid), whose
 *                    thread "locker" waits for a mutex its thread
 *                    "holder" holds while it sleeps
 *   waits unixcond   the parent reads a Unix socket whose other end its
 *                    child holds; the child's thread "server" waits on a
 *                    condition variable no one signals
 *   waits shmmutex   a process-shared mutex in shared memory: the child
 *                    holds it and sleeps, the parent waits for it
 *   waits vfork      the parent vforks; the child sleeps before its exec:
 *                    the parent waits in D
 *   waits epoll      the parent waits in epoll_wait on a pipe whose write
 *                    end only its child holds (sleeping)
 *   waits poll       the same with poll(2) and a timeout (it resumes through
 *                    restart_syscall after a stop)
 *   waits shmfutex   the parent waits on a bare futex in memory it shares
 *                    with its child (MAP_SHARED), which would wake it
 *   waits tcp        the parent reads a TCP connection on 127.0.0.1 whose
 *                    other end its child holds (sleeping)
 *
 * Prints "proc ROLE PID" for each process and "thread NAME TID" for the
 * named threads, then "ready" (the parent, once everything is in place,
 * as far as it can tell).  Every process dies with the test: the children
 * with their parent (PR_SET_PDEATHSIG), all after TARGET_LIFETIME_S.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#define LIFETIME_S 300

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static volatile int holder_ready;

static void
say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static pid_t
child(void)
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(LIFETIME_S);
	}
	return pid;
}

static void
named(const char *name)
{
	prctl(PR_SET_NAME, name);
	say("thread %s %ld\n", name, (long)syscall(SYS_gettid));
}

static void *
holder(void *arg)
{
	(void)arg;
	named("holder");
	pthread_mutex_lock(&mutex);
	holder_ready = 1;
	for (;;)
		pause();
	return NULL;
}

static void *
server(void *arg)
{
	(void)arg;
	named("server");
	pthread_mutex_lock(&cond_mutex);
	for (;;)
		pthread_cond_wait(&cond, &cond_mutex);
	return NULL;
}

static void
mode_pipes(void)
{
	int a[2], b[2];
	char c;
	if (pipe(a) < 0 || pipe(b) < 0)
		exit(1);
	if (child() == 0) {
		close(a[0]);
		close(b[1]);
		say("proc child %d\n", (int)getpid());
		(void)!read(b[0], &c, 1);   /* the parent never writes b */
		_exit(0);
	}
	close(a[1]);
	close(b[0]);
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	(void)!read(a[0], &c, 1);           /* the child never writes a */
}

static void
mode_waitmutex(void)
{
	pid_t kid = child();
	if (kid == 0) {
		pthread_t h;
		say("proc child %d\n", (int)getpid());
		pthread_create(&h, NULL, holder, NULL);
		while (!holder_ready)
			usleep(1000);
		named("locker");
		pthread_mutex_lock(&mutex);
		_exit(0);
	}
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	waitpid(kid, NULL, 0);
}

static void
mode_unixcond(void)
{
	int sv[2];
	char c;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		exit(1);
	if (child() == 0) {
		pthread_t s;
		close(sv[0]);
		say("proc child %d\n", (int)getpid());
		pthread_create(&s, NULL, server, NULL);
		for (;;)
			pause();
	}
	close(sv[1]);
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	(void)!read(sv[0], &c, 1);
}

static void
mode_shmmutex(void)
{
	pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				  -1, 0);
	volatile int *held = (volatile int *)(m + 1);
	pthread_mutexattr_t at;
	if (m == MAP_FAILED)
		exit(1);
	pthread_mutexattr_init(&at);
	pthread_mutexattr_setpshared(&at, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(m, &at);
	if (child() == 0) {
		say("proc child %d\n", (int)getpid());
		pthread_mutex_lock(m);
		*held = 1;
		for (;;)
			pause();
	}
	while (!*held)
		usleep(1000);
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	pthread_mutex_lock(m);
}

static void
mode_vfork(void)
{
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	pid_t pid = vfork();
	if (pid == 0) {
		/* Only async-signal-safe calls until the exec that never
		 * comes: the parent waits in D meanwhile. */
		sleep(LIFETIME_S);
		_exit(0);
	}
}

/* The read end of a pipe whose write end only a sleeping child holds. */
static int
pipe_from_child(void)
{
	int p[2];
	if (pipe(p) < 0)
		exit(1);
	if (child() == 0) {
		close(p[0]);
		say("proc child %d\n", (int)getpid());
		for (;;)
			pause();
	}
	close(p[1]);
	return p[0];
}

static void
mode_epoll(void)
{
	int r = pipe_from_child();
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };
	epoll_ctl(ep, EPOLL_CTL_ADD, r, &ev);
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	/* A stop (dump's, gdb's) ends epoll_wait with EINTR (signal(7)):
	 * as servers do, wait again. */
	while (epoll_wait(ep, &ev, 1, -1) < 0 && errno == EINTR)
		;
}

static void
mode_poll(void)
{
	struct pollfd pf = { .fd = pipe_from_child(), .events = POLLIN };
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	for (;;)
		poll(&pf, 1, 100000);
}

static void
mode_shmfutex(void)
{
	int *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (word == MAP_FAILED)
		exit(1);
	if (child() == 0) {
		say("proc child %d\n", (int)getpid());
		for (;;)
			pause();
	}
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	/* FUTEX_WAIT (shared: the child could wake it) while *word is 0. */
	for (;;)
		syscall(SYS_futex, word + 16, FUTEX_WAIT, 0, NULL, NULL, 0);
}

static void
mode_tcp(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	char c;
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0)
		exit(1);
	if (child() == 0) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		close(l);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
			_exit(1);
		say("proc child %d\n", (int)getpid());
		for (;;)
			pause();
	}
	int s = accept(l, NULL, NULL);
	close(l);
	say("proc parent %d\n", (int)getpid());
	say("ready\n");
	while (read(s, &c, 1) < 0 && errno == EINTR)
		;
}

int
main(int argc, char **argv)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(LIFETIME_S);
	const char *m = argc > 1 ? argv[1] : "";
	if (strcmp(m, "pipes") == 0)
		mode_pipes();
	else if (strcmp(m, "waitmutex") == 0)
		mode_waitmutex();
	else if (strcmp(m, "unixcond") == 0)
		mode_unixcond();
	else if (strcmp(m, "shmmutex") == 0)
		mode_shmmutex();
	else if (strcmp(m, "vfork") == 0)
		mode_vfork();
	else if (strcmp(m, "epoll") == 0)
		mode_epoll();
	else if (strcmp(m, "shmfutex") == 0)
		mode_shmfutex();
	else if (strcmp(m, "poll") == 0)
		mode_poll();
	else if (strcmp(m, "tcp") == 0)
		mode_tcp();
	else {
		fprintf(stderr, "usage: waits pipes|waitmutex|unixcond|shmmutex|vfork|epoll|"
			"poll|shmfutex|tcp\n");
		return 64;
	}
	for (;;)
		pause();
}
