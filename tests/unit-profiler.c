/* tests/unit-profiler.c - the pieces of the sampling loop that need no
 * target: the thread table (growth, sweep, recycled tids, renames from
 * the stat line), stat-line parsing, the pause
 * histogram and its p99, tick deadlines and missed ticks, and the rules
 * of a folded line the profiler names frames with. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"
#include "tests/check.h"


/* ---- /proc/PID/task/TID/stat ---------------------------------------------- */

static void
test_task_stat(void)
{
	const char *comm;
	size_t len;
	/* a name with ") " inside: the state follows the last ')' */
	CHECK(profiler_task_stat_parse("123 (a) b) S 1 123 0", &comm, &len, NULL) == 'S');
	CHECK(comm && len == 4 && strncmp(comm, "a) b", len) == 0);
	CHECK(profiler_task_stat_parse("7 (worker 1) R 1 7", &comm, &len, NULL) == 'R');
	CHECK(comm && len == 8 && strncmp(comm, "worker 1", len) == 0);
	CHECK(profiler_task_stat_parse("8 () D 1", &comm, &len, NULL) == 'D');
	CHECK(comm && len == 0);
	CHECK(profiler_task_stat_parse("garbage", &comm, &len, NULL) == 0);
	CHECK(comm == NULL);
	CHECK(profiler_task_stat_parse("1 (x)", &comm, &len, NULL) == 0);
	CHECK(profiler_task_stat_parse("1 (x)S 1", &comm, &len, NULL) == 0);
	/* the numbers after it (ptrace_proc_stat_parse, the one parser) */
	struct proc_stat ps;
	CHECK(ptrace_proc_stat_parse("42 (a) 9 9) S 7 42 42 0 -1 4194560 100 0 0 0 11 22 33 44 "
				     "20 0 1 0 5555 1000 10", &ps) == 0);
	CHECK(ps.state == 'S' && ps.ppid == 7 && ps.flags == 4194560);
	CHECK(ps.utime == 11 && ps.stime == 22 && ps.cutime == 33 && ps.cstime == 44);
	CHECK_EQ_U64(ps.start_time, 5555);
	CHECK(ps.processor == -1);
	CHECK(ps.comm_len == 6 && strncmp(ps.comm, "a) 9 9", 6) == 0);
	/* field 39, the CPU */
	CHECK(ptrace_proc_stat_parse("5 (w) R 1 5 5 0 -1 4194368 90 0 0 0 7 8 0 0 20 0 1 0 77 "
				     "1000 100 1844 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0",
				     &ps) == 0 && ps.processor == 1 && ps.start_time == 77);
	CHECK(ptrace_proc_stat_parse("3 (k) I 2 0", &ps) == 0 && ps.ppid == 2 &&
	      ps.start_time == 0 && ps.processor == -1);
	/* our own thread, read as the profiler reads it */
	char buf[512];
	int fd = profiler_task_file_open(getpid(), gettid(), "stat");
	CHECK(fd >= 0);
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	CHECK(n > 0);
	if (n > 0) {
		buf[n] = '\0';
		int cpu = -1;
		CHECK(profiler_task_stat_parse(buf, &comm, &len, &cpu) == 'R');
		/* field 39: the CPU this thread runs on (it may move) */
		CHECK(cpu >= 0, "cpu %d", cpu);
	}
	if (fd >= 0)
		close(fd);
	CHECK(profiler_task_file_open(getpid(), 0, "stat") < 0);
	/* /proc/TID/sched's se.exec_start and nr_switches (tick_took_cpu,
	 * ran_at_tick) */
	struct task_sched sch;
	CHECK(ptrace_task_sched_parse("cat (19125, #threads: 1)\n-----\n"
				      "se.exec_start          :        588651.326768\n"
				      "se.vruntime      :    16891.087798\n"
				      "nr_switches    :     42\n"
				      "nr_voluntary_switches    :     40\n", &sch) == 0);
	CHECK_EQ_U64(sch.exec_start_ns, 588651326768u);
	CHECK(sch.has_switches && sch.switches == 42);
	CHECK(ptrace_task_sched_parse("se.exec_start : 1.000002\n", &sch) == 0 &&
	      sch.exec_start_ns == 1000002 && !sch.has_switches);
	CHECK(ptrace_task_sched_parse("se.exec_start : 12.3\n", &sch) == -ENODATA);
	CHECK(ptrace_task_sched_parse("se.vruntime : 1.000000\n", &sch) == -ENODATA);
	int e = ptrace_read_task_sched(0, 0, &sch);
	CHECK(e == 0 || e == -ENOENT || e == -ESRCH, "%d", e);
	CHECK(e != 0 || sch.has_switches);
}

