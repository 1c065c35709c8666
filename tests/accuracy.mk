# tests/accuracy.mk - accuracy and symbols: stackspy against gdb at random
# stop points (tests/accuracy.test, bench/accuracy.sh), stacks deeper than
# the snapshot window, MiniDebugInfo, JIT perf maps.

accuracy_tests = \
	tests/accuracy.test \
	tests/dump-deep.test \
	tests/symbols-minidebuginfo.test \
	tests/symbols-perfmap.test
TESTS += $(accuracy_tests)

EXTRA_DIST += \
	$(accuracy_tests) \
	tests/accuracy.py \
	tests/targets/busy.c \
	tests/targets/busy-nocfi.c \
	bench/accuracy.sh

# busy: -O2 without frame pointers, except busy-nocfi.c, which has frame
# pointers and no unwind tables at all (see busy.c).  Explicit rules for the
# reason given in tests/local.mk: the flags are what the tests test.
check_DATA += tests/targets/busy
CLEANFILES += tests/targets/busy tests/targets/busy-nocfi.o

tests/targets/busy: tests/targets/busy.c tests/targets/busy-nocfi.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -fno-omit-frame-pointer \
		-fno-asynchronous-unwind-tables -fno-unwind-tables -fPIE \
		-c -o tests/targets/busy-nocfi.o $(srcdir)/tests/targets/busy-nocfi.c && \
	$(TARGET_CC) -O2 -fomit-frame-pointer $(TARGET_PIE) -o $@ \
		$(srcdir)/tests/targets/busy.c tests/targets/busy-nocfi.o
