# sampler/: the commands and the sampling loop, as a library (everything
# but main.c) so that unit tests can link the profiler's pieces.
noinst_LIBRARIES += sampler/libsampler.a
sampler_libsampler_a_SOURCES = \
	sampler/sampler.h \
	sampler/error.h \
	sampler/signals.h \
	sampler/options.h \
	sampler/feedback.h \
	sampler/profiler.h \
	sampler/push.h \
	sampler/output.h \
	sampler/out-file.h \
	sampler/options.c \
	sampler/error.c \
	sampler/signals.c \
	sampler/feedback.c \
	sampler/dump-internal.h \
	sampler/cmd-dump.c \
	sampler/dump-live.c \
	sampler/dump-core.c \
	sampler/locks.c \
	sampler/waits.c \
	sampler/follow.c \
	sampler/follow.h \
	sampler/blocked.c \
	sampler/cmd-record.c \
	sampler/cmd-top.c \
	sampler/output.c \
	sampler/out-file.c \
	sampler/profiler-internal.h \
	sampler/profiler.c \
	sampler/launch.c \
	sampler/ticks.c \
	sampler/sample.c \
	sampler/oncpu.c \
	sampler/oncpu-hold.c \
	sampler/threads.c \
	sampler/task-stat.c \
	sampler/frames.c \
	sampler/unwinder.c \
	sampler/pprof-out.c \
	sampler/push.c \
	sampler/stats.c

sampler_libsampler_a_CPPFLAGS = $(AM_CPPFLAGS) $(LIBCURL_CFLAGS)

bin_PROGRAMS += stackspy
stackspy_SOURCES = sampler/main.c
stackspy_LDADD = sampler/libsampler.a ui/libui.a collapse/libcollapse.a \
	$(UNWIND_LIBS) $(NCURSES_LIBS) -lm

# Unit tests of the profiler's pieces that need no target: address cache,
# thread table, stat parsing, pause histogram, tick deadlines, frame names.
check_PROGRAMS += tests/unit-profiler
tests_unit_profiler_SOURCES = tests/unit-profiler.c
tests_unit_profiler_LDADD = sampler/libsampler.a collapse/libcollapse.a $(UNWIND_LIBS) -lm

# The system calls' names by number for the host, from the C library's
# headers at build time (on-CPU --kernel's "[syscall: NAME]" frames).
nodist_sampler_libsampler_a_SOURCES = sampler/syscall-names.h
CLEANFILES += sampler/syscall-names.h
sampler/libsampler_a-oncpu.$(OBJEXT): sampler/syscall-names.h
sampler/syscall-names.h: Makefile
	$(AM_V_GEN)$(MKDIR_P) sampler && \
	echo '#include <sys/syscall.h>' | $(CPP) -dM - | \
	sed -n 's/^#define __NR_\([a-z][a-z0-9_]*\) .*/\1/p' | grep -v '^syscalls$$' | LC_ALL=C sort -u | \
	awk '{ printf "#ifdef __NR_%s\n\t{ __NR_%s, \"%s\" },\n#endif\n", $$1, $$1, $$1 }' \
		> $@-t && mv $@-t $@
