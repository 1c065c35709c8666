/* ptrace/procfs.h - what /proc says about a process or a thread: the one
 * parser of each /proc file format stackspy reads (stat, status,
 * schedstat, comm, syscall, stack, wchan), threads read without stopping
 * them, and the process tree.  Defined in ptrace/procfs.c and
 * ptrace/proctree.c.
 *
 * Any module may use it (it needs no tracee, except where a stack_end_fn
 * of ptrace/sample.h is passed in).
 */
#ifndef STACKSPY_PTRACE_PROCFS_H
#define STACKSPY_PTRACE_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/sample.h"

/* Read an open /proc/.../schedstat descriptor (pread, so it can be read
 * again).  Returns 0, or a negative errno with *out zeroed. */
int ptrace_read_schedstat(int fd, struct task_schedstat *out);
/* What /proc/PID/task/TID/sched says of a thread (the kernel's scheduler
 * debugging, CONFIG_SCHED_DEBUG). */
struct task_sched {
	uint64_t exec_start_ns;   /* se.exec_start: when the scheduler last
				     accounted its CPU time, in ns of its run
				     queue's clock (not ptrace_clock_monotonic_ns's); for
				     a thread off its CPU, when it left it */
	uint64_t switches;        /* nr_switches: times it left a CPU */
	bool has_switches;
};
/* Read thread tid of pid's (tid 0: the calling thread's).  Returns 0,
 * -ENODATA (no se.exec_start line), or a negative errno (-ESRCH: gone). */
int ptrace_read_task_sched(pid_t pid, pid_t tid, struct task_sched *out);
/* The same from the file's text. */
int ptrace_task_sched_parse(const char *text, struct task_sched *out);
/* The same from fd, /proc/.../sched kept open (read at offset 0). */
int ptrace_read_task_sched_fd(int fd, struct task_sched *out);

/* A /proc/PID/stat (or /proc/PID/task/TID/stat) line: the one parser.  The
 * name may hold spaces and parentheses: the fields follow the last ')'. */
struct proc_stat {
	const char *comm;         /* into the line, comm_len bytes */
	size_t comm_len;
	char state;               /* field 3: R, S, D, T, t, Z, X ... */
	int ppid;                 /* 4 */
	unsigned long flags;      /* 9: PF_* (PF_KTHREAD 0x00200000) */
	unsigned long long utime, stime, cutime, cstime;  /* 14-17, clock ticks */
	unsigned long long start_time;  /* 22: clock ticks since boot */
	int processor;            /* 39: the CPU it last ran on, or whose run
				     queue it waits in; -1 when missing */
};
/* Returns 0, or -EINVAL when line is not a stat line (fields past the
 * state that are missing are left 0). */
int ptrace_proc_stat_parse(const char *line, struct proc_stat *out);

/* The value of the "Key:" line of /proc/PID/status (tid > 0: of the
 * thread's own /proc/PID/task/TID/status) as text: what follows the colon
 * and its blanks, up to the end of the line, into val (len bytes,
 * NUL-terminated, cut to fit).  The one reader of status files; the caller
 * parses the text as its field is written (decimal, CapEff's hex, the
 * several numbers of Uid: or NSpid:).  Returns 0, -ENOENT when there is no
 * such line, or the negative errno of the read (-ESRCH: no such process). */
int ptrace_proc_status_text(pid_t pid, pid_t tid, const char *key, char *val, size_t len);

/* Read /proc/PID/task/TID/stat state letter and comm.  Returns 0 or -errno. */
int ptrace_thread_info(pid_t pid, pid_t tid, char *state, char *name, size_t namelen);

/* ptrace_thread_info() of thread tid, taskfd being the open directory
 * /proc/PID/task of its process: for many threads, cheaper than the whole
 * path each time (bench/dump-parked.sh). */
int ptrace_thread_info_at(int taskfd, pid_t tid, char *state, char *name, size_t namelen);
/* Only the name (TID/comm under taskfd): when the state is known, a
 * third of the cost of the stat line, which the kernel formats whole
 * (do_task_stat was 14% of a dump's unwinding thread).  0 or -errno. */
int ptrace_thread_name_at(int taskfd, pid_t tid, char *name, size_t namelen);

/* The comm of process PID (/proc/PID/comm without its newline) into buf;
 * "" on failure.  Returns 0 or a negative errno. */
int ptrace_read_comm(pid_t pid, char *buf, size_t len);

/* --- Threads that cannot stop (procfs.c; dump, record --idle) --------- */

/* /proc/PID/task/TID/syscall of a thread that is blocked (not stopped). */
struct task_syscall {
	bool running;             /* "running": on a CPU, nothing to read */
	int64_t nr;               /* system call number, -1 blocked outside one
				     (e.g. a page fault) */
	uint64_t args[6];         /* its arguments (nargs of them: 6 or 0) */
	int nargs;
	uint64_t sp, pc;          /* user stack pointer and pc */
};

/* Read it.  Returns 0, -EAGAIN (running), -ESRCH, -EACCES, -EINVAL. */
int ptrace_read_syscall(pid_t pid, pid_t tid, struct task_syscall *out);

/* Sample a blocked thread without stopping it: registers from
 * /proc/.../syscall (sp, pc, and on x86-64 and aarch64 the argument
 * registers; every other register reads as 0: unknown, so an unwind that
 * needs one stops there), and the user stack from sp copied with
 * process_vm_readv (window bytes, cut at stack_end), *sc the syscall line.
 * Returns 0, -EAGAIN when the thread is running or moved during the copy,
 * or another negative errno. */
int ptrace_snapshot_blocked(pid_t pid, pid_t tid, size_t window, stack_end_fn stack_end,
			    void *ctx, struct stack_snapshot *out, struct task_syscall *sc);

/* One frame of /proc/PID/task/TID/stack, "[<ffffffff8108c0a1>]
 * kernel_clone+0xb1/0x3a0": its address (0 unless kptr_restrict shows
 * it), the function and the offset into it. */
struct kernel_frame {
	uint64_t addr;
	char function[128];
	uint64_t offset;
};
/* The kernel stack of thread tid (root only), innermost first, at most max
 * frames into out.  Returns how many, or a negative errno. */
int ptrace_kernel_stack(pid_t pid, pid_t tid, struct kernel_frame *out, int max);

/* /proc/PID/task/TID/wchan: the kernel function the thread sleeps in, ""
 * when none or hidden.  Returns 0 or a negative errno. */
int ptrace_read_wchan(pid_t pid, pid_t tid, char *buf, size_t len);

/* len bytes at addr in process (or thread) pid, process_vm_readv: no stop
 * needed.  Returns 0, -EFAULT (short), or a negative errno. */
int ptrace_read_memory(pid_t pid, uint64_t addr, void *buf, size_t len);

/* --- The process tree (proctree.c) ---------------------------------- */

/* The child processes of process pid (forked by any of its threads), or
 * all its descendants, children before grandchildren.  *out is malloc'd.
 * Returns the count, or a negative errno (-ESRCH: pid is gone). */
int ptrace_children(pid_t pid, pid_t **out);
int ptrace_descendants(pid_t pid, pid_t **out);

/* The thread group (process) of thread tid.  Returns 0 or -ESRCH. */
int ptrace_thread_tgid(pid_t tid, pid_t *tgid);

#endif