/* ---- thread table ------------------------------------------------------------ */

static struct profiler *
fake_profiler(bool threads)
{
	struct profiler *p = calloc(1, sizeof(*p));
	if (!p || !(p->stacks = collapse_new())) {
		fprintf(stderr, "out of memory\n");
		exit(99);
	}
	p->cfg.threads = threads;
	return p;
}

static void
fake_profiler_free(struct profiler *p, struct proc_state *ps)
{
	thread_table_free(ps);
	collapse_free(p->stacks);
	free(p);
}

static const char *
frame(const struct profiler *p, uint32_t id)
{
	const char *name = collapse_frame_name(p->stacks, id);
	return name ? name : "(none)";
}

/* Thread tid's state, or NULL: a walk over the table, not its index. */
static struct thread_state *
find(struct proc_state *ps, pid_t tid)
{
	for (size_t i = 0; i < ps->tn; i++)
		if (ps->threads[i].tid == tid)
			return &ps->threads[i];
	return NULL;
}

static void
test_thread_table(void)
{
	struct profiler *p = fake_profiler(true);
	struct proc_state ps;
	memset(&ps, 0, sizeof(ps));
	/* a PID with no /proc entry: the stat files do not open */
	ps.pid = 0x3ffffff0;
	struct tracee th = { .tid = 1000 };
	snprintf(th.name, sizeof(th.name), "%s", "main thread");

	struct thread_state *ts = thread_state_get(p, &ps, &th);
	CHECK(ts && ts->tid == 1000 && ts->stat_fd < 0 && ts->schedstat_fd < 0);
	CHECK(ts && strcmp(ts->name, "main thread") == 0);
	CHECK(ts && strcmp(frame(p, ts->root_id), "main_thread-1073741808/1000") == 0);
	CHECK(p->stats.threads_seen == 1 && ps.tn == 1);
	/* the same thread again: the same state */
	if (ts)
		ts->last_cpu_ns = 42;
	CHECK(thread_state_get(p, &ps, &th) == ts);
	CHECK(p->stats.threads_seen == 1 && ps.tn == 1);

	/* 200 threads: the table grows (from 64 slots), nothing is lost */
	for (pid_t tid = 1001; tid < 1200; tid++) {
		th.tid = tid;
		snprintf(th.name, sizeof(th.name), "w%d", (int)tid);
		struct thread_state *t = thread_state_get(p, &ps, &th);
		CHECK(t && t->tid == tid);
		if (t)
			t->last_cpu_ns = (uint64_t)tid;
	}
	CHECK(ps.tn == 200 && p->stats.threads_seen == 200);
	CHECK(ps.tcap >= ps.tn && ps.tindex.cap >= 2 * ps.tn);
	ts = find(&ps, 1000);
	CHECK(ts && ts->last_cpu_ns == 42);
	ts = find(&ps, 1150);
	CHECK(ts && ts->last_cpu_ns == 1150 && strcmp(ts->name, "w1150") == 0);

	/* sweep: only the threads seen in tick 5 stay */
	for (size_t i = 0; i < ps.tn; i++)
		if (ps.threads[i].tid % 3 == 0)
			ps.threads[i].seen_tick = 5;
	thread_table_sweep(&ps, 5);
	size_t kept = 0;
	bool ok = true;
	for (pid_t tid = 1000; tid < 1200; tid++) {
		struct thread_state *t = find(&ps, tid);
		kept += t != NULL;
		ok &= (t != NULL) == (tid % 3 == 0);
		if (t && tid != 1000)
			ok &= t->last_cpu_ns == (uint64_t)tid;
		/* the states moved into the holes are found where they went */
		ok &= thread_state_find(&ps, tid) == t;
	}
	CHECK(ok);
	CHECK(kept == 66 && ps.tn == 66);
	/* the kept ones are still found through the table, not added again */
	th.tid = 1152;
	snprintf(th.name, sizeof(th.name), "%s", "other");
	ts = thread_state_get(p, &ps, &th);
	CHECK(ts && ts->last_cpu_ns == 1152 && strcmp(ts->name, "w1152") == 0);
	CHECK(ps.tn == 66 && p->stats.threads_seen == 200);
	/* a swept one comes back as a new thread */
	th.tid = 1151;
	ts = thread_state_get(p, &ps, &th);
	CHECK(ts && ts->last_cpu_ns == 0 && strcmp(ts->name, "other") == 0);
	CHECK(ps.tn == 67 && p->stats.threads_seen == 201);

	/* a recycled tid: the old thread's stat file said it exited, the new
	 * thread starts afresh under its own name */
	th.tid = 1152;
	ts = thread_state_get(p, &ps, &th);
	if (ts)
		ts->dead = true;
	snprintf(th.name, sizeof(th.name), "%s", "reborn");
	struct thread_state *again = thread_state_get(p, &ps, &th);
	CHECK(again && !again->dead && again->last_cpu_ns == 0);
	CHECK(again && strcmp(again->name, "reborn") == 0);
	CHECK(again && strcmp(frame(p, again->root_id), "reborn-1073741808/1152") == 0);
	CHECK(ps.tn == 67 && p->stats.threads_seen == 202);

	/* a thread whose stat file cannot be read has exited */
	CHECK(again && thread_state_now(p, &ps, again) == 0 && again->dead);
	fake_profiler_free(p, &ps);
}

