/* ptrace/ptrace-internal.h - private to ptrace/. */
#ifndef STACKSPY_PTRACE_INTERNAL_H
#define STACKSPY_PTRACE_INTERNAL_H

#include <stdbool.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ptrace/ptrace.h"

/* Read a small /proc file into buf (NUL-terminated).  Returns the length or
 * a negative errno. */
ssize_t procfs_read(const char *path, char *buf, size_t len);

/* The value of a "Key:\tvalue" line of /proc/PID/status, as a long.  Returns
 * 0 or -ENOENT. */
int procfs_status_field(pid_t pid, const char *key, long *val);

/* Thread IDs in /proc/PID/task.  *out is malloc'd.  Returns the count or a
 * negative errno (-ESRCH when the process is gone). */
int procfs_list_tasks(pid_t pid, pid_t **out);
/* ptrace_thread_info() of thread tid, taskfd being the open directory
 * /proc/PID/task of its process: for many threads, cheaper than the whole
 * path each time (bench/dump-parked.sh). */
int procfs_thread_info_at(int taskfd, pid_t tid, char *state, char *name, size_t namelen);

/* Wait for a state change of tid for at most timeout_ms (negative: forever).
 * Returns 1 with *status filled, 0 on timeout, -ECHILD/-errno on error. */
int tracee_wait(pid_t tid, int *status, int timeout_ms);

/* Sleep until a SIGCHLD arrives or until wake_ns (monotonic_ns(); UINT64_MAX:
 * no limit).  Returns true if a SIGCHLD read came from another child than
 * expected, i.e. some other tracee may have a status to collect (SIGCHLDs
 * coalesce, so false proves nothing). */
bool tracee_sleep(uint64_t wake_ns, pid_t expected);

/* Stack pointer from a raw NT_PRSTATUS of this host's architecture. */
uint64_t regs_stack_pointer(const unsigned char *regs, size_t len);

/* Bring tracee th back to running (or to listening when it is in group-stop)
 * after a stop that we reaped with status st.  Used by sample, poll and
 * attach.  Returns 0 or -errno. */
int tracee_resume(struct tracee *th, int st);

/* Late samples (sample.c): take the sample of th, whose late stop (status
 * st, an interrupt's event-stop) poll reaped, resume it and hand it to
 * the target's callback.  Returns false when t has no late sampling set
 * up (the caller then only resumes th). */
bool sample_late(struct ptrace_target *t, struct tracee *th, int st);
void late_free(struct ptrace_target *t);

/* Thread tid of t reported PTRACE_EVENT_EXEC: note it, and forget the
 * exec'ing thread's former tid (a non-leader exec). */
void tracee_exec_event(struct ptrace_target *t, pid_t tid);

/* watchdog.c: tell the watchdog how many tracees (targets still attached,
 * threads still seized after a detach gave up on them) we hold. */
void watchdog_set_busy(int n);
/* In a forked child: the watchdog watches the parent, not us; the next
 * attach starts one of our own. */
void watchdog_forget(void);

#endif
