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
#include "ptrace/clock.h"
#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"
#include "ptrace/sample.h"

#define PAGE 4096u
#define MAX_IOV 64

uint64_t
ptrace_regs_stack_pointer(const unsigned char *regs, size_t len)
{
	/* The layout of NT_PRSTATUS is the arch/ table's; on a host without
	 * one, no sp, so no stack copy (unwinding says why). */
	const struct arch *a = arch_host();
	return a ? arch_pr_sp(a, regs, len) : 0;
}

uint64_t
ptrace_regs_pc(const unsigned char *regs, size_t len)
{
	const struct arch *a = arch_host();
	return a ? arch_pr_pc(a, regs, len) : 0;
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

static bool boost_held;     /* ptrace_hold_realtime(true) */
static bool boost_on;
static int boost_prio = 1;

static void
boost(bool on)
{
	if (boost_unavailable || (boost_held && !on) || on == boost_on)
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
	struct sched_param rt = { .sched_priority = boost_prio };
	int r = on ? sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt)
		   : sched_setscheduler(0, normal_policy, &normal_param);
	if (r < 0 && on)
		boost_unavailable = true;
	else if (r == 0)
		boost_on = on;
}

void
ptrace_realtime_priority(int prio)
{
	if (prio == boost_prio)
		return;
	boost_prio = prio;
	if (boost_on) {
		struct sched_param rt = { .sched_priority = prio };
		sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &rt);
	}
}

void
ptrace_hold_realtime(bool hold)
{
	if (hold) {
		boost(true);
		boost_held = true;
	} else {
		boost_held = false;
		boost(false);
	}
}

bool
ptrace_realtime_on(void)
{
	return boost_on;
}

