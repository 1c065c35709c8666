# tests/events.mk - whatever happens to stackspy or its target, the target
# is never stalled or mistaken (issue 16): stackspy stopped, signalled,
# short of descriptors; the target exec'ing from a thread, traced by
# another tool, in D state.  Their target is tests/targets/events.c (built
# like those of tests/local.mk, with its TARGET_* variables).

EXTRA_DIST += tests/targets/events.c

check_DATA += tests/targets/events
CLEANFILES += tests/targets/events

