#!/bin/bash
# tests/gcc-wrapper.sh - run by gcc -wrapper for each subcommand (cc1, as,
# collect2) of tests/record-make.test: runs it as a child of its own and
# appends "PID START END NAME" ($EPOCHREALTIME: seconds, microseconds) to
# $WRAPPER_LOG, so that the test knows how long each compiler process
# lived without asking stackspy.
#
# START is taken in the child just before its exec, not before the fork:
# until the exec the child is this script (its stacks are bash's, under
# gcc-wrapper.sh-PID), and on a loaded host that part was seen to take
# 20 ms of an `as` whose program ran 8 ms.
log=${WRAPPER_LOG:-/dev/null}
started=$(mktemp "${TMPDIR:-/tmp}/gcc-wrapper.XXXXXX") || exit 1
( echo "$EPOCHREALTIME" > "$started"; exec "$@" ) &
pid=$!
wait "$pid"
rc=$?
end=$EPOCHREALTIME
read -r start < "$started"
rm -f "$started"
echo "$pid $start $end ${1##*/}" >> "$log"
exit "$rc"
