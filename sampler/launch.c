/* sampler/launch.c - getting hold of the targets: attach to the processes
 * asked for, or launch the command and follow it from its first
 * instruction. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse/collapse.h"
#include "sampler/profiler-internal.h"

int
attach_one(struct profiler *p, struct proc_state *ps, pid_t pid)
{
	char why[256];
	ps->pid = pid;
	int r = ptrace_target_check(pid, why, sizeof(why));
	if (r == -EINVAL) {
		error_msg("cannot attach to process %d: %s", (int)pid, why);
		return r;
	}
	if (r == 0)
		r = ptrace_target_attach_opts(&ps->pt, pid, PTRACE_O_TRACEEXEC);
	if (r < 0) {
		perror_msg(r, "cannot attach to process %d", (int)pid);
		if (r == -EPERM)
			hint_msg("%s", ptrace_explain_eperm(pid, why, sizeof(why)));
		return r;
	}
	ps->attached = true;
	cleanup_register(&ps->pt);
	ps->ut = unwind_target_open(pid, &r);
	if (!ps->ut) {
		perror_msg(r, "cannot read the memory map of process %d", (int)pid);
		ptrace_target_detach(&ps->pt);
		cleanup_unregister(&ps->pt);
		ps->attached = false;
		return r;
	}
	ps->ut_generation = unwind_target_generation(ps->ut);
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(ps->comm, sizeof(ps->comm), f))
			ps->comm[strcspn(ps->comm, "\n")] = '\0';
		fclose(f);
	}
	char name[160];
	collapse_name_root(name, sizeof(name), ps->comm, pid, 0);
	int id = collapse_intern(p->stacks, name);
	ps->root_id = id < 0 ? 0 : (uint32_t)id;
	return 0;
}

/* Launch mode: the child waits on a pipe until it is seized, then execs;
 * PTRACE_O_TRACEEXEC stops it at the exec, before the new program's first
 * instruction.  A second, close-on-exec pipe carries exec's errno back. */
int
launch(struct profiler *p, struct proc_state *ps)
{
	int go[2], err[2];
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		return -errno;
	pid_t child = fork();
	if (child < 0)
		return -errno;
	if (child == 0) {
		char c;
		close(go[1]);
		close(err[0]);
		/* Our signal dispositions and mask are not the command's. */
		signal(SIGPIPE, SIG_DFL);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(p->cfg.argv[0], p->cfg.argv);
		int e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	p->child = child;
	int r = ptrace_target_attach_opts(&ps->pt, child, PTRACE_O_TRACEEXEC);
	if (r < 0) {
		close(go[1]);
		close(err[0]);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		perror_msg(r, "cannot trace the command");
		return r;
	}
	ps->pid = child;
	ps->attached = true;
	cleanup_register(&ps->pt);
	if (write(go[1], "x", 1) != 1) {
		/* the child is gone; seen below */
	}
	close(go[1]);
	int e = 0;
	ssize_t got = read(err[0], &e, sizeof(e));
	close(err[0]);
	if (got == (ssize_t)sizeof(e)) {
		ptrace_target_detach(&ps->pt);
		cleanup_unregister(&ps->pt);
		ps->attached = false;
		waitpid(child, NULL, 0);
		perror_msg(-e, "cannot run '%s'", p->cfg.argv[0]);
		return -e;
	}
	/* The exec happened (the pipe closed on it): take its stop now, so
	 * the maps we read are the new program's. */
	for (;;) {
		int st;
		pid_t w = waitpid(child, &st, __WALL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 || !WIFSTOPPED(st)) {
			ps->exited = true;
			break;
		}
		bool exec_stop = (st >> 16) == PTRACE_EVENT_EXEC;
		long sig = (st >> 16) == 0 ? WSTOPSIG(st) : 0;
		ptrace(PTRACE_CONT, child, 0L, sig);
		if (exec_stop)
			break;
	}
	/* The thread was named before the exec, after us ("stackspy"):
	 * --threads roots must carry the command's name
	 * (tests/record-threads.test). */
	for (size_t i = 0; i < ps->pt.nthreads; i++)
		ptrace_thread_info(child, ps->pt.threads[i].tid, NULL, ps->pt.threads[i].name,
				   sizeof(ps->pt.threads[i].name));
	ps->ut = unwind_target_open(child, &r);
	if (!ps->ut) {
		if (r != -ESRCH) {
			perror_msg(r, "cannot read the memory map of the command");
			/* We started it; we do not leave it running untraced
			 * and unreaped. */
			kill(child, SIGKILL);
			return r;
		}
		/* It ran and exited before we could look: an empty profile. */
		ps->exited = true;
		ptrace_target_poll(&ps->pt);
		if (ps->pt.leader_exited)
			p->child_status = ps->pt.leader_status;
	}
	if (ps->ut)
		ps->ut_generation = unwind_target_generation(ps->ut);
	snprintf(ps->comm, sizeof(ps->comm), "%s", strrchr(p->cfg.argv[0], '/') ?
		 strrchr(p->cfg.argv[0], '/') + 1 : p->cfg.argv[0]);
	return 0;
}
