# tests/local.mk - the test framework and the integration tests:
# tests/*.test shell scripts (they source tests/init.sh, and their helper
# libraries through its load_lib) run under tests/run-test.sh, which adds a
# time limit and turns a test that did not run as written into an error;
# the target programs they point stackspy at (tests/targets/); and
# tests/check.h, the checks of the C unit tests (tests/unit-*.c).  The
# other fragments of tests/ are named by subject.

TEST_EXTENSIONS = .test
TEST_LOG_COMPILER = $(SHELL) $(srcdir)/tests/run-test.sh
AM_TESTS_ENVIRONMENT = \
	abs_top_builddir='$(abs_top_builddir)'; \
	abs_top_srcdir='$(abs_top_srcdir)'; \
	GDB='$(GDB)'; \
	TEST_PYTHON='$(TEST_PYTHON)'; \
	FUZZ_CC='$(FUZZ_CC)'; \
	SHELL='$(SHELL)'; \
	export abs_top_builddir abs_top_srcdir GDB TEST_PYTHON FUZZ_CC SHELL;

EXTRA_DIST += tests/README tests/init.sh tests/run-test.sh tests/check.h \
	tests/jsonq.py tests/gdb-frames.py tests/core-edit.py \
	tests/data/elfutils/README \
	tests/data/elfutils/backtrace.aarch64.core.bz2 \
	tests/data/elfutils/backtrace.aarch64.exec.bz2 \
	tests/data/elfutils/backtrace.aarch64.fp.core.bz2 \
	tests/data/elfutils/backtrace.aarch64.fp.exec.bz2 \
	tests/fuzz/fuzz.sh tests/fuzz/fuzz-elf.c tests/fuzz/fuzz-core.c \
	tests/fuzz/make-seeds.py tests/fuzz/corpus-core/gcore-notes \
	tests/fuzz/corpus-core/mipsbe-linkmap \
	tests/fuzz/corpus-core/mipsbe-ntfile \
	tests/fuzz/corpus-core/mipsel-linkmap \
	tests/fuzz/corpus-core/mipsel-ntfile \
	tests/fuzz/corpus-core/x86_64-linkmap \
	tests/fuzz/corpus-core/x86_64-ntfile tests/fuzz/corpus-elf/cxx-small \
	tests/fuzz/corpus-elf/cxx-stripped \
	tests/fuzz/corpus-elf/libdlt-stripped-so \
	tests/fuzz/corpus-elf/libdlt-so tests/fuzz/corpus-elf/maps.txt \
	tests/fuzz/fuzz-cfi.c tests/fuzz/corpus-cfi/busy-dwarf-debug \
	tests/fuzz/corpus-cfi/busy-dwarf-eh tests/fuzz/corpus-cfi/cxx-O2-eh \
	tests/fuzz/corpus-cfi/gohello-debug tests/fuzz/corpus-cfi/hostile \
	tests/fuzz/corpus-cfi/libc-so-6-eh \
	tests/targets/target.h tests/targets/threads.c tests/targets/libdlt.c \
	tests/targets/cxx.cc tests/targets/many.c tests/targets/seize.c \
	tests/targets/evilname.c tests/targets/nullcall.c \
	tests/targets/ucontext.c tests/targets/zombie.c \
	tests/targets/interrupt.c tests/targets/vfork.c tests/targets/locks.c \
	tests/targets/churn.c \
	tests/targets/crowd.c \
	tests/targets/pool.c \
	tests/targets/symsize.c tests/targets/symsize-lib.c \
	tests/targets/threadstart.c tests/targets/jvmlike.c tests/targets/translated.c \
	tests/targets/sigwait.c tests/targets/asmleaf.c tests/targets/badcfi.c

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
	tests/targets/evilname \
	tests/targets/nullcall \
	tests/targets/ucontext \
	tests/targets/zombie \
	tests/targets/interrupt \
	tests/targets/vfork \
	tests/targets/churn \
	tests/targets/locks \
	tests/targets/crowd \
	tests/targets/pool \
	tests/targets/jvmlike \
	tests/targets/translated \
	tests/targets/asmleaf \
	tests/targets/badcfi

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

# A target built the plain way, -O2 and nothing else: tests/targets/NAME
# from tests/targets/NAME.c by this one rule (list it in a test_targets or
# check_DATA and its source in EXTRA_DIST; tests/README).  A target that
# needs a flag or a library more says so in TARGET_FLAGS or TARGET_LIBS
# of its own (a target-specific variable); one built from several files,
# or with flags that replace these, has a rule of its own above.
tests/targets/nullcall tests/targets/ucontext tests/targets/asmleaf \
tests/targets/badcfi: TARGET_FLAGS = $(TARGET_PIE)
tests/targets/%: tests/targets/%.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 $(TARGET_FLAGS) -o $@ $< $(TARGET_LIBS)

# make dist from a git checkout: every file git tracks is in the tarball,
# so that a file a test, a helper or a benchmark needs cannot be left out
# of EXTRA_DIST unnoticed (the tests of make distcheck would only catch
# what they run).
dist-hook: dist-check-tracked
dist-check-tracked:
	@if test -e "$(srcdir)/.git" && command -v git > /dev/null 2>&1; then \
	  dd=`cd "$(distdir)" && pwd` || exit 1; \
	  missing=`cd "$(srcdir)" && git ls-files | \
	    grep -v -x -e .gitignore | \
	    while read -r f; do test -e "$$dd/$$f" || echo "  $$f"; done`; \
	  if test -n "$$missing"; then \
	    echo "make dist: tracked files missing from EXTRA_DIST:"; \
	    echo "$$missing"; \
	    exit 1; \
	  fi; \
	fi
.PHONY: dist-check-tracked
