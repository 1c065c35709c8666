/* sampler/oncpu.c - the on-CPU rule (DESIGN.md, "On-CPU and wall-clock"):
 * does a stopped thread-sample count as CPU time?
 *
 * 'R' in /proc at the tick is not enough: it also means runnable and
 * waiting for a CPU, the usual state of a server thread just woken from
 * its sleep on a busy host, and the stop then finds it at the end of its
 * blocking call.  Measured on a sleep 200 us / compute 200 us server
 * (tests/record-oncpu.test, bench/oncpu-busy.sh): with 'R' alone 27-63% of
 * the samples were in compute, the rest in clock_nanosleep; with the
 * registers alone (a cut-short system call) 45-54%, because most of those
 * stops find a call that has already returned and a thread waiting for a
 * CPU; with the scheduled-in count below, 99-100%.
 *
 * What no rule here can mend: a thread running on another CPU, with no
 * holder there (above ONCPU_HOLD_MAX_HZ), takes its stop when the
 * interrupt reaches it, an inter-processor interrupt's time after the look
 * (22 us on a firecracker VM: tests/targets/stoplag).  Its stop shows it
 * that much further on; the first microseconds of a run after a wake-up
 * are never where a stop finds it (measured by the loop counter of
 * sleepwork's compute_heavy: the stops that found a worker running had
 * none in the first 22 us of its turn, those the tick took were even).
 */
#include "config.h"

#include <errno.h>
#include <sys/syscall.h>

#include "ptrace/procfs.h"
#include "ptrace/sample.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"

/* What the stop found of a system call: from pr_reg (x86-64, MIPS), else
 * from the code around the pc (aarch64, arch_code_syscall: one read of two
 * instructions, after the thread runs again; code does not change).
 * 0, or -errno when it cannot be told. */
static int
stop_syscall(const struct arch *a, const struct stack_snapshot *snap, struct arch_syscall *sc)
{
	int r = arch_pr_syscall(a, snap->regs, snap->regs_len, sc);
	if (r != -ENOTSUP || !a->syscall_insn.mask || snap->tid <= 0)
		return r;
	unsigned char code[16];
	size_t n = 2 * a->insn_size;
	uint64_t pc = arch_pr_pc(a, snap->regs, snap->regs_len);
	if (n > sizeof(code) || pc < a->insn_size)
		return -EINVAL;
	if (ptrace_read_memory(snap->tid, pc - a->insn_size, code, n) < 0) {
		/* The pc at the start of its mapping: nothing before it. */
		n = a->insn_size;
		if (ptrace_read_memory(snap->tid, pc, code, n) < 0)
			return -EFAULT;
	}
	return arch_code_syscall(a, snap->regs, snap->regs_len, code, n, sc);
}

/* Did the stop cut a blocking system call short (sc: what it found)? */
static bool
cut_short(const struct arch_syscall *sc)
{
	if (!sc->in_syscall)
		return false;
	switch (sc->ret) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
	case -EINTR:
		return true;
	default:
		/* -ENOSYS: at its entry; else it has returned, or runs. */
		return false;
	}
}

bool
oncpu_cut_syscall(const struct arch *a, const struct stack_snapshot *snap)
{
	struct arch_syscall sc;
	return a && stop_syscall(a, snap, &sc) == 0 && cut_short(&sc);
}

int
oncpu_verdict(const struct arch *a, const struct stack_snapshot *snap,
	      const struct task_schedstat *before, int tick_cpu, uint64_t tick_ns,
	      uint64_t last_stop_cpu_ns)
{
	struct arch_syscall sc;
	bool known = a && stop_syscall(a, snap, &sc) == 0;
	bool cut = known && cut_short(&sc);
	const struct task_schedstat *in = &snap->stop_sched;
	if (before->slices && in->slices) {
		/* On a CPU at the tick: it took the stop there, without being
		 * scheduled in again, and ran from the look to its stop.  A
		 * blocking call the stop found cut short began after the look
		 * and never slept (the pending interrupt ends it at once): the
		 * thread ran then, but not there.  The look came in its run's
		 * last microseconds, its stop an interrupt's time after it
		 * (22-29 us on a firecracker VM: tests/targets/stoplag), when
		 * it had gone on into its next call.  Counted there, the call
		 * stood for the end of every run: 0.07 of the ticks of
		 * sleepwork's workers in clock_nanosleep (turns of 129 us),
		 * where they never run.  Not counted, its CPU time is carried
		 * by its next counted stop (oncpu_weight). */
		if (in->slices == before->slices)
			return cut ? ONCPU_DROP_ASLEEP : -1;
		/* Scheduled in again and cut short: it slept, and the stop
		 * woke it. */
		if (cut)
			return ONCPU_DROP_ASLEEP;
		/* Scheduled in once: it was waiting.  It still counts when
		 * the tick took its CPU (the tracer runs real-time), and its
		 * wait began as the tick began.  On one CPU that is every
		 * stop, late ones too (an emulated CPU, where nearly every
		 * stop comes after the tick's deadline for it):
		 * tests/vm-aarch64.test counts about one busy thread a tick
		 * there, and tests/record-oncpu.test pins the target and
		 * stackspy to one CPU.  Those preempted earlier are not
		 * counted where they wait: a preemption falls late in a
		 * thread's turn and would bias the profile toward it
		 * (measured: 0.55 instead of 0.75 for the first of two
		 * functions run 3:1). */
		uint64_t since = tick_ns > ONCPU_TOOK_CPU_NS ? tick_ns - ONCPU_TOOK_CPU_NS : 0;
		bool took = in->slices == before->slices + 1 && in->read_ns > since &&
			    in->wait_ns - before->wait_ns <= in->read_ns - since;
		if (!took || !known)
			return ONCPU_DROP_WAITING;
		/* Whether the tracer or a holder took its CPU: another
		 * thread may have, just before the tick (a sibling's wake-up
		 * on a busy CPU), and one the tick then found waiting is not
		 * what the CPU ran at the tick.  Counted, it was the
		 * ONCPU_TOOK_CPU_NS window's: 8 busy threads on one CPU,
		 * beside a loaded tracer whose reads came late, stood for
		 * 1.48 of their CPU time (tests/record-oversub.test beside
		 * two other tests).  Inside a system call it may also have
		 * been woken from its sleep as the tick began (its wait in
		 * the run queue began then too) and not have run since (a
		 * reader of /dev/zero that shares a CPU with the tracer lost
		 * every sample; a sleeper woken with the tracer, its timer
		 * due within the same slack, counted in clock_nanosleep:
		 * tests/record-syscall.test).  Where that cannot be told (no
		 * /proc/TID/sched: a kernel without CONFIG_SCHED_DEBUG), the
		 * window alone decides in user code. */
		if (tick_cpu > 0 || (tick_cpu < 0 && !sc.in_syscall))
			return -1;
		return ONCPU_DROP_WAITING;
	}
	if (cut)
		return ONCPU_DROP_ASLEEP;
	/* No scheduled-in count (schedstat off): it must at least have run
	 * since its last stop, by more than that stop cost it. */
	if (in->cpu_ns && last_stop_cpu_ns && in->cpu_ns - last_stop_cpu_ns <= ONCPU_CPU_SLACK_NS)
		return ONCPU_DROP_IDLE;
	return -1;
}