/* The name in the stat line renames the thread, and with --threads its
 * root frame: our own thread, renamed with prctl. */
static void
test_thread_rename(bool threads)
{
	char old[16] = "";
	prctl(PR_GET_NAME, old);
	struct profiler *p = fake_profiler(threads);
	struct proc_state ps;
	memset(&ps, 0, sizeof(ps));
	ps.pid = getpid();
	struct tracee th = { .tid = gettid() };
	snprintf(th.name, sizeof(th.name), "%s", "before");
	struct thread_state *ts = thread_state_get(p, &ps, &th);
	/* Descriptors are opened when first read (threads.c's cache). */
	CHECK(ts && ts->stat_fd < 0);
	uint32_t first_root = ts ? ts->root_id : 0;
	CHECK(prctl(PR_SET_NAME, "tp\tworker 2") == 0);
	CHECK(ts && thread_state_now(p, &ps, ts) == 'R');
	CHECK(ts && ts->stat_fd >= 0 && ts->schedstat_fd >= 0);
	CHECK(ts && strcmp(ts->name, "tp\tworker 2") == 0);
	char want[64];
	snprintf(want, sizeof(want), "tp_worker_2-%d/%d", (int)getpid(), (int)gettid());
	if (threads)
		CHECK(ts && strcmp(frame(p, ts->root_id), want) == 0);
	else
		CHECK(ts && ts->root_id == first_root && collapse_lookup(p->stacks, want) < 0);
	prctl(PR_SET_NAME, old);
	fake_profiler_free(p, &ps);
}

/* ---- pause histogram ------------------------------------------------------- */

static bool
near(double a, double b)
{
	return fabs(a - b) < 1e-6;
}

