# tests/promise.mk - the tests of DESIGN.md's "ptrace rules"
# (tests/promise-*.test), their targets (tests/targets/sigcount.c counts
# the real-time signals it receives and its "send" mode queues them;
# tests/targets/edges.c) and the mutation script that checks they catch a
# broken promise (tests/mutate.sh, outside make check).
EXTRA_DIST += tests/promise-lib.sh tests/mutate.sh \
	tests/targets/sigcount.c tests/targets/edges.c
check_DATA += tests/targets/sigcount tests/targets/edges
CLEANFILES += tests/targets/sigcount tests/targets/edges

# The ptrace rules at the detach, each stop made certain rather than left
# to chance: a real child seized by ptrace/ and let go in a
# signal-delivery-stop, with queued signals, in a group-stop.
check_PROGRAMS += tests/unit-detach
tests_unit_detach_SOURCES = tests/unit-detach.c
tests_unit_detach_LDADD = ptrace/libptrace.a arch/libarch.a base/libbase.a
