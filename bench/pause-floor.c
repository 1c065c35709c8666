/*
 * bench/pause-floor.c - the physical floor of one thread-sample, to hold
 * `stackspy record`'s pause figures against (bench/record-pause.sh).
 *
 * It does only what DESIGN.md's data path says a sample must do, with raw
 * system calls and nothing else: PTRACE_SEIZE every thread once, then at
 * each tick, for each thread that is running ('R', as record's on-CPU mode
 * selects them): PTRACE_INTERRUPT, waitpid(__WALL) for its stop, one
 * PTRACE_GETREGSET NT_PRSTATUS, one page-split process_vm_readv of at most
 * 64 KiB from SP cut at the end of the stack mapping, PTRACE_CONT.  The
 * pause is timed from before the INTERRUPT to after the CONT, as
 * ptrace_sample() times it.  Like ptrace_sample(), it runs SCHED_FIFO 1
 * between the two (so the figures compare like with like); --no-boost
 * measures without.  The wait for the stop blocks in waitpid; --spin US
 * polls waitpid(WNOHANG) for up to US microseconds first (then blocks):
 * a blocked tracer must itself be woken and scheduled when the stop
 * comes, a spinning one is already running (bench/pause-spin.sh).
 *
 *   bench/pause-floor -p PID [-r HZ] [-d SECONDS] [--no-boost] [--spin US]
 *
 * Prints "floor: N thread-samples: mean X us, p50 Y us, p99 Z us, max W us",
 * then "floor cpu: U us per thread-sample, V us per tick (T ticks, A Hz)":
 * its own CPU time (getrusage), the tracer CPU a sampler cannot go below
 * (bench/record-cost.sh holds stackspy's against it), and the rate it
 * achieved (a tick that starts a period or more late is missed).  It ends
 * early when the target has exited.
 * Signal-delivery-stops are re-injected; no signal handling beyond that,
 * and SIGINT kills it (the kernel detaches seized tracees).
 */
#include "config.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WINDOW   (64 * 1024)
#define PAGE     4096u
#define MAX_TIDS 1024
#define MAX_MAPS 4096

struct map { uint64_t start, end; };

static struct map maps[MAX_MAPS];
static size_t nmaps;

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
read_maps(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	nmaps = 0;
	if (!f)
		return;
	while (nmaps < MAX_MAPS && fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		if (sscanf(line, "%llx-%llx", &s, &e) == 2)
			maps[nmaps++] = (struct map){ s, e };
	}
	fclose(f);
}

/* End of the mapping holding sp (re-read the maps once if none does). */
static uint64_t
stack_end(pid_t pid, uint64_t sp)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nmaps; i++)
			if (sp >= maps[i].start && sp < maps[i].end)
				return maps[i].end;
		read_maps(pid);
	}
	return 0;
}

static int
list_tids(pid_t pid, pid_t *tids)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	int n = 0;
	struct dirent *de;
	if (!d)
		return -1;
	while ((de = readdir(d)) && n < MAX_TIDS)
		if (de->d_name[0] != '.')
			tids[n++] = atoi(de->d_name);
	closedir(d);
	return n;
}

/* The state letter of a thread from its stat file, opened once (*fd < 0:
 * open it now) and read with pread at each tick, as stackspy does: the
 * floor should not pay for what a sampler need not do. */
static char
thread_state(pid_t pid, pid_t tid, int *fd)
{
	char path[96], buf[512];
	if (*fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
		*fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*fd < 0)
			return 0;
	}
	ssize_t n = pread(*fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static double
cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void
boost(int on)
{
	static struct sched_param normal;
	struct sched_param rt = { .sched_priority = 1 };
	if (on)
		sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt);
	else
		sched_setscheduler(0, SCHED_OTHER, &normal);
}

/* waitpid for tid's next stop: spin_ns of WNOHANG polls, then block. */
static pid_t
wait_stop(pid_t tid, int *st, uint64_t spin_ns)
{
	if (spin_ns) {
		uint64_t until = now_ns() + spin_ns;
		do {
			pid_t r = waitpid(tid, st, WNOHANG | __WALL);
			if (r != 0)
				return r;
		} while (now_ns() < until);
	}
	return waitpid(tid, st, __WALL);
}

