#!/bin/sh
# run-test.sh TEST: the LOG_COMPILER of tests/*.test; runs TEST under a time
# limit (STACKSPY_TEST_TIMEOUT seconds, default 120) and turns a timeout
# into a hard error (99).
limit=${STACKSPY_TEST_TIMEOUT:-120}
timeout -k 10 "$limit" "${SHELL:-/bin/sh}" "$@"
rc=$?
case $rc in
124|137)
	echo "ERROR: $1 did not finish within $limit s"
	exit 99;;
esac
exit $rc