void
ptrace_snapshot_release(struct stack_snapshot *s)
{
	free(s->stack);
	s->stack = NULL;
	s->stack_cap = s->stack_len = 0;
	free(s->interp);
	s->interp = NULL;
	s->interp_cap = s->interp_len = 0;
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

/* The code at the pc of a sample taken (out->code), read once its thread
 * runs again, never inside the stop (registers and one stack copy): the
 * microseconds since are far too few for a library to be unloaded and
 * another loaded at its address, the unwinder's milliseconds are not
 * (unwind_walk).  Up to the pc's page end. */
static void
read_code(struct stack_snapshot *out)
{
	uint64_t pc = ptrace_regs_pc(out->regs, out->regs_len);
	size_t n = pc ? PAGE - (size_t)(pc & (PAGE - 1)) : 0;
	if (n > sizeof(out->code))
		n = sizeof(out->code);
	out->code_len = n && ptrace_read_memory(out->tid, pc, out->code, n) == 0 ? n : 0;
}

/* Pending threads are looked at at least this often: SIGCHLDs coalesce. */
#define SCAN_NS NS_PER_MS

/* The window of a stack copy, clamped to what one process_vm_readv of
 * page-split pieces can hold. */
static size_t
clamp_window(size_t window)
{
	return window > (size_t)MAX_IOV * PAGE - PAGE ? (size_t)MAX_IOV * PAGE - PAGE : window;
}

/* out's interp buffer big enough for cap bytes (sample_opts.interp_window),
 * allocated as the stack's is.  0 or -ENOMEM. */
static int
reserve_interp(struct stack_snapshot *out, size_t cap)
{
	out->interp_len = 0;
	if (out->interp_cap >= cap)
		return 0;
	unsigned char *nb = realloc(out->interp, cap);
	if (!nb)
		return -ENOMEM;
	out->interp = nb;
	out->interp_cap = cap;
	return 0;
}

/* out's buffer big enough for window bytes: allocated before its thread
 * is stopped, never while it waits on us.  0 or -ENOMEM. */
static int
reserve(struct stack_snapshot *out, size_t window)
{
	if (out->stack_cap >= window)
		return 0;
	unsigned char *nb = realloc(out->stack, window);
	if (!nb)
		return -ENOMEM;
	out->stack = nb;
	out->stack_cap = window;
	return 0;
}

/* Every buffer big enough (window: clamped), and the results cleared,
 * before any thread of the batch is stopped. */
static int
prepare(struct tracee **threads, size_t n, size_t window, size_t interp,
	struct stack_snapshot *outs, int *results)
{
	for (size_t i = 0; i < n; i++) {
		struct stack_snapshot *out = &outs[i];
		if (threads[i]->taken)
			continue;  /* ptrace_sample_ready has its stop */
		out->tid = threads[i]->tid;
		out->regs_len = 0;
		out->stack_len = out->code_len = 0;
		out->pause_ns = 0;
		out->group_stopped = false;
		memset(&out->stop_sched, 0, sizeof(out->stop_sched));
		results[i] = 0;
		if (reserve(out, window) < 0 || reserve_interp(out, interp) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* The arch/ table's pointer-authentication regset (aarch64's
 * NT_ARM_PAC_MASK): its insn_mask, the bits of a return address that are
 * its signature.  The kernel's mask is the machine's, not the process's
 * (GENMASK(54, vabits) in arch/arm64), so it is read once, in the first
 * stop (tid stopped), and kept; 0 where there is none (another
 * architecture, no pointer authentication: EINVAL). */
static uint64_t
pac_mask(pid_t tid)
{
	/* One reader (the state's owner while READING); an int, not the
	 * 64-bit mask, is what is atomic: 32-bit MIPS has no 64-bit atomics
	 * without libatomic. */
	enum { UNREAD, NONE, KNOWN, READING };
	static int state;
	static uint64_t known;
	int st = UNREAD;
	if (!__atomic_compare_exchange_n(&state, &st, READING, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_ACQUIRE))
		return st == KNOWN ? known : 0;
	const struct arch *a = arch_host();
	uint64_t masks[2] = { 0, 0 };   /* data_mask, insn_mask */
	struct iovec iov = { .iov_base = masks, .iov_len = sizeof(masks) };
	if (a && a->pac_mask_note &&
	    ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)a->pac_mask_note, &iov) < 0 &&
	    errno == ESRCH) {
		/* Gone meanwhile: the next stop asks. */
		__atomic_store_n(&state, UNREAD, __ATOMIC_RELEASE);
		return 0;
	}
	known = iov.iov_len == sizeof(masks) ? masks[1] : 0;
	__atomic_store_n(&state, known ? KNOWN : NONE, __ATOMIC_RELEASE);
	return known;
}

/* The thread is in the event-stop our PTRACE_INTERRUPT asked for (status
 * st): registers, one stack copy, and let it go.  Returns the sample's
 * result. */
static int
take_sample(struct ptrace_target *t, struct tracee *th, int st, const struct sample_opts *o,
	    void *ctx, size_t window, uint64_t t0, struct stack_snapshot *out)
{
	ptrace_tracee_event(t, th->tid, st);
	th->late = false;
	struct iovec iov = { .iov_base = out->regs, .iov_len = sizeof(out->regs) };
	int err = 0;
	if (ptrace(PTRACE_GETREGSET, th->tid, (void *)NT_PRSTATUS, &iov) < 0) {
		err = -errno;
	} else {
		out->regs_len = iov.iov_len;
		out->pac_mask = pac_mask(th->tid);
		uint64_t sp = ptrace_regs_stack_pointer(out->regs, out->regs_len);
		uint64_t end = o->stack_end ? o->stack_end(ctx, sp) : 0;
		size_t len = window;
		if (end > sp && end - sp < len)
			len = (size_t)(end - sp);
		out->stack_start = sp;
		out->stack_len = sp ? copy_stack(th->tid, sp, len, out->stack) : 0;
		out->interp_len = 0;
		if (o->interp_read && out->interp_cap)
			out->interp_len = o->interp_read(ctx, out, out->interp,
							 out->interp_cap);
	}
	if ((o->flags & SAMPLE_SCHEDSTAT) && out->schedstat_fd >= 0)
		ptrace_read_schedstat(out->schedstat_fd, &out->stop_sched);
	out->group_stopped = trace_stop_of(st) == TRACE_GROUP_STOP;
	int r;
	if (o->flags & SAMPLE_HOLD) {
		/* dump --consistent: released by ptrace_target_detach. */
		th->state = TRACEE_HELD;
		r = 0;
	} else if (o->flags & SAMPLE_DETACH) {
		/* From a group-stop the kernel puts it back into the stop. */
		r = ptrace(PTRACE_DETACH, th->tid, 0L, 0L) < 0 ? -errno : 0;
		th->state = TRACEE_GONE;
		th->released = r == 0;
	} else {
		r = ptrace_tracee_resume(th, st);
	}
	out->pause_ns = ptrace_clock_monotonic_ns() - t0;
	if (err)
		return err;
	return r == -ESRCH ? 0 : r;
}

/* One wait status of thread i.  Returns true when the thread is done with
 * (sampled, or gone); a signal-delivery-stop is handed on and the thread
 * stays pending: our interrupt stops it next. */
static bool
collect(struct ptrace_target *t, struct tracee *th, int st, const struct sample_opts *o,
	void *ctx, size_t window, uint64_t t0, struct stack_snapshot *out, int *result)
{
	if (!WIFSTOPPED(st)) {
		th->state = TRACEE_GONE;
		if (th->tid == t->pid) {
			t->leader_exited = true;
			t->leader_status = st;
		}
		*result = -ESRCH;
		return true;
	}
	if (trace_stop_of(st) == TRACE_SIGNAL) {
		ptrace_tracee_resume(th, st);
		return false;
	}
	*result = take_sample(t, th, st, o, ctx, window, t0, out);
	return true;
}

/* Has thread i a status for us?  Returns true when it is done with. */
static bool
check(struct ptrace_target *t, struct tracee *th, const struct sample_opts *o,
      void *ctx, size_t window, uint64_t t0, struct stack_snapshot *out, int *result)
{
	for (;;) {
		int st;
		pid_t r = waitpid(th->tid, &st, WNOHANG | __WALL);
		if (r == 0)
			return false;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			th->state = TRACEE_GONE;
			*result = -ESRCH;
			return true;
		}
		if (collect(t, th, st, o, ctx, window, t0, out, result))
			return true;
	}
}