bool
oncpu_cpu_claim(struct profiler *p, const struct sample_pick *pick)
{
	if (pick->cpu < 0 || pick->cpu >= ONCPU_CPU_SLOTS)
		return true;
	/* One thread runs on a CPU at a time.  The looks at a tick's
	 * threads take a while (a thread's stop lets another run where it
	 * ran, and that one is seen running when its turn comes): with 16
	 * busy threads on 2 CPUs the samples stood for 1.4-1.9x their CPU
	 * time.  The first counted is the one looked at nearest the tick. */
	unsigned *slot = p->tr.cpu_counted[pick->cpu];
	unsigned tick = pick->tick_no + 1;
	if (slot[0] == tick || slot[1] == tick)
		return false;
	if (slot[0] > slot[1])
		slot[1] = tick;
	else
		slot[0] = tick;
	return true;
}

/* A counted stop stands for its thread's CPU time since the CPU time its
 * earlier counted stops stood for, in whole ticks: at least its own tick,
 * at most ONCPU_WEIGHT_MAX.  A server thread runs in short turns between
 * blocking calls; the tick finds it running at the rate it runs, but the
 * tracer's look comes microseconds after the tick, and a turn that ended
 * in between is lost (nginx under ab: 0.48-0.65 of its CPU time kept,
 * issue 33; the tracer's own wake-up preempts the client and the workers
 * run dry).  The stops that are counted found the thread running, where
 * it runs, so they carry the CPU time the others lost.  A thread counted
 * at every tick it ran owes nothing beyond its own tick (a compute-bound
 * one: weight 1).  One counted more often than it ran (its CPU time runs
 * behind its counted ticks, up to ONCPU_WEIGHT_MAX of them) is carried
 * no more until its CPU time catches up: with more busy threads than CPUs
 * (oncpu_cpu_claim lets through a little more than one a CPU), forgetting
 * that made 1.25x of the CPU time where 1.05x was counted. */
uint32_t
oncpu_weight(struct thread_state *ts, uint64_t cpu_ns, uint64_t period_ns, uint64_t *lost_ns)
{
	if (!ts->counted_set || !period_ns || cpu_ns + (uint64_t)ONCPU_WEIGHT_MAX * period_ns <
						  ts->counted_cpu_ns) {
		ts->counted_cpu_ns = cpu_ns;
		ts->counted_set = true;
		return 1;
	}
	uint64_t owed = cpu_ns > ts->counted_cpu_ns ? (cpu_ns - ts->counted_cpu_ns) / period_ns : 0;
	uint32_t w = owed < 1 ? 1 : owed > ONCPU_WEIGHT_MAX ? ONCPU_WEIGHT_MAX : (uint32_t)owed;
	if (owed > ONCPU_WEIGHT_MAX) {
		*lost_ns += cpu_ns - ts->counted_cpu_ns - (uint64_t)w * period_ns;
		ts->counted_cpu_ns = cpu_ns;
		return w;
	}
	ts->counted_cpu_ns += (uint64_t)w * period_ns;
	if (ts->counted_cpu_ns > cpu_ns + (uint64_t)ONCPU_WEIGHT_MAX * period_ns)
		ts->counted_cpu_ns = cpu_ns + (uint64_t)ONCPU_WEIGHT_MAX * period_ns;
	return w;
}

/* The host's system calls by number (sampler/syscall-names.h is made from
 * the C library's headers at build time). */
static const struct {
	long nr;
	const char *name;
} syscall_names[] = {
#include "sampler/syscall-names.h"
};

const char *
oncpu_syscall_name(long nr)
{
	for (size_t i = 0; i < sizeof(syscall_names) / sizeof(syscall_names[0]); i++)
		if (syscall_names[i].nr == nr)
			return syscall_names[i].name;
	return NULL;
}

bool
oncpu_stop_syscall(const struct arch *a, const struct stack_snapshot *snap, long *nr)
{
	struct arch_syscall sc;
	if (!a || stop_syscall(a, snap, &sc) != 0 || !sc.in_syscall || cut_short(&sc) || sc.nr < 0)
		return false;
	*nr = (long)sc.nr;
	return true;
}
