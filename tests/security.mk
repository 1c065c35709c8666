# tests/security.mk - root's stackspy against a hostile unprivileged
# target (issue 22): output paths, names that drive a terminal, the perf
# map, push replies and credentials, the debuginfod cache.  The helpers
# that play the other user are in tests/hostile-lib.sh.

EXTRA_DIST += tests/hostile-lib.sh tests/push-lib.sh \
	tests/tstop-watch.py

# security-cfi.test: the host of the hostile library, and the generator
# of its assembly.
check_DATA += tests/targets/cfihost
CLEANFILES += tests/targets/cfihost
tests/targets/cfihost: TARGET_LIBS = -ldl -lpthread
EXTRA_DIST += tests/targets/cfihost.c tests/hostile-cfi.py