/* SAMPLE_DSTATE: thread th of t, interrupted at since, has not stopped by
 * *check_at.  Is it in uninterruptible sleep (D)?  If not, the next look
 * is at twice its present age. */
static bool
in_dstate(struct ptrace_target *t, struct tracee *th, uint64_t since, uint64_t *check_at)
{
	char state = 0;
	*check_at = since + 2 * (*check_at - since);
	return ptrace_thread_info(t->pid, th->tid, &state, NULL, 0) == 0 && state == 'D';
}

/* When something is due for the pending threads (the oldest first): the
 * oldest one's deadline, or a look at a slow one's state (SAMPLE_DSTATE). */
static uint64_t
due_by(const size_t *pending, size_t npending, const uint64_t *since,
       const uint64_t *check_at, uint64_t timeout_ns, uint64_t check_ns)
{
	uint64_t due = UINT64_MAX;
	if (timeout_ns != UINT64_MAX)
		due = since[pending[0]] + timeout_ns;
	for (size_t k = 0; check_ns && k < npending; k++)
		if (check_at[pending[k]] < due)
			due = check_at[pending[k]];
	return due;
}

/* Nothing stopped: the stop of an early interrupt (ptrace_interrupt_early)
 * is let go by ptrace_target_poll when it comes; one ptrace_sample_ready
 * took is dropped with the rest. */
static void
forget_early(struct tracee **threads, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		threads[i]->interrupted_ns = 0;
		threads[i]->taken = false;
	}
}

/* One call of sample_batch: its arguments and the state of its loop,
 * shared by the steps below.  On the caller's stack: a profiler tick
 * samples through here while the threads wait, no allocation for small
 * batches. */
