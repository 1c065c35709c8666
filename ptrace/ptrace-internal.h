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

/* Thread tid of t reported an event-stop st: on PTRACE_EVENT_EXEC note it,
 * and forget the exec'ing thread's former tid (a non-leader exec); on a
 * fork, vfork or clone adopt the child (follow.c). */
void tracee_event(struct ptrace_target *t, pid_t tid, int st);

/* The registry (attach.c).  registry_new: a new target, listed; find: the
 * tracee tid and its target (*owner), looking in hint first (may be NULL);
 * next_unannounced: the next target created by follow.c that the caller
 * has not been given yet. */
struct ptrace_target *registry_new(pid_t pid, unsigned long options);
struct tracee *registry_find(struct ptrace_target *hint, pid_t tid,
			     struct ptrace_target **owner);
struct ptrace_target *registry_next_unannounced(void);
/* A new process the kernel attached for us: its start time and its one
 * thread, running. */
void target_fill_new_process(struct ptrace_target *t);
/* A thread still seized after the detach gave up on it. */
void linger_add(pid_t tid);
bool linger_has(pid_t tid);

/* follow.c: children of tracees (PTRACE_ATTACH_FOLLOW). */
void follow_count(struct ptrace_target *t, int delta);
bool follow_active(void);
size_t follow_loose_count(void);
/* A fork, vfork or clone event-stop st of tracee tid of owner (NULL if
 * none): adopt the child. */
void follow_event(struct ptrace_target *owner, pid_t tid, int st);
/* A stop of a tracee no target lists: a new child's first stop, adopted
 * and resumed (true), or not ours to follow (false). */
bool follow_unknown_stop(pid_t tid, int st);
/* A thread of process tgid that the kernel attached for us and that no
 * target lists yet: true (and forgotten here) for the rescan to list it. */
bool follow_take_loose(pid_t tgid, pid_t tid);
/* tid exited. */
void follow_gone(pid_t tid);
/* Let every loose thread go, by deadline (monotonic_ns) or lingering. */
void follow_detach_loose(uint64_t deadline);
void follow_forget(void);

/* watchdog.c: tell the watchdog how many tracees (targets still attached,
 * threads still seized after a detach gave up on them) we hold. */
void watchdog_set_busy(int n);
/* In a forked child: the watchdog watches the parent, not us; the next
 * attach starts one of our own. */
void watchdog_forget(void);

#endif