static void
test_pause_hist(void)
{
	struct pause_hist h;
	double mean, p99, max;
	CHECK(profiler_pause_hist_init(&h) == 0);
	profiler_pause_hist_summary(&h, &mean, &p99, &max);
	CHECK(mean == 0 && p99 == 0 && max == 0);

	/* 1000 pauses of 5 us and 10 of 5 ms: the 99th percentile is in the
	 * 5 us bucket, reported as its upper edge */
	for (int i = 0; i < 1000; i++)
		profiler_pause_hist_add(&h, 5400);
	for (int i = 0; i < 10; i++)
		profiler_pause_hist_add(&h, 5000000);
	profiler_pause_hist_summary(&h, &mean, &p99, &max);
	CHECK(near(p99, 6));
	CHECK(near(max, 5000));
	CHECK(near(mean, (1000 * 5.4 + 10 * 5000.0) / 1010));
	/* one more slow one and the 99th percentile is a slow one */
	for (int i = 0; i < 2; i++)
		profiler_pause_hist_add(&h, 5000000);
	profiler_pause_hist_summary(&h, &mean, &p99, &max);
	CHECK(near(p99, 5000));
	profiler_pause_hist_release(&h);

	/* past 10 ms, 100 us buckets; the edge is never above the maximum */
	CHECK(profiler_pause_hist_init(&h) == 0);
	for (int i = 0; i < 99; i++)
		profiler_pause_hist_add(&h, 50020000);  /* 50.02 ms */
	profiler_pause_hist_add(&h, 900000000);
	profiler_pause_hist_summary(&h, &mean, &p99, &max);
	CHECK(near(p99, 50100));
	CHECK(near(max, 900000));
	profiler_pause_hist_release(&h);
	CHECK(profiler_pause_hist_init(&h) == 0);
	profiler_pause_hist_add(&h, 50020000);
	profiler_pause_hist_summary(&h, &mean, &p99, &max);
	CHECK(near(p99, 50020) && near(max, 50020) && near(mean, 50020));
	profiler_pause_hist_release(&h);

	/* past 1 s, the open last bucket: the maximum */
	CHECK(profiler_pause_hist_init(&h) == 0);
	for (int i = 0; i < 10; i++)
		profiler_pause_hist_add(&h, 3000000000u + (uint64_t)i);
	profiler_pause_hist_summary(&h, &mean, &p99, &max);
	CHECK(near(p99, max) && near(max, 3000000.009));
	profiler_pause_hist_release(&h);
}

/* ---- tick deadlines ----------------------------------------------------------- */

static void
test_tick_clock(void)
{
	struct tick_clock c;
	const uint64_t start = 5000000000u;
	ticks_clock_init(&c, 100.0, start);
	CHECK(c.period_ns == 10000000u && c.next_index == 0 && c.rng != 0);

	/* deadline k stays within 1/2 period of start + k * period: the
	 * jitter does not accumulate; it does vary, and over the whole
	 * period (a narrow jitter let a target's cycle lock in phase) */
	bool in_range = true, varied = false;
	unsigned early = 0, late = 0;
	uint64_t first = ticks_clock_deadline(&c);
	for (uint64_t k = 0; k < 2000; k++) {
		c.next_index = k;
		uint64_t at = ticks_clock_deadline(&c);
		uint64_t base = start + k * c.period_ns;
		in_range &= at + c.period_ns / 2 >= base && at <= base + c.period_ns / 2;
		varied |= k == 0 && at != first;
		early += at + c.period_ns / 4 < base;
		late += at > base + c.period_ns / 4;
	}
	CHECK(in_range);
	CHECK(varied);
	CHECK(early > 300 && late > 300, "%u early, %u late of 2000", early, late);

	/* a tick that ends before the next deadline misses nothing */
	c.next_index = 0;
	CHECK(ticks_clock_advance(&c, start + c.period_ns / 2) == 0);
	CHECK(c.next_index == 1);
	/* one that ends at 3.5 periods ran past deadlines 2 and 3 */
	CHECK(ticks_clock_advance(&c, start + 7 * c.period_ns / 2) == 2);
	CHECK(c.next_index == 4);
	/* ending on a deadline is not missing it */
	CHECK(ticks_clock_advance(&c, start + 5 * c.period_ns) == 0);
	CHECK(c.next_index == 5);
	/* a long stall: every deadline passed counts */
	CHECK(ticks_clock_advance(&c, start + 1005 * c.period_ns + 1) == 1000);
	CHECK(c.next_index == 1006);

	/* a rate above 1 GHz still has a period */
	ticks_clock_init(&c, 1e10, start);
	CHECK(c.period_ns == 1);
	CHECK(ticks_clock_deadline(&c) == start);
}

/* ---- folded-line names -------------------------------------------------------- */

