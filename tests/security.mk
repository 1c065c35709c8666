# tests/security.mk - root's stackspy against a hostile unprivileged
# target (issue 22): output paths, names that drive a terminal, the perf
# map, push replies and credentials, the debuginfod cache.  The helpers
# that play the other user are in tests/hostile-lib.sh.

security_tests = \
	tests/security-output.test \
	tests/security-perfmap.test \
	tests/security-terminal.test \
	tests/security-push.test \
	tests/security-debuginfod.test \
	tests/security-top.test \
	tests/security-debugbounds.test
TESTS += $(security_tests)
EXTRA_DIST += $(security_tests) tests/hostile-lib.sh tests/push-lib.sh tests/tstop-watch.py