/* One thread-sample; returns the pause in ns, 0 if the thread is gone. */
static uint64_t
sample(pid_t pid, pid_t tid, unsigned char *stack, int use_boost, uint64_t spin_ns)
{
	unsigned char regs[512];
	struct iovec iov = { regs, sizeof(regs) };
	int st;

	if (use_boost)
		boost(1);
	uint64_t t0 = now_ns();
	if (ptrace(PTRACE_INTERRUPT, tid, 0L, 0L) < 0)
		goto gone;
	for (;;) {
		if (wait_stop(tid, &st, spin_ns) != tid || !WIFSTOPPED(st))
			goto gone;
		if ((st >> 16) != 0)
			break;
		/* A signal-delivery-stop: re-inject it, wait for ours. */
		ptrace(PTRACE_CONT, tid, 0L, (long)WSTOPSIG(st));
	}
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) == 0) {
#if defined(__x86_64__)
		uint64_t sp = ((const uint64_t *)regs)[19];  /* user_regs_struct.rsp */
#elif defined(__aarch64__)
		uint64_t sp = ((const uint64_t *)regs)[31];
#else
		uint64_t sp = 0;
#endif
		uint64_t end = stack_end(pid, sp), len = WINDOW;
		if (end > sp && end - sp < len)
			len = end - sp;
		struct iovec local = { stack, (size_t)len }, remote[WINDOW / PAGE + 1];
		size_t n = 0;
		for (uint64_t a = sp; a < sp + len; n++) {
			uint64_t next = (a & ~(uint64_t)(PAGE - 1)) + PAGE;
			if (next > sp + len)
				next = sp + len;
			remote[n] = (struct iovec){ (void *)(uintptr_t)a, (size_t)(next - a) };
			a = next;
		}
		if (sp && len)
			process_vm_readv(tid, &local, 1, remote, n, 0);
	}
	ptrace(PTRACE_CONT, tid, 0L, 0L);
	uint64_t t = now_ns() - t0;
	if (use_boost)
		boost(0);
	return t ? t : 1;
gone:
	if (use_boost)
		boost(0);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "no-boost", no_argument, NULL, 'B' },
		{ "spin", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t pid = 0, tids[MAX_TIDS];
	int stat_fds[MAX_TIDS];
	double rate = 1000, secs = 5;
	int use_boost = 1, c;
	uint64_t spin_ns = 0;

	while ((c = getopt_long(argc, argv, "p:r:d:", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': pid = atoi(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'd': secs = atof(optarg); break;
		case 'B': use_boost = 0; break;
		case 'S': spin_ns = (uint64_t)(atof(optarg) * 1000); break;
		default:
			fprintf(stderr, "usage: pause-floor -p PID [-r HZ] [-d SECONDS] [--no-boost] [--spin US]\n");
			return 64;
		}
	}
	if (pid <= 0 || !(rate > 0) || !(secs > 0)) {
		fprintf(stderr, "usage: pause-floor -p PID [-r HZ] [-d SECONDS] [--no-boost] [--spin US]\n");
		return 64;
	}
	int n = list_tids(pid, tids);
	if (n <= 0) {
		fprintf(stderr, "pause-floor: no process %d\n", (int)pid);
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (ptrace(PTRACE_SEIZE, tids[i], 0L, 0L) < 0) {
			perror("pause-floor: PTRACE_SEIZE");
			return 2;
		}
	read_maps(pid);
	for (int i = 0; i < n; i++)
		stat_fds[i] = -1;

	unsigned char *stack = malloc(WINDOW);
	size_t cap = (size_t)(rate * secs * n) + 16, ns = 0;
	uint64_t *pauses = malloc(cap * sizeof(*pauses));
	if (!stack || !pauses)
		return 2;
	uint64_t period = (uint64_t)(1e9 / rate), start = now_ns();
	uint64_t end = start + (uint64_t)(secs * 1e9), ticks = 0, missed = 0;
	double cpu0 = cpu_seconds();
	for (uint64_t k = 1;; k++) {
		uint64_t at = start + k * period;
		if (at >= end)
			break;
		struct timespec ts = { (time_t)(at / 1000000000u), (long)(at % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		uint64_t late = now_ns() - at;
		if (late >= period) {
			/* Like stackspy: the deadlines we ran past are missed. */
			missed += late / period;
			k += late / period;
		}
		ticks++;
		int alive = 0;
		for (int i = 0; i < n; i++) {
			char state = thread_state(pid, tids[i], &stat_fds[i]);
			alive |= state && state != 'Z' && state != 'X';
			if (state != 'R')
				continue;
			uint64_t t = sample(pid, tids[i], stack, use_boost, spin_ns);
			if (t && ns < cap)
				pauses[ns++] = t;
		}
		if (!alive)
			break;  /* the target exited */
	}
	double cpu = cpu_seconds() - cpu0, wall = (double)(now_ns() - start) / 1e9;
	/* No PTRACE_DETACH: it needs a stopped tracee; our exit detaches
	 * every running one. */
	if (!ns) {
		printf("floor: no thread was running\n");
		return 1;
	}
	qsort(pauses, ns, sizeof(*pauses), cmp_u64);
	double sum = 0;
	for (size_t i = 0; i < ns; i++)
		sum += (double)pauses[i];
	printf("floor: %zu thread-samples: mean %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us (boost %s, spin %.0f us)\n",
	       ns, sum / (double)ns / 1000, (double)pauses[ns / 2] / 1000,
	       (double)pauses[ns - 1 - ns / 100] / 1000, (double)pauses[ns - 1] / 1000,
	       use_boost ? "on" : "off", (double)spin_ns / 1000);
	printf("floor cpu: %.1f us per thread-sample, %.1f us per tick (%llu ticks, %llu missed, %.1f Hz)\n",
	       1e6 * cpu / (double)ns, ticks ? 1e6 * cpu / (double)ticks : 0.0,
	       (unsigned long long)ticks, (unsigned long long)missed, (double)ticks / wall);
	free(stack);
	free(pauses);
	return 0;
}
