# tests/accuracy.mk - accuracy and symbols: stackspy against gdb at random
# stop points (tests/accuracy.test, bench/accuracy.sh), stacks deeper than
# the snapshot window, MiniDebugInfo, JIT perf maps.

EXTRA_DIST += tests/accuracy.py tests/targets/busy.c \
	tests/targets/busy-nocfi.c bench/accuracy.sh

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

# Go and .debug_frame-only programs against gdb: tests/go-*.test
# build tests/targets/gowork.go with the go command at test time (skipped
# without it); busy-dwarf is busy without .eh_frame, its CFI only in
# .debug_frame (tests/debugframe-gdb.test also splits it into a separate
# debug file).
EXTRA_DIST += tests/targets/gowork.go tests/targets/gocgo.go tests/go-lib.sh

check_DATA += tests/targets/busy-dwarf
CLEANFILES += tests/targets/busy-dwarf tests/targets/busy-dwarf-nocfi.o

DEBUGFRAME_CFLAGS = -O2 -fno-asynchronous-unwind-tables -fno-unwind-tables
tests/targets/busy-dwarf: tests/targets/busy.c tests/targets/busy-nocfi.c $(TARGET_DEPS)
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) $(DEBUGFRAME_CFLAGS) -fno-omit-frame-pointer -fPIE \
		-c -o tests/targets/busy-dwarf-nocfi.o $(srcdir)/tests/targets/busy-nocfi.c && \
	$(TARGET_CC) $(DEBUGFRAME_CFLAGS) -fomit-frame-pointer $(TARGET_PIE) -o $@ \
		$(srcdir)/tests/targets/busy.c tests/targets/busy-dwarf-nocfi.o
