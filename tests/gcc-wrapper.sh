#!/bin/bash
# tests/gcc-wrapper.sh - run by gcc -wrapper for each subcommand (cc1, as,
# collect2) of tests/record-make.test: runs it as a child of its own and
# appends "PID START END NAME" ($EPOCHREALTIME: seconds, microseconds) to
# $WRAPPER_LOG, so that the test knows how long each compiler process
# lived without asking stackspy.
start=$EPOCHREALTIME
"$@" &
pid=$!
wait "$pid"
rc=$?
end=$EPOCHREALTIME
echo "$pid $start $end ${1##*/}" >> "${WRAPPER_LOG:-/dev/null}"
exit "$rc"
