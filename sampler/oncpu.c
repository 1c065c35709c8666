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
 */
#include "config.h"

#include <errno.h>

#include "ptrace/sample.h"
#include "sampler/profiler-internal.h"
#include "sampler/profiler.h"

/* The kernel's restart codes (include/linux/errno.h, not in the uapi): a
 * system call that was asleep returns one of them, or -EINTR, when a stop
 * or a signal wakes it. */
#define ERESTARTSYS           512
#define ERESTARTNOINTR        513
#define ERESTARTNOHAND        514
#define ERESTART_RESTARTBLOCK 516

bool
oncpu_cut_syscall(const struct arch *a, const struct stack_snapshot *snap)
{
	struct arch_syscall sc;
	if (!a || arch_pr_syscall(a, snap->regs, snap->regs_len, &sc) < 0 || !sc.in_syscall)
		return false;
	switch (sc.ret) {
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

int
oncpu_verdict(const struct arch *a, const struct stack_snapshot *snap,
	      const struct task_schedstat *before, uint64_t tick_ns,
	      uint64_t last_stop_cpu_ns)
{
	if (oncpu_cut_syscall(a, snap))
		return ONCPU_DROP_ASLEEP;
	const struct task_schedstat *in = &snap->stop_sched;
	if (before->slices && in->slices) {
		/* On a CPU at the tick: it took the stop there, without being
		 * scheduled in again. */
		if (in->slices == before->slices)
			return -1;
		/* Scheduled in once: it was waiting.  It still counts when it
		 * waits in user code and its wait began as the tick began:
		 * the tick took its CPU (the tracer runs real-time).  Those
		 * preempted earlier are not counted where they wait: a
		 * preemption falls late in a thread's turn and would bias
		 * the profile toward it (measured: 0.55 instead of 0.75 for
		 * the first of two functions run 3:1). */
		uint64_t since = tick_ns > ONCPU_TOOK_CPU_NS ? tick_ns - ONCPU_TOOK_CPU_NS : 0;
		struct arch_syscall sc;
		bool in_user = a && arch_pr_syscall(a, snap->regs, snap->regs_len, &sc) == 0 &&
			       !sc.in_syscall;
		if (in->slices == before->slices + 1 && in_user && in->read_ns > since &&
		    in->wait_ns - before->wait_ns <= in->read_ns - since)
			return -1;
		return ONCPU_DROP_WAITING;
	}
	/* No scheduled-in count (schedstat off): it must at least have run
	 * since its last stop, by more than that stop cost it. */
	if (in->cpu_ns && last_stop_cpu_ns && in->cpu_ns - last_stop_cpu_ns <= ONCPU_CPU_SLACK_NS)
		return ONCPU_DROP_IDLE;
	return -1;
}
