#!/bin/sh
# bench/unwind-cost.sh - the cost of unwinding alone, per walk and per
# frame, on the same bytes for every build: a gcore of bench/parked (N
# threads in a known 7-frame chain) and of a python3 process (four threads
# deep in the interpreter), each unwound ROUNDS times by bench/unwind-cost
# with the auto and cfi engines.  BASE=DIR runs another build tree's
# bench/unwind-cost on the same cores, alternating, so the two are
# compared in the same minutes (a figure measured alone moves 2x with
# the load of a shared host).
#
#   bench/unwind-cost.sh [-n THREADS] [-r ROUNDS] [-k REPEATS]
# Run from the top of a built tree (make bench/unwind-cost bench/parked);
# needs gdb's gcore and python3.
set -eu
. "$(dirname "$0")/lib.sh"
threads=1000 rounds=5 repeats=3
while getopts n:r:k: opt; do
	case $opt in
	n) threads=$OPTARG ;;
	r) rounds=$OPTARG ;;
	k) repeats=$OPTARG ;;
	*) echo "usage: $0 [-n THREADS] [-r ROUNDS] [-k REPEATS]" >&2; exit 64 ;;
	esac
done
command -v gcore > /dev/null || { echo "unwind-cost.sh: needs gcore (gdb)" >&2; exit 2; }
work=$(mktemp -d)
pids=
trap 'kill $pids 2>/dev/null; rm -rf "$work"' EXIT INT TERM

sleep 600 | "$build/bench/parked" -n "$threads" > "$work/parked.pid" &
pids="$pids $!"
python3 -c '
import threading
def f(n):
    if n == 0:
        while True: sum(range(1000))
    return f(n - 1)
for i in range(3):
    threading.Thread(target=f, args=(30 + i * 10,), daemon=True).start()
f(20)' &
py=$!
pids="$pids $py"
while [ ! -s "$work/parked.pid" ]; do sleep 0.1; done
sleep 1
gcore -o "$work/parked" "$(cat "$work/parked.pid")" > /dev/null 2>&1
gcore -o "$work/python" "$py" > /dev/null 2>&1
kill $pids 2>/dev/null || true
pids=

echo "host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for core in "$work"/parked.[0-9]* "$work"/python.[0-9]*; do
	echo "== ${core##*/}"
	for engine in auto cfi; do
		i=0
		while [ $i -lt "$repeats" ]; do
			printf 'this: '
			"$build/bench/unwind-cost" "$core" "$engine" "$rounds"
			if [ -n "${BASE:-}" ]; then
				printf 'base: '
				"$BASE/bench/unwind-cost" "$core" "$engine" "$rounds"
			fi
			i=$((i + 1))
		done
	done
done
