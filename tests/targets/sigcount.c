/*
 * sigcount.c: a target that counts the signals it receives, and a sender
 * that queues them, for the tests of DESIGN.md's "ptrace rules"
 * (tests/promise-*.test).
 *
 * Usage: sigcount [-w WORKERS] [-q QUEUE] [-y]
 *   Handles SIGRTMIN .. SIGRTMIN+3 (SA_RESTART) and counts every delivery;
 *   blocks no signal in any thread.  -w N starts N CPU-bound worker threads
 *   "s-work-I" (never asleep: a stopped process shows in their CPU time;
 *   with -y they duty-cycle: about 5 ms of work, then 15 ms asleep).
 *   Prints "thread NAME TID" for each thread, then "ready"; then the main
 *   thread serves stdin as in target.h, plus "count" -> "count N" (the
 *   signals handled so far).  -q N caps the signals queued to it at N
 *   (RLIMIT_SIGPENDING, which the kernel checks against the receiver: it
 *   counts all the user's pending signals), so that a flood keeps the
 *   queue full without growing it (delivering from a long queue of
 *   real-time signals takes time quadratic in its length).
 *
 * Usage: sigcount send PID N MS [TID]
 *   Queues N real-time signals (sigqueue, cycling SIGRTMIN .. SIGRTMIN+3)
 *   to process PID, or to its thread TID (rt_tgsigqueueinfo), spread over
 *   about MS milliseconds; a full queue (EAGAIN) is waited out, not
 *   counted.  Prints "sent N" and exits 0, or exits 1 when PID is gone.
 *   SIGTERM ends the sending early: it prints "sent N" of those it sent
 *   and exits 0.
 *   Real-time signals queue: each one sent is one delivery, so the target's
 *   count must end equal to the number sent.
 */
#include "target.h"

#include <sys/resource.h>

#define NSIGS 4
#define MAX_WORKERS 64

static volatile unsigned long count;
static volatile unsigned long sink;
static volatile pid_t tids[MAX_WORKERS];
static int duty;
static volatile sig_atomic_t stop_sending;

void *worker(void *arg);

static void
on_signal(int sig, siginfo_t *si, void *uc)
{
	(void) sig; (void) si; (void) uc;
	__atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
}

NOINLINE void *
worker(void *arg)
{
	long i = (long) arg;
	char name[16];
	unsigned long x = (unsigned long) i + 1;
	struct target_duty d = { 5, 15, 0 };

	snprintf(name, sizeof name, "s-work-%ld", i);
	target_register(name, &tids[i]);
	for (;;) {
		for (int k = 0; k < 100000; k++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
		if (duty)
			target_duty(&d);
	}
	return arg;
}

static int
send_one(pid_t pid, pid_t tid, int sig, unsigned long n)
{
	union sigval v = { .sival_int = (int) n };
	siginfo_t si;

	if (!tid)
		return sigqueue(pid, sig, v);
	memset(&si, 0, sizeof si);
	si.si_signo = sig;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_uid = getuid();
	si.si_value = v;
	return (int) syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &si);
}

static void
on_term(int sig)
{
	(void) sig;
	stop_sending = 1;
}

static int
sender(int argc, char **argv)
{
	pid_t pid, tid = 0;
	unsigned long n, sent = 0;
	long ms;

	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: sigcount send PID N MS [TID]\n");
		return 2;
	}
	pid = (pid_t) atol(argv[2]);
	n = strtoul(argv[3], NULL, 10);
	ms = atol(argv[4]);
	if (argc == 6)
		tid = (pid_t) atol(argv[5]);
	signal(SIGTERM, on_term);
	/* Batches of 10, a pause after each, so the signals cover MS. */
	while (sent < n && !stop_sending) {
		if (send_one(pid, tid, SIGRTMIN + (int) (sent % NSIGS), sent) != 0) {
			if (errno == EAGAIN) {
				target_sleep_ms(1);
				continue;
			}
			fprintf(stderr, "sigcount send: %s after %lu\n",
				strerror(errno), sent);
			printf("sent %lu\n", sent);
			return 1;
		}
		sent++;
		if (sent % 10 == 0 && n >= 10)
			target_sleep_ms(ms / (long) (n / 10));
	}
	printf("sent %lu\n", sent);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	long workers = 0, queue = -1;
	int c;
	char buf[256];

	if (argc > 1 && strcmp(argv[1], "send") == 0)
		return sender(argc, argv);

	target_init();
	pthread_setname_np(pthread_self(), "sigcount");
	while ((c = getopt(argc, argv, "w:q:y")) != -1) {
		switch (c) {
		case 'w': workers = atol(optarg); break;
		case 'q': queue = atol(optarg); break;
		case 'y': duty = 1; break;
		default:
			fprintf(stderr, "usage: sigcount [-w N] [-q N] [-y]\n");
			return 2;
		}
	}
	if (workers < 0 || workers > MAX_WORKERS)
		workers = 1;
	if (queue >= 0) {
		struct rlimit rl;

		if (getrlimit(RLIMIT_SIGPENDING, &rl) != 0)
			target_die("getrlimit");
		rl.rlim_cur = (rlim_t) queue;
		if (setrlimit(RLIMIT_SIGPENDING, &rl) != 0)
			target_die("setrlimit");
	}

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NSIGS; i++)
		if (sigaction(SIGRTMIN + i, &sa, NULL) != 0)
			target_die("sigaction");

	printf("thread sigcount %d\n", (int) target_gettid());
	for (long i = 0; i < workers; i++) {
		pthread_t th;

		errno = pthread_create(&th, NULL, worker, (void *) i);
		if (errno)
			target_die("pthread_create");
		printf("thread s-work-%ld %d\n", i, (int) target_wait_tid(&tids[i]));
	}
	printf("ready\n");
	for (;;) {
		ssize_t r = read(0, buf, sizeof buf - 1);

		if (r > 0 && strncmp(buf, "count", 5) == 0) {
			printf("count %lu\n",
			       __atomic_load_n(&count, __ATOMIC_RELAXED));
			continue;
		}
		if (!target_command(buf, sizeof buf, r))
			break;
	}
	return 0;
}
