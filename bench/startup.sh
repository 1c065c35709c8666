#!/bin/sh
# bench/startup.sh - what a start of stackspy costs before it does any
# work: `stackspy --version` and `stackspy dump` of a one-thread sleeping
# process, next to a program that does nothing (bench/parked --help, the
# same dynamic loader and libc), alternating, N rounds each; prints the
# median wall times in ms and the libraries the dynamic loader maps at
# start (ldd).  A `stackspy dump` is often run in a loop (watch, a
# script polling a hung service): its start is part of its time.
#
#   bench/startup.sh [-r ROUNDS]
# Run from the top of a built tree.
set -eu
rounds=30
while getopts r: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
parked=$build/bench/parked
need_built stackspy bench/parked
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
sleep 600 &
pids=$!
sleeper=$!

now() { date +%s%N; }
# timed FILE CMD...: append CMD's wall time in us to FILE.
timed()
{
	_f=$1; shift
	_t0=$(now); "$@" >/dev/null 2>&1 || :; _t1=$(now)
	echo $(( (_t1 - _t0) / 1000 )) >>"$tmp/$_f"
}
i=0
while [ "$i" -lt "$rounds" ]; do
	timed base "$parked" --help
	timed version "$stackspy" --version
	timed dump "$stackspy" dump "$sleeper"
	i=$((i + 1))
done
median() { sort -n "$tmp/$1" | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'; }
echo "rounds: $rounds"
echo "do-nothing program:   median $(median base) ms"
echo "stackspy --version:   median $(median version) ms"
echo "stackspy dump (1 thread): median $(median dump) ms"
echo "libraries mapped at start: $(ldd "$stackspy" | grep -c '=>')"