struct batch {
	struct ptrace_target *t;
	struct ptrace_target *const *ts;
	void *const *ctxs;
	struct tracee **threads;
	size_t n;
	const struct sample_opts *o;
	struct stack_snapshot *outs;
	int *results;
	size_t window;
	/* since[i]: when thread i was interrupted; pending: the threads
	 * interrupted and not yet stopped, oldest first. */
	uint64_t *since;
	/* SAMPLE_DSTATE: check_at[i], when to read thread i's state. */
	uint64_t *check_at;
	size_t *pending;
	uint64_t check_ns, timeout_ns, stagger_ns;
	size_t npending, next;
	bool fresh;       /* pending[npending - 1] was interrupted less than
			     stagger_ns ago */
	bool scan;        /* look at every pending thread, not only the
			     fresh one */
	bool boosted;
	uint64_t last_scan;
	/* Without a stagger every thread is interrupted at once, and a
	 * thread on a CPU takes some microseconds to stop: looking before
	 * the SIGCHLD comes finds nothing (measured: two waitpid calls out
	 * of three per stop returned 0).  So the first look is after the
	 * sleep; a stop that came before it has its SIGCHLD pending, and the
	 * sleep ends at once.  A thread already stopped whose SIGCHLD was
	 * read before (coalesced with another's) sends none: that first
	 * sleep lasts at most SCAN_NS. */
	bool sleep_first;
	uint64_t look_by;
	/* SAMPLE_INORDER: no SIGCHLD at all; the oldest pending thread is
	 * waited for with a blocking waitpid, the others when it is done. */
	bool inorder;
	/* o->ahead, or 0 once a thread was slow to stop (all at once). */
	size_t ahead;
};

/* Thread i is of target ts ? ts[i] : t (ptrace_sample_threads: several
 * targets), its stack_end context ctxs ? ctxs[i] : o->ctx. */
static struct ptrace_target *
target_of(const struct batch *b, size_t i)
{
	return b->ts ? b->ts[i] : b->t;
}

static void *
ctx_of(const struct batch *b, size_t i)
{
	return b->ctxs ? b->ctxs[i] : b->o->ctx;
}

/* Interrupt the next thread once the last one stopped or is slow: with
 * a stagger one at a time (the fresh one), without every one now. */
static void
interrupt_next(struct batch *b, size_t upto)
{
	while (!b->fresh && b->next < b->n && (!upto || b->npending < upto)) {
		size_t i = b->next++;
		struct tracee *th = b->threads[i];
		if (th->taken) {
			th->taken = false;  /* its snapshot and result stand */
			continue;
		}
		if (th->state == TRACEE_GONE) {
			/* A thread that could not be attached (another
			 * tracer) is an error, not a thread that left. */
			b->results[i] = th->attach_error ? th->attach_error : -ESRCH;
			continue;
		}
		if (!b->boosted) {
			boost(true);
			b->boosted = true;
		}
		uint64_t early = th->interrupted_ns;
		th->interrupted_ns = 0;
		b->since[i] = early ? early : ptrace_clock_monotonic_ns();
		b->check_at[i] = b->since[i] + b->check_ns;
		if (!early && ptrace(PTRACE_INTERRUPT, th->tid, 0L, 0L) < 0) {
			b->results[i] = -errno;
			if (errno == ESRCH)
				th->state = TRACEE_GONE;
			continue;
		}
		b->pending[b->npending++] = i;
		if (b->stagger_ns == 0)
			b->sleep_first = !b->inorder;
		else
			b->fresh = true;
	}
}

/* SAMPLE_INORDER: a blocking wait for the oldest pending thread, until
 * something is due.  Returns true when it is done with (its stop, or it
 * is gone), or a signal stop was handed on: the loop goes round again.
 * False when something is due: every pending thread is to be looked at,
 * and those past their deadline or in D given up on. */