static void
test_frame_names(void)
{
	char buf[64];
	const char *fn = "std::vector<int>::push_back";
	CHECK(collapse_name_frame(buf, sizeof(buf), fn, "/usr/lib/libfoo.so") == fn);
	CHECK(strcmp(collapse_name_frame(buf, sizeof(buf), NULL, "/usr/lib/x86_64/libc.so.6"),
		     "[libc.so.6]") == 0);
	CHECK(strcmp(collapse_name_frame(buf, sizeof(buf), NULL, "prog"), "[prog]") == 0);
	CHECK(strcmp(collapse_name_frame(buf, sizeof(buf), NULL, NULL), "[unknown]") == 0);
	CHECK(strcmp(collapse_module_basename("/a/b/c.so"), "c.so") == 0);
	CHECK(strcmp(collapse_module_basename("c.so"), "c.so") == 0);
	CHECK(strcmp(collapse_name_inline(buf, sizeof(buf), "helper"), "helper_[i]") == 0);
	CHECK(strcmp(collapse_name_root(buf, sizeof(buf), "my prog", 12, 34), "my_prog-12/34") == 0);
	CHECK(strcmp(collapse_name_root(buf, sizeof(buf), "a\tb\nc\x7f", 12, 0), "a_b_c_-12") == 0);
	/* cut, never overrun */
	char small[8];
	CHECK(strcmp(collapse_name_root(small, sizeof(small), "abcdef", 123, 0), "abcdef-") == 0);
	/* what the folded writer changes on the way out; roots need nothing */
	char s[] = "a;b\nc d\x7f";
	CHECK(collapse_sanitize_frame(s) == 3 && strcmp(s, "a:b c d ") == 0);
	collapse_name_root(buf, sizeof(buf), "x y\x01", 1, 2);
	CHECK(collapse_sanitize_frame(buf) == 0);
}

/* ---- the on-CPU rule (oncpu.c) -------------------------------------------- */

/* An x86-64 NT_PRSTATUS whose system-call words say nr/ret (nr -1: none). */
static void
fake_regs(struct stack_snapshot *s, int64_t nr, int64_t ret)
{
	const struct arch *a = &arch_x86_64;
	memset(s->regs, 0, sizeof(s->regs));
	s->regs_len = a->pr_reg_size;
	memcpy(s->regs + (size_t)a->pr_syscall_nr * 8, &nr, 8);
	memcpy(s->regs + (size_t)a->pr_syscall_ret * 8, &ret, 8);
}

