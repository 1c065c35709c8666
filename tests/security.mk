# tests/security.mk - root's stackspy against a hostile unprivileged
# target (issue 22): output paths, names that drive a terminal, the perf
# map, push replies and credentials, the debuginfod cache.  The helpers
# that play the other user are in tests/hostile-lib.sh.

EXTRA_DIST += tests/hostile-lib.sh tests/push-lib.sh \
	tests/tstop-watch.py