static bool
wait_oldest(struct batch *b)
{
	size_t i = b->pending[0];
	int st;
	uint64_t due = due_by(b->pending, b->npending, b->since, b->check_at, b->timeout_ns,
			      b->check_ns);
	uint64_t slow = b->ahead ? b->since[i] + SAMPLE_AHEAD_SLOW_US * NS_PER_US : UINT64_MAX;
	int w = ptrace_tracee_wait_until(b->threads[i]->tid, &st, slow < due ? slow : due);
	if (w == 0 && slow < due) {
		/* Slow to stop: the others are not kept waiting behind it. */
		b->ahead = 0;
		return true;
	}
	if (w == 0)
		return false;
	/* Our stop: the next thread is interrupted before it is taken. */
	if (b->ahead && WIFSTOPPED(st) && trace_stop_of(st) != TRACE_SIGNAL)
		interrupt_next(b, b->ahead + 1);
	/* Its stop, or it is gone: the next one. */
	bool done = w < 0;
	if (done) {
		b->threads[i]->state = TRACEE_GONE;
		b->results[i] = -ESRCH;
	} else {
		done = collect(target_of(b, i), b->threads[i], st, b->o, ctx_of(b, i), b->window,
			       b->since[i], &b->outs[i], &b->results[i]);
	}
	if (done)
		memmove(b->pending, b->pending + 1, --b->npending * sizeof(*b->pending));
	return true;
}

/* Collect the stops that are there: the fresh thread always (it is the
 * likeliest), the slow ones when a SIGCHLD came from another thread, and
 * every millisecond anyway because SIGCHLDs coalesce. */
static void
collect_stops(struct batch *b)
{
	uint64_t now = ptrace_clock_monotonic_ns();
	if (!b->fresh || now - b->last_scan >= SCAN_NS)
		b->scan = true;
	size_t kept = 0;
	for (size_t k = 0; k < b->npending; k++) {
		size_t i = b->pending[k];
		bool is_fresh = b->fresh && k == b->npending - 1;
		if ((is_fresh || b->scan) &&
		    check(target_of(b, i), b->threads[i], b->o, ctx_of(b, i), b->window,
			  b->since[i], &b->outs[i], &b->results[i])) {
			if (is_fresh)
				b->fresh = false;
			continue;
		}
		b->pending[kept++] = i;
	}
	b->npending = kept;
	if (b->scan) {
		b->scan = false;
		b->last_scan = now;
	}
}

/* Give up on threads past their deadline (their late stop is handled by
 * ptrace_target_poll or the detach), and stop waiting for a slow fresh
 * one. */
static void
give_up_late(struct batch *b)
{
	const struct sample_opts *o = b->o;
	uint64_t now = ptrace_clock_monotonic_ns();
	size_t kept = 0;
	for (size_t k = 0; k < b->npending; k++) {
		size_t i = b->pending[k];
		struct tracee *th = b->threads[i];
		/* Past its deadline, or in D: given up.  It keeps our
		 * interrupt pending and traps when it stops; with
		 * SAMPLE_LATE that trap is its sample (ptrace_target_poll
		 * or the detach), else a thread in D is let go then
		 * (lingering, as after a detach that gave up on it). */
		bool late = now - b->since[i] >= b->timeout_ns;
		bool dstate = !late && b->check_ns && now >= b->check_at[i] &&
			      in_dstate(target_of(b, i), th, b->since[i], &b->check_at[i]);
		if (late || dstate) {
			if (o->flags & SAMPLE_LATE) {
				b->results[i] = -ETIMEDOUT;
				th->late = true;
			} else if (dstate) {
				b->results[i] = -EAGAIN;
				th->state = TRACEE_GONE;
				ptrace_linger_add(th->tid);
			} else {
				b->results[i] = -ETIMEDOUT;
			}
			if (b->fresh && k == b->npending - 1)
				b->fresh = false;
			continue;
		}
		b->pending[kept++] = i;
	}
	b->npending = kept;
	if (b->fresh && now - b->since[b->pending[b->npending - 1]] >= b->stagger_ns)
		b->fresh = false;
}

/* Sleep until a SIGCHLD, the fresh thread turns slow, or the oldest
 * pending thread's deadline. */