static void
test_oncpu_rule(void)
{
	const struct arch *a = &arch_x86_64;
	const uint64_t tick = 10000000u;
	struct stack_snapshot s;
	memset(&s, 0, sizeof(s));
	struct task_schedstat before = { .cpu_ns = 500000, .wait_ns = 1000, .slices = 40,
					 .read_ns = tick + 1000 };

	/* on a CPU at the tick, in user code: counts */
	fake_regs(&s, -1, 0);
	s.stop_sched = (struct task_schedstat){ .cpu_ns = 520000, .wait_ns = 1000,
						.slices = 40, .read_ns = tick + 30000 };
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == -1);
	/* running a system call (its result, or -ENOSYS at the entry): counts */
	fake_regs(&s, 1, 4096);
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == -1);
	fake_regs(&s, 1, -ENOSYS);
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == -1);
	/* a blocking call cut short by the stop after it slept (scheduled in
	 * again to stop): asleep, whatever else; one that never slept (the
	 * interrupt was pending when it began) ran from the tick on, but
	 * elsewhere (it went on into the call after the look): not counted
	 * there either, its next counted stop carries that CPU time */
	static const int64_t cut[] = { -512, -513, -514, -516, -EINTR };
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		fake_regs(&s, 230, cut[i]);
		CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_ASLEEP,
		      "ret %lld", (long long)cut[i]);
		s.stop_sched.slices = 41;
		s.stop_sched.wait_ns = before.wait_ns + 20000;
		CHECK(oncpu_verdict(a, &s, &before, true, tick, 0) == ONCPU_DROP_ASLEEP,
		      "ret %lld", (long long)cut[i]);
		s.stop_sched.slices = 40;
		s.stop_sched.wait_ns = before.wait_ns;
	}
	/* scheduled in to take the stop, its wait older than the tick: it
	 * was waiting for a CPU */
	fake_regs(&s, -1, 0);
	s.stop_sched.slices = 41;
	s.stop_sched.wait_ns = before.wait_ns + 3000000;
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_WAITING);
	/* ... its wait began with the tick, and the tick took its CPU:
	 * counts */
	s.stop_sched.wait_ns = before.wait_ns + 20000;
	CHECK(oncpu_verdict(a, &s, &before, 1, tick, 0) == -1);
	/* ... another thread took it just before the tick (a sibling woken
	 * on a busy CPU): waiting */
	CHECK(oncpu_verdict(a, &s, &before, 0, tick, 0) == ONCPU_DROP_WAITING);
	/* ... who took it cannot be told (no /proc/TID/sched): the wait's
	 * start alone decides */
	CHECK(oncpu_verdict(a, &s, &before, -1, tick, 0) == -1);
	/* ... but not inside a system call that returned (woken from sleep) */
	fake_regs(&s, 230, 0);
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_WAITING);
	CHECK(oncpu_verdict(a, &s, &before, -1, tick, 0) == ONCPU_DROP_WAITING);
	/* ... unless the tracer was seen to take its CPU (it ran in the
	 * kernel: a read of /dev/zero) */
	fake_regs(&s, 0, 65536);
	CHECK(oncpu_verdict(a, &s, &before, true, tick, 0) == -1);
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_WAITING);
	/* ... and not when its wait is older than the tick, whatever CPU */
	s.stop_sched.wait_ns = before.wait_ns + 3000000;
	CHECK(oncpu_verdict(a, &s, &before, true, tick, 0) == ONCPU_DROP_WAITING);
	s.stop_sched.wait_ns = before.wait_ns + 20000;
	/* scheduled in twice: waiting */
	fake_regs(&s, -1, 0);
	s.stop_sched.slices = 42;
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_WAITING);
	/* no scheduled-in count: CPU time since the last stop decides */
	struct task_schedstat none = { 0 };
	s.stop_sched = (struct task_schedstat){ .cpu_ns = 520000 };
	CHECK(oncpu_verdict(a, &s, &none, false, tick, 500000) == ONCPU_DROP_IDLE);
	CHECK(oncpu_verdict(a, &s, &none, false, tick, 400000) == -1);
	CHECK(oncpu_verdict(a, &s, &none, false, tick, 0) == -1);
	/* a counted stop carries its thread's CPU time since the time the
	 * earlier ones carried, in whole ticks of 1 ms: at least its own */
	{
		struct thread_state w;
		uint64_t lost = 0, ms = 1000000;
		memset(&w, 0, sizeof(w));
		CHECK(oncpu_weight(&w, 5 * ms, ms, &lost) == 1);   /* first: from now */
		CHECK(w.counted_set && w.counted_cpu_ns == 5 * ms);
		CHECK(oncpu_weight(&w, 5 * ms + ms / 2, ms, &lost) == 1);  /* less: still 1, */
		CHECK(w.counted_cpu_ns == 6 * ms);               /* ... ahead of its CPU */
		CHECK(oncpu_weight(&w, 6 * ms + ms / 2, ms, &lost) == 1);  /* caught up: 1 */
		CHECK(oncpu_weight(&w, 10 * ms + ms / 2, ms, &lost) == 3);  /* 3.5: 3 ... */
		CHECK(w.counted_cpu_ns == 10 * ms);              /* ... the half kept */
		CHECK(oncpu_weight(&w, 10 * ms + 41 * ms, ms, &lost) == ONCPU_WEIGHT_MAX);
		/* 41 ticks since 10 ms: 16 carried, the rest lost */
		CHECK(lost == 41 * ms - ONCPU_WEIGHT_MAX * ms);
		CHECK(w.counted_cpu_ns == 51 * ms);
		/* counted at every tick with no CPU time: ahead by at most 16 */
		for (int i = 0; i < 40; i++)
			CHECK(oncpu_weight(&w, 51 * ms, ms, &lost) == 1);
		CHECK(w.counted_cpu_ns == 51 * ms + ONCPU_WEIGHT_MAX * ms);
		CHECK(oncpu_weight(&w, 3 * ms, ms, &lost) == 1);  /* a new thread's count */
		CHECK(w.counted_cpu_ns == 3 * ms);
	}
	/* no architecture table: only the counts */
	s.stop_sched = (struct task_schedstat){ .slices = 40 };
	CHECK(oncpu_verdict(NULL, &s, &before, false, tick, 0) == -1);
}

