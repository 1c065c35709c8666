/* ptrace/eperm.c - say why the kernel refused PTRACE_SEIZE (strace's
 * diagnose_attach_eperm is the model). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptrace/procfs.h"
#include "ptrace/ptrace-internal.h"
#include "ptrace/ptrace.h"

#define CAP_SYS_PTRACE_BIT 19

enum eperm_thread
ptrace_eperm_thread(pid_t pid, pid_t tid, pid_t *tracer)
{
	char state[32];
	*tracer = 0;
	/* The kernel refuses a thread whose exit has begun (its exit_state
	 * is set): from then on /proc shows it a zombie (Z) or dead (X)
	 * until it is gone. */
	int r = ptrace_proc_status_text(pid, tid, "State", state, sizeof(state));
	if (r == -ENOENT || r == -ESRCH || (r == 0 && (state[0] == 'Z' || state[0] == 'X')))
		return EPERM_THREAD_EXITING;
	*tracer = ptrace_procfs_tracer(pid, tid);
	if (*tracer > 0)
		return EPERM_THREAD_TRACED;
	/* Both read while it exits: the State line said it was alive, the
	 * status file is gone now. */
	if (r == 0 && ptrace_proc_status_text(pid, tid, "State", state, sizeof(state)) < 0)
		return EPERM_THREAD_EXITING;
	return EPERM_THREAD_UNTRACED;
}

char *
ptrace_explain_eperm(pid_t pid, char *buf, size_t len)
{
	long tracer = 0, uid = -1;
	char comm[64];

	if (ptrace_procfs_status_field(pid, "TracerPid", &tracer) == 0 && tracer > 0) {
		if (ptrace_read_comm((pid_t)tracer, comm, sizeof(comm)) < 0)
			snprintf(comm, sizeof(comm), "?");
		snprintf(buf, len, "already traced by process %ld (%s); only one tracer "
			 "at a time: detach it (or stop that debugger) first", tracer, comm);
		return buf;
	}
	/* Uid: real effective saved fs — the real one is first. */
	if (ptrace_procfs_status_field(pid, "Uid", &uid) == 0 && geteuid() != 0 &&
	    (uid_t)uid != geteuid()) {
		snprintf(buf, len, "process %d belongs to uid %ld, you are uid %d; run "
			 "stackspy as that user or as root", (int)pid, uid, (int)geteuid());
		return buf;
	}
	char scope[16];
	if (geteuid() != 0 &&
	    ptrace_procfs_read("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof(scope)) > 0 &&
	    scope[0] >= '1') {
		snprintf(buf, len, "kernel.yama.ptrace_scope is %c, which only lets "
			 "processes trace their own children; run stackspy as root, or "
			 "'sysctl kernel.yama.ptrace_scope=0'", scope[0]);
		return buf;
	}
	/* Our own effective capabilities (hex): is CAP_SYS_PTRACE among them? */
	char caps_text[32];
	unsigned long long caps = 0;
	if (ptrace_proc_status_text(getpid(), 0, "CapEff", caps_text, sizeof(caps_text)) == 0 &&
	    sscanf(caps_text, "%llx", &caps) == 1 &&
	    !(caps & (1ULL << CAP_SYS_PTRACE_BIT))) {
		snprintf(buf, len, "stackspy lacks CAP_SYS_PTRACE (in a container, "
			 "run it with --cap-add=SYS_PTRACE or from the host)");
		return buf;
	}
	snprintf(buf, len, "the kernel refused to trace process %d (a security "
		 "module such as SELinux or AppArmor may forbid it)", (int)pid);
	return buf;
}