static void
sleep_until_due(struct batch *b)
{
	uint64_t wake = due_by(b->pending, b->npending, b->since, b->check_at, b->timeout_ns,
			       b->check_ns);
	size_t last = b->pending[b->npending - 1];
	if (b->fresh && b->since[last] + b->stagger_ns < wake)
		wake = b->since[last] + b->stagger_ns;
	if (b->look_by && b->look_by < wake)
		wake = b->look_by;
	b->look_by = 0;
	if (!b->fresh && b->boosted) {
		/* Only slow threads left: no reason to keep the CPU. */
		boost(false);
		b->boosted = false;
	}
	pid_t fresh_tid = b->fresh ? b->threads[last]->tid : 0;
	if (ptrace_tracee_sleep(wake, fresh_tid))
		b->scan = true;
}

static int
sample_batch(struct ptrace_target *t, struct ptrace_target *const *ts, void *const *ctxs,
	     struct tracee **threads, size_t n, const struct sample_opts *o,
	     struct stack_snapshot *outs, int *results)
{
	size_t window = clamp_window(o->window);
	if (n == 0)
		return 0;
	int r = prepare(threads, n, window, o->interp_window, outs, results);
	if (r < 0) {
		forget_early(threads, n);
		return r;
	}
	/* A profiler tick samples one thread at a time through
	 * ptrace_sample(): no allocation for small batches. */
	uint64_t since_small[16], check_small[16];
	size_t pending_small[16];
	struct batch b = {
		.t = t, .ts = ts, .ctxs = ctxs, .threads = threads, .n = n, .o = o,
		.outs = outs, .results = results, .window = window,
		.since = since_small, .check_at = check_small, .pending = pending_small,
	};
	if (n > 16) {
		b.since = malloc(n * sizeof(*b.since));
		b.check_at = malloc(n * sizeof(*b.check_at));
		b.pending = malloc(n * sizeof(*b.pending));
		if (!b.since || !b.check_at || !b.pending) {
			free(b.since);
			free(b.check_at);
			free(b.pending);
			forget_early(threads, n);
			return -ENOMEM;
		}
	}
	b.check_ns = (o->flags & SAMPLE_DSTATE) ? (uint64_t)SAMPLE_DSTATE_CHECK_US * NS_PER_US : 0;
	b.timeout_ns = o->timeout_us < 0 ? UINT64_MAX : (uint64_t)o->timeout_us * NS_PER_US;
	b.stagger_ns = o->stagger_us > 0 ? (uint64_t)o->stagger_us * NS_PER_US : 0;
	b.inorder = (o->flags & SAMPLE_INORDER) && b.stagger_ns == 0 &&
		    ptrace_tracee_wait_blocking_ok();
	b.ahead = b.inorder ? o->ahead : 0;
	for (;;) {
		interrupt_next(&b, b.ahead);
		if (b.npending == 0)
			break;
		if (b.sleep_first) {
			b.sleep_first = false;
			b.look_by = ptrace_clock_monotonic_ns() + SCAN_NS;
			sleep_until_due(&b);
			continue;
		}
		if (b.inorder && !b.scan) {
			if (wait_oldest(&b))
				continue;
			b.scan = true;
		}
		collect_stops(&b);
		give_up_late(&b);
		if (b.npending == 0 || (!b.fresh && b.next < n) || b.inorder)
			continue;
		sleep_until_due(&b);
	}
	if (b.inorder)
		ptrace_tracee_wait_until_end();
	if (b.boosted)
		boost(false);
	for (size_t i = 0; i < n && !(o->flags & SAMPLE_HOLD); i++)
		if (results[i] == 0 && outs[i].regs_len)
			read_code(&outs[i]);
	if (b.since != since_small) {
		free(b.since);
		free(b.check_at);
		free(b.pending);
	}
	return 0;
}

int
ptrace_sample_many(struct ptrace_target *t, struct tracee **threads, size_t n,
		   const struct sample_opts *o, struct stack_snapshot *outs,
		   int *results)
{
	return sample_batch(t, NULL, NULL, threads, n, o, outs, results);
}

