/* ptrace/sample.c - one sample: the thread is stopped only for its
 * registers and one copy of its stack (DESIGN.md, "The data path of one
 * sample").  Everything else happens after PTRACE_CONT. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/arch.h"
#include "ptrace/ptrace-internal.h"

#define PAGE 4096u
#define MAX_IOV 64

uint64_t
regs_stack_pointer(const unsigned char *regs, size_t len)
{
	/* The layout of NT_PRSTATUS is the arch/ table's; on a host without
	 * one, no sp, so no stack copy (unwinding says why). */
	const struct arch *a = arch_host();
	return a ? arch_pr_sp(a, regs, len) : 0;
}

/* While a thread is stopped for us, we are on its critical path: on a busy
 * machine the scheduler could leave us waiting on a run queue for
 * milliseconds after the thread trapped (measured: mean pause 1.3 ms with
 * two CPU-bound threads on two cores).  So we run at the lowest real-time
 * priority between PTRACE_INTERRUPT and PTRACE_CONT, and only then: the
 * unwinding afterwards competes with the target as usual.  Without
 * CAP_SYS_NICE this quietly does nothing. */
static bool boost_unavailable;
static int normal_policy = -1;
static struct sched_param normal_param;

static void
boost(bool on)
{
	if (boost_unavailable)
		return;
	if (normal_policy < 0) {
		normal_policy = sched_getscheduler(0);
		if (normal_policy < 0 || sched_getparam(0, &normal_param) < 0 ||
		    normal_policy == SCHED_FIFO || normal_policy == SCHED_RR) {
			/* Already real-time (or unknown): leave it alone. */
			boost_unavailable = true;
			return;
		}
	}
	struct sched_param rt = { .sched_priority = 1 };
	int r = on ? sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt)
		   : sched_setscheduler(0, normal_policy, &normal_param);
	if (r < 0 && on)
		boost_unavailable = true;
}

void
stack_snapshot_release(struct stack_snapshot *s)
{
	free(s->stack);
	s->stack = NULL;
	s->stack_cap = s->stack_len = 0;
}

/* Copy [start, start+len) in one process_vm_readv.  The remote side is split
 * at page boundaries so that an unmapped page ends the copy there instead of
 * failing it whole.  Returns bytes copied. */
static size_t
copy_stack(pid_t tid, uint64_t start, size_t len, unsigned char *dst)
{
	struct iovec local = { .iov_base = dst, .iov_len = len };
	struct iovec remote[MAX_IOV];
	size_t n = 0;
	uint64_t a = start, end = start + len;
	while (a < end && n < MAX_IOV) {
		uint64_t next = (a & ~(uint64_t)(PAGE - 1)) + PAGE;
		if (next > end)
			next = end;
		remote[n].iov_base = (void *)(uintptr_t)a;
		remote[n].iov_len = (size_t)(next - a);
		n++;
		a = next;
	}
	local.iov_len = (size_t)(a - start);
	ssize_t r = process_vm_readv(tid, &local, 1, remote, n, 0);
	return r < 0 ? 0 : (size_t)r;
}

int
ptrace_sample(struct ptrace_target *t, struct tracee *th, size_t window,
	      stack_end_fn stack_end, void *ctx, int timeout_ms,
	      unsigned flags, struct stack_snapshot *out)
{
	out->tid = th->tid;
	out->regs_len = 0;
	out->stack_len = 0;
	out->pause_ns = 0;
	out->group_stopped = false;
	if (th->state == TRACEE_GONE)
		return -ESRCH;
	if (window > (size_t)MAX_IOV * PAGE - PAGE)
		window = (size_t)MAX_IOV * PAGE - PAGE;
	/* Allocate before stopping the thread, not while it waits on us. */
	if (out->stack_cap < window) {
		unsigned char *nb = realloc(out->stack, window);
		if (!nb)
			return -ENOMEM;
		out->stack = nb;
		out->stack_cap = window;
	}

	boost(true);
	uint64_t t0 = monotonic_ns();
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0L, 0L) < 0) {
		int e = errno;
		boost(false);
		if (e == ESRCH)
			th->state = TRACEE_GONE;
		return -e;
	}
	int st;
	for (;;) {
		int r = tracee_wait(th->tid, &st, timeout_ms);
		if (r == 0) {
			boost(false);
			return -ETIMEDOUT;  /* its stop is reaped later by poll/detach */
		}
		if (r < 0) {
			boost(false);
			th->state = TRACEE_GONE;
			return -ESRCH;
		}
		if (!WIFSTOPPED(st)) {
			boost(false);
			th->state = TRACEE_GONE;
			if (th->tid == t->pid) {
				t->leader_exited = true;
				t->leader_status = st;
			}
			return -ESRCH;
		}
		if ((st >> 16) != 0)
			break;
		/* A signal arrived first: hand it on and wait for our stop. */
		tracee_resume(th, st);
	}

	if ((st >> 16) == PTRACE_EVENT_EXEC)
		t->exec_seen = true;
	struct iovec iov = { .iov_base = out->regs, .iov_len = sizeof(out->regs) };
	int err = 0;
	if (ptrace(PTRACE_GETREGSET, th->tid, (void *)NT_PRSTATUS, &iov) < 0) {
		err = -errno;
	} else {
		out->regs_len = iov.iov_len;
		uint64_t sp = regs_stack_pointer(out->regs, out->regs_len);
		uint64_t end = stack_end ? stack_end(ctx, sp) : 0;
		size_t len = window;
		if (end > sp && end - sp < len)
			len = (size_t)(end - sp);
		out->stack_start = sp;
		out->stack_len = sp ? copy_stack(th->tid, sp, len, out->stack) : 0;
	}
	out->group_stopped = ((st >> 16) == PTRACE_EVENT_STOP) && WSTOPSIG(st) != SIGTRAP;
	int r;
	if (flags & PTRACE_SAMPLE_DETACH) {
		/* From a group-stop the kernel puts it back into the stop. */
		r = ptrace(PTRACE_DETACH, th->tid, 0L, 0L) < 0 ? -errno : 0;
		th->state = TRACEE_GONE;
	} else {
		r = tracee_resume(th, st);
	}
	out->pause_ns = monotonic_ns() - t0;
	boost(false);
	if (err)
		return err;
	return r == -ESRCH ? 0 : r;
}
