/* ptrace/launch.h - a command started traced, and its end: defined in
 * ptrace/launch.c.
 *
 * For the commands that run a command under stackspy (record and top's
 * launch mode, in sampler/).  The target it returns is an ordinary one of
 * ptrace/ptrace.h (registered, detached by ptrace_detach_all).
 */
#ifndef STACKSPY_PTRACE_LAUNCH_H
#define STACKSPY_PTRACE_LAUNCH_H

#include <stdbool.h>

struct ptrace_target;

/* Run argv (execvp) as a traced child: fork, seize the child while it waits
 * on a pipe, let it exec, and take its exec stop, so that when this returns
 * the new program has not run an instruction yet and its maps are its own.
 * ATTACH_EXEC is always added to flags.  Returns a registry-owned
 * target with launched set (leader_exited if the command died before its
 * exec stop), or NULL with *err a negative errno and *exec_failed telling
 * whether exec itself failed (*err is then exec's errno: "cannot run") or
 * tracing did ("cannot trace").  Nothing is left running on failure. */
struct ptrace_target *ptrace_launch(char *const argv[], unsigned flags,
				    int *err, bool *exec_failed);

/* End a launched command that still runs, once its target is detached:
 * SIGTERM (and SIGCONT, for a stopped one), up to grace_ms for it to exit,
 * then SIGKILL (*killed set); it is reaped, its status in *status.  Its
 * tree goes with it: the processes descended from it and every process
 * followed from it (ATTACH_FOLLOW), each known by its start time too, get
 * the same (also when the command has exited already).
 * Threads a detach gave up on are let go meanwhile, with their signals.
 * Returns 1 when it was ended, 0 when it had exited already (*status set
 * too), -EBUSY while t is still attached, or another negative errno. */
int ptrace_child_end(struct ptrace_target *t, int grace_ms, int *status, bool *killed);

/* The exit status of a launched command once it has exited (reaped here
 * if it is no longer traced).  Returns 1 with *status set, 0 while it runs
 * or if t was not launched. */
int ptrace_child_status(struct ptrace_target *t, int *status);
/* The same, after waiting up to ms for it to exit by itself (once
 * detached: a signal it was handed at the detach may be ending it). */
int ptrace_child_wait(struct ptrace_target *t, int ms, int *status);

#endif