int
ptrace_interrupt_early(struct tracee *th, struct stack_snapshot *out, size_t window)
{
	if (th->state == TRACEE_GONE || th->interrupted_ns)
		return 0;
	if (reserve(out, clamp_window(window)) < 0)
		return -ENOMEM;
	/* Real-time from here: the thread waits on this tracer. */
	boost(true);
	uint64_t now = ptrace_clock_monotonic_ns();
	if (ptrace(PTRACE_INTERRUPT, th->tid, 0L, 0L) < 0)
		return -errno;
	th->interrupted_ns = now;
	return 0;
}

size_t
ptrace_sample_ready(struct ptrace_target *const *targets, void *const *ctxs,
		    struct tracee **threads, size_t n, const struct sample_opts *o,
		    struct stack_snapshot *outs, int *results)
{
	size_t window = clamp_window(o->window);
	size_t taken = 0;
	for (size_t i = 0; i < n; i++) {
		struct tracee *th = threads[i];
		if (!th->interrupted_ns || th->taken || th->state == TRACEE_GONE)
			continue;
		if (prepare(&threads[i], 1, window, o->interp_window, &outs[i], &results[i]) < 0)
			continue;  /* the batch reports it */
		if (!check(targets[i], th, o, ctxs[i], window, th->interrupted_ns, &outs[i],
			   &results[i]))
			continue;
		th->interrupted_ns = 0;
		th->taken = true;
		taken++;
	}
	return taken;
}

int
ptrace_sample_threads(struct ptrace_target *const *targets, void *const *ctxs,
		      struct tracee **threads, size_t n, const struct sample_opts *o,
		      struct stack_snapshot *outs, int *results)
{
	return sample_batch(NULL, targets, ctxs, threads, n, o, outs, results);
}

int
ptrace_sample(struct ptrace_target *t, struct tracee *th, size_t window,
	      stack_end_fn stack_end, void *ctx, int timeout_ms,
	      unsigned flags, struct stack_snapshot *out)
{
	struct sample_opts o = {
		.window = window,
		.stack_end = stack_end,
		.ctx = ctx,
		.timeout_us = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * (int64_t)US_PER_MS,
		.flags = flags,
	};
	int result = 0;
	int r = ptrace_sample_many(t, &th, 1, &o, out, &result);
	return r < 0 ? r : result;
}

/* ---- late samples ---------------------------------------------------------- */

struct ptrace_late {
	struct sample_opts o;
	size_t window;
	ptrace_late_fn fn;
	ptrace_fd_fn fd_of;
	void *arg;
	struct stack_snapshot snap;   /* allocated here, not while a thread
					 waits on us */
};

int
ptrace_target_set_late(struct ptrace_target *t, const struct sample_opts *o,
		       ptrace_late_fn fn, ptrace_fd_fn fd_of, void *arg)
{
	struct ptrace_late *l = t->late ? t->late : calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	size_t window = clamp_window(o->window);
	if (reserve(&l->snap, window) < 0) {
		if (!t->late)
			free(l);
		return -ENOMEM;
	}
	l->o = *o;
	l->window = window;
	l->fn = fn;
	l->fd_of = fd_of;
	l->arg = arg;
	t->late = l;
	return 0;
}

bool
ptrace_sample_late(struct ptrace_target *t, struct tracee *th, int st)
{
	struct ptrace_late *l = t->late;
	if (!l)
		return false;
	struct tracee **one = &th;
	int result;
	struct stack_snapshot *out = &l->snap;
	if (prepare(one, 1, l->window, l->o.interp_window, out, &result) < 0)
		return false;
	out->schedstat_fd = l->fd_of ? l->fd_of(l->arg, th->tid) : -1;
	boost(true);
	/* The pause counts from now: when the thread stopped is not known,
	 * only that the SIGCHLD just came. */
	result = take_sample(t, th, st, &l->o, l->o.ctx, l->window,
			     ptrace_clock_monotonic_ns(), out);
	boost(false);
	if (result == 0 && out->regs_len)
		read_code(out);
	l->fn(l->arg, t, th, result, out);
	return true;
}

void
ptrace_late_free(struct ptrace_target *t)
{
	if (!t->late)
		return;
	ptrace_snapshot_release(&t->late->snap);
	free(t->late);
	t->late = NULL;
}
