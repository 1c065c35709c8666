# Integration tests: tests/*.test shell scripts (they source tests/init.sh)
# run under tests/run-test.sh, which adds a time limit; and the target
# programs they point stackspy at (tests/targets/).

TEST_EXTENSIONS = .test
TEST_LOG_COMPILER = $(SHELL) $(srcdir)/tests/run-test.sh
AM_TESTS_ENVIRONMENT = \
	abs_top_builddir='$(abs_top_builddir)'; \
	abs_top_srcdir='$(abs_top_srcdir)'; \
	GDB='$(GDB)'; \
	SHELL='$(SHELL)'; \
	export abs_top_builddir abs_top_srcdir GDB SHELL;

integration_tests = \
	tests/options.test \
	tests/attach-nonexistent.test \
	tests/attach-kthread.test \
	tests/attach-zombie.test \
	tests/attach-traced.test \
	tests/attach-eperm.test \
	tests/dump-O0.test \
	tests/dump-O2.test \
	tests/dump-O2-nopie.test \
	tests/dump-engine-fp.test \
	tests/dump-engine-cfi.test \
	tests/dump-cxx.test \
	tests/dump-text.test \
	tests/dump-tid-depth.test \
	tests/dump-multi.test \
	tests/detach-running.test \
	tests/detach-stopped.test \
	tests/detach-signal.test \
	tests/gdb-compare.test \
	tests/core-dump.test \
	tests/core-bad.test
TESTS += $(integration_tests)

EXTRA_DIST += \
	$(integration_tests) \
	tests/init.sh \
	tests/run-test.sh \
	tests/jsonq.py \
	tests/gdb-frames.py \
	tests/core-edit.py \
	tests/fuzz/fuzz.sh \
	tests/fuzz/fuzz-elf.c \
	tests/fuzz/fuzz-core.c \
	tests/fuzz/make-seeds.py \
	tests/fuzz/corpus-core/gcore-notes \
	tests/fuzz/corpus-core/mipsbe-linkmap \
	tests/fuzz/corpus-core/mipsbe-ntfile \
	tests/fuzz/corpus-core/mipsel-linkmap \
	tests/fuzz/corpus-core/mipsel-ntfile \
	tests/fuzz/corpus-core/x86_64-linkmap \
	tests/fuzz/corpus-core/x86_64-ntfile \
	tests/fuzz/corpus-elf/cxx-small \
	tests/fuzz/corpus-elf/cxx-stripped \
	tests/fuzz/corpus-elf/libdlt-stripped-so \
	tests/fuzz/corpus-elf/libdlt-so \
	tests/fuzz/corpus-elf/maps.txt \
	tests/targets/target.h \
	tests/targets/threads.c \
	tests/targets/libdlt.c \
	tests/targets/cxx.cc \
	tests/targets/many.c \
	tests/targets/seize.c \
	tests/targets/zombie.c \
	tests/targets/interrupt.c

# The targets are built by explicit rules, not as check_PROGRAMS: automake
# puts the user's CFLAGS (configure's default "-g -O2", or CI's sanitizer
# flags) after per-program flags, so threads-O0 would silently be built at
# -O2 and the "-fomit-frame-pointer" variant with frame pointers.  The flag
# set of a target is part of what the test checks, so nothing may override
# it; and targets are never sanitized (that would only add interceptor
# frames to the stacks the tests assert on).
TARGET_CFLAGS = -g -Wall -Wextra -pthread
TARGET_CC = $(CC) $(TARGET_CFLAGS) -I$(srcdir)/tests/targets
TARGET_CXX = $(CXX) $(TARGET_CFLAGS) -I$(srcdir)/tests/targets
TARGET_DEPS = $(srcdir)/tests/targets/target.h
TARGET_PIE = -fPIE -pie
TARGET_NOPIE = -fno-pie -no-pie

test_targets = \
	tests/targets/threads-O0 \
	tests/targets/threads-O2 \
	tests/targets/threads-O2-nopie \
	tests/targets/threads-O2-fp \
	tests/targets/libdlt.so \
	tests/targets/cxx-O2 \
	tests/targets/many \
	tests/targets/seize \
	tests/targets/zombie \
	tests/targets/interrupt

check_DATA = $(test_targets)
CLEANFILES += $(test_targets)

tests/targets/threads-O0: tests/targets/threads.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O0 -fno-omit-frame-pointer $(TARGET_PIE) \
		-o $@ $(srcdir)/tests/targets/threads.c -ldl
tests/targets/threads-O2: tests/targets/threads.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -fomit-frame-pointer $(TARGET_PIE) \
		-o $@ $(srcdir)/tests/targets/threads.c -ldl
tests/targets/threads-O2-nopie: tests/targets/threads.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -fomit-frame-pointer $(TARGET_NOPIE) \
		-o $@ $(srcdir)/tests/targets/threads.c -ldl
tests/targets/threads-O2-fp: tests/targets/threads.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -fno-omit-frame-pointer $(TARGET_PIE) \
		-o $@ $(srcdir)/tests/targets/threads.c -ldl
# No libtool, so no check_LTLIBRARIES: the dlopen()ed library by hand.
tests/targets/libdlt.so: tests/targets/libdlt.c
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -fomit-frame-pointer -shared -fPIC \
		-o $@ $(srcdir)/tests/targets/libdlt.c
tests/targets/cxx-O2: tests/targets/cxx.cc $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_GEN)$(TARGET_CXX) -O2 -fomit-frame-pointer $(TARGET_PIE) \
		-o $@ $(srcdir)/tests/targets/cxx.cc
tests/targets/many: tests/targets/many.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -o $@ $(srcdir)/tests/targets/many.c
tests/targets/seize: tests/targets/seize.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -o $@ $(srcdir)/tests/targets/seize.c
tests/targets/zombie: tests/targets/zombie.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -o $@ $(srcdir)/tests/targets/zombie.c
tests/targets/interrupt: tests/targets/interrupt.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -o $@ $(srcdir)/tests/targets/interrupt.c

# The tests of DESIGN.md's "ptrace rules" (tests/promise-*.test) and their
# target, tests/targets/sigcount.c: it counts the real-time signals it
# receives, and its "send" mode queues them.
promise_tests = \
	tests/promise-signals-record.test \
	tests/promise-signals-dump.test \
	tests/promise-stopped-record.test \
	tests/promise-stopped-dump.test \
	tests/promise-stopped-top.test \
	tests/promise-sigcont.test \
	tests/promise-kill9.test \
	tests/promise-detach-first.test \
	tests/promise-caller-ip.test \
	tests/promise-stack-end.test
TESTS += $(promise_tests)
EXTRA_DIST += $(promise_tests) tests/promise-lib.sh tests/mutate.sh \
	tests/targets/sigcount.c tests/targets/edges.c
check_DATA += tests/targets/sigcount tests/targets/edges
CLEANFILES += tests/targets/sigcount tests/targets/edges
tests/targets/sigcount: tests/targets/sigcount.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -o $@ $(srcdir)/tests/targets/sigcount.c
tests/targets/edges: tests/targets/edges.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -o $@ $(srcdir)/tests/targets/edges.c
