#!/bin/sh
# bench/tracer-hold.sh - issue 23's figures: while stackspy meets slow or
# hostile input (a 4 GiB sparse debug file, sixteen MiniDebugInfo bombs,
# one unwind held 1.5 s, a perf map of 100,000 lines read by the
# unwinder, a push server that never answers), the ticks it took and the
# longest time the target sat in a tracing stop while it got a signal
# every 20 ms.  The tests measure them (tests/tstop-watch.py); this runs
# them on an idle host, then with a CPU burner on every core, and prints
# their figure lines.
#
#   bench/tracer-hold.sh [ROUNDS]
# Run from the top of a built tree, as root.
set -eu
rounds=${1:-1}
tests="tests/security-debugbounds.test tests/record-slow-unwind.test tests/push-ingest.test"
[ -x ./stackspy ] && [ -f Makefile ] || { echo "$0: run from the top of a built tree" >&2; exit 2; }
burners=
cleanup() { [ -z "$burners" ] || kill $burners 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

run() {
	i=0
	while [ $i -lt "$rounds" ]; do
		i=$((i + 1))
		make -s check TESTS="$tests" > /dev/null 2>&1 || echo "  (a test failed: see its log)"
		for t in $tests; do
			grep -h -e 'ticks taken' -e 'max_t_ms' -e 'longest tracing stop' "${t%.test}.log" |
				sed "s|^ *|  ${t#tests/}: |"
		done
	done
}

echo "idle host:"
run
n=$(nproc)
k=0
while [ $k -lt "$n" ]; do
	sh -c 'while :; do :; done' &
	burners="$burners $!"
	k=$((k + 1))
done
echo "with $n CPU burners:"
run
