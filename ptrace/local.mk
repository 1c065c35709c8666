noinst_LIBRARIES += ptrace/libptrace.a
ptrace_libptrace_a_SOURCES = \
	ptrace/ptrace.h \
	ptrace/sample.h \
	ptrace/launch.h \
	ptrace/procfs.h \
	ptrace/watchdog.h \
	ptrace/ptrace-internal.h \
	ptrace/clock.h \
	ptrace/clock.c \
	ptrace/registry.c \
	ptrace/wait.c \
	ptrace/attach.c \
	ptrace/poll.c \
	ptrace/detach.c \
	ptrace/launch.c \
	ptrace/sample.c \
	ptrace/procfs.c \
	ptrace/follow.c \
	ptrace/proctree.c \
	ptrace/eperm.c \
	ptrace/watchdog.c
