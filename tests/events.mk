# tests/events.mk - whatever happens to stackspy or its target, the target
# is never stalled or mistaken (issue 16): stackspy stopped, signalled,
# short of descriptors; the target exec'ing from a thread, traced by
# another tool, in D state.  Their target is tests/targets/events.c (built
# like those of tests/local.mk, with its TARGET_* variables).

events_tests = \
	tests/record-stop.test \
	tests/record-watchdog.test \
	tests/record-signals-all.test \
	tests/record-exec.test \
	tests/many-fds.test \
	tests/attach-other-tracer.test \
	tests/dump-linger.test
TESTS += $(events_tests)
EXTRA_DIST += $(events_tests) tests/targets/events.c

check_DATA += tests/targets/events
CLEANFILES += tests/targets/events

