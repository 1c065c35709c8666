#!/bin/sh
# run-test.sh TEST: the LOG_COMPILER of tests/*.test; runs TEST under a time
# limit (STACKSPY_TEST_TIMEOUT seconds; default 120, or what the test says
# in a "# time limit: N s" line of its header) and turns a timeout into a
# hard error (99).
limit=$(sed -n '2,5s/^# time limit: \([0-9][0-9]*\) s$/\1/p' "$1" 2>/dev/null)
limit=${STACKSPY_TEST_TIMEOUT:-${limit:-120}}
timeout -k 10 "$limit" "${SHELL:-/bin/sh}" "$@"
rc=$?
case $rc in
124|137)
	echo "ERROR: $1 did not finish within $limit s"
	exit 99;;
esac
exit $rc