/* aarch64: pr_reg does not say whether the stop found a system call (the
 * kernel forgot its number), the code at the pc does: read here from this
 * process, whose "code" is a buffer. */
static void
test_oncpu_rule_code(void)
{
	const struct arch *a = &arch_aarch64;
	static const unsigned char code[] = {
		0x1f, 0x20, 0x03, 0xd5,   /* nop */
		0x1f, 0x20, 0x03, 0xd5,   /* nop */
		0x01, 0x00, 0x00, 0xd4,   /* svc #0 */
		0x1f, 0x20, 0x03, 0xd5,   /* nop */
	};
	const uint64_t tick = 10000000u;
	struct stack_snapshot s;
	memset(&s, 0, sizeof(s));
	s.tid = getpid();
	s.regs_len = a->pr_reg_size;
	struct task_schedstat before = { .cpu_ns = 500000, .wait_ns = 1000, .slices = 40,
					 .read_ns = tick + 1000 };
	s.stop_sched = (struct task_schedstat){ .cpu_ns = 520000, .wait_ns = 1000 + 20000,
						.slices = 41, .read_ns = tick + 30000 };
	uint64_t pc, x0;

	/* in user code, scheduled in once since the tick took its CPU:
	 * counts */
	pc = (uint64_t)(uintptr_t)&code[4];
	x0 = 7;
	memcpy(s.regs + (size_t)a->pr_index[a->reg_ip] * 8, &pc, 8);
	memcpy(s.regs, &x0, 8);
	CHECK(!oncpu_cut_syscall(a, &s));
	CHECK(oncpu_verdict(a, &s, &before, 1, tick, 0) == -1);
	/* back on the svc: a blocking call to be restarted, cut short */
	pc = (uint64_t)(uintptr_t)&code[8];
	memcpy(s.regs + (size_t)a->pr_index[a->reg_ip] * 8, &pc, 8);
	CHECK(oncpu_cut_syscall(a, &s));
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_ASLEEP);
	/* after it, returned: woken from its sleep, waiting in the kernel */
	pc = (uint64_t)(uintptr_t)&code[12];
	memcpy(s.regs + (size_t)a->pr_index[a->reg_ip] * 8, &pc, 8);
	CHECK(!oncpu_cut_syscall(a, &s));
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_WAITING);
	/* ... or cut short: -EINTR */
	x0 = (uint64_t)-EINTR;
	memcpy(s.regs, &x0, 8);
	CHECK(oncpu_cut_syscall(a, &s));
	/* code that cannot be read: not in user code for all we know */
	pc = 8;
	memcpy(s.regs + (size_t)a->pr_index[a->reg_ip] * 8, &pc, 8);
	CHECK(!oncpu_cut_syscall(a, &s));
	CHECK(oncpu_verdict(a, &s, &before, false, tick, 0) == ONCPU_DROP_WAITING);
}

/* ---- what a profile lost ------------------------------------------------- */

static void
test_profile_lost(void)
{
	/* Issue 36: 120,000 thread-samples put off, 119,992 of them lost, 6
	 * kept: exit 1 (profiler_stats_mostly_lost), not 0. */
	struct profiler_stats s;
	memset(&s, 0, sizeof(s));
	s.samples = 6;
	s.deferred = 120000;
	s.deferred_lost = 119992;
	CHECK(profiler_stats_lost(&s) == 119992);
	CHECK(profiler_stats_mostly_lost(&s));
	/* Dropped by a full queue, and not unwound in time, count too. */
	s.deferred_lost = 0;
	s.queue_dropped = 4;
	s.not_unwound = 3;
	CHECK(profiler_stats_lost(&s) == 7 && profiler_stats_mostly_lost(&s));
	/* Half or less lost is a profile, with its losses said. */
	s.samples = 7;
	CHECK(!profiler_stats_mostly_lost(&s));
	memset(&s, 0, sizeof(s));
	CHECK(!profiler_stats_mostly_lost(&s));
}

int
main(void)
{
	test_task_stat();
	test_thread_table();
	test_thread_rename(true);
	test_thread_rename(false);
	test_pause_hist();
	test_tick_clock();
	test_frame_names();
	test_oncpu_rule();
	test_oncpu_rule_code();
	test_profile_lost();
	return check_exit_status("unit-profiler");
}
