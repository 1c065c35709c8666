#!/bin/bash
# tests/gcc-wrapper.sh - run by gcc -wrapper for each subcommand (cc1, as,
# collect2) of tests/record-make.test: runs it as a child of its own and
# appends "PID START END NAME CPU" to $WRAPPER_LOG (START and END:
# $EPOCHREALTIME, seconds; CPU: the child's user + system time, seconds),
# so that the test knows how long each compiler process lived and ran
# without asking stackspy.
#
# START is taken in the child just before its exec, not before the fork:
# until the exec the child is this script (its stacks are bash's, under
# gcc-wrapper.sh-PID), and on a loaded host that part was seen to take
# 20 ms of an `as` whose program ran 8 ms.  END is when this script has
# reaped it, which a tracer may put off (a traced child's exit goes to its
# tracer first; CI saw an `as` of a few milliseconds "live" 0.96 s): CPU
# says how long it ran.
log=${WRAPPER_LOG:-/dev/null}
started=$(mktemp "${TMPDIR:-/tmp}/gcc-wrapper.XXXXXX") || exit 1
( echo "$EPOCHREALTIME" > "$started"; exec "$@" ) &
pid=$!
wait "$pid"
rc=$?
end=$EPOCHREALTIME
read -r start < "$started"
# `times`' second line: the children's user and system time (0m0.012s),
# run in this shell (a command substitution's subshell has no children).
times > "$started"
{ read -r _; read -r user sys; } < "$started"
rm -f "$started"
cpu=$(echo "$user $sys" | sed 's/\([0-9]*\)m\([0-9.]*\)s \([0-9]*\)m\([0-9.]*\)s/\1 \2 \3 \4/' |
	awk '{ printf "%.3f", $1 * 60 + $2 + $3 * 60 + $4 }')
echo "$pid $start $end ${1##*/} $cpu" >> "$log"
exit "$rc"
