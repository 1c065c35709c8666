# tests/record.mk - the tests of `stackspy record` and their target,
# tests/targets/ratio.c: a CPU-bound workload whose two functions take a
# known 3:1 share.
# Built by an explicit rule like the targets of tests/local.mk (same reason:
# nothing may change its flags), with the TARGET_* variables from there.

EXTRA_DIST += tests/record-lib.sh tests/targets/ratio.c \
	tests/gcc-wrapper.sh tests/build-makefile.sh

check_DATA += tests/targets/ratio
CLEANFILES += tests/targets/ratio
tests/targets/ratio: TARGET_FLAGS = $(TARGET_PIE)

# A plugin host that swaps libraries at one address: tests/targets/dlswap
# and its two libraries, built from one source.
EXTRA_DIST += tests/targets/dlswap.c tests/targets/libswap.c
check_DATA += tests/targets/dlswap tests/targets/libswap-a.so tests/targets/libswap-b.so
CLEANFILES += tests/targets/dlswap tests/targets/libswap-a.so tests/targets/libswap-b.so

tests/targets/dlswap: TARGET_FLAGS = $(TARGET_PIE)
tests/targets/dlswap: TARGET_LIBS = -ldl
tests/targets/libswap-a.so: tests/targets/libswap.c
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -shared -fPIC -DLIBSWAP_A -o $@ $(srcdir)/tests/targets/libswap.c
tests/targets/libswap-b.so: tests/targets/libswap.c
	@$(MKDIR_P) tests/targets
	$(AM_V_CC)$(TARGET_CC) -O2 -shared -fPIC -o $@ $(srcdir)/tests/targets/libswap.c

# On-CPU on a server-like workload: tests/targets/sleepwork.c,
# threads that sleep and compute in short turns (3:1 in two functions); its
# -B mode is the CPU burner that loads the machine in the test and in
# bench/oncpu-busy.sh.
EXTRA_DIST += tests/targets/sleepwork.c

check_DATA += tests/targets/sleepwork
CLEANFILES += tests/targets/sleepwork
tests/targets/sleepwork: TARGET_FLAGS = $(TARGET_PIE)
# ... and tests/targets/stoplag.c, how far a thread on another CPU runs on
# after PTRACE_INTERRUPT on this host: the lag an on-CPU sample of it has.
EXTRA_DIST += tests/targets/stoplag.c
check_DATA += tests/targets/stoplag
CLEANFILES += tests/targets/stoplag

# On-CPU time spent in system calls: tests/targets/syscalls.c, a reader of
# /dev/zero beside a spinner and a sleeper (tests/record-syscall.test,
# bench/oncpu-syscall.sh).
EXTRA_DIST += tests/targets/syscalls.c

check_DATA += tests/targets/syscalls
CLEANFILES += tests/targets/syscalls
tests/targets/syscalls: TARGET_FLAGS = $(TARGET_PIE)
