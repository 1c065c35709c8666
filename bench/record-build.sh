#!/bin/sh
# bench/record-build.sh - record a `make -j2` build of stackspy's own
# collapse/, ptrace/, arch/ and unwind/ sources (about 40 compilations,
# some 200 processes, each cc1 a new process that maps the same 33 MB
# compiler) with `record --subprocesses --idle`, and report per round:
# the achieved rate against the asked one, the missed ticks, stackspy's
# own CPU time (perf stat --no-inherit: not the build's) and the build's
# wall time, next to the same build not recorded.
#
#   bench/record-build.sh [-r RATE] [-n ROUNDS] [-b BURNERS]
# Run from the top of a built tree.  BUILD=DIR compares another build
# (an older commit's) on the same sources.
set -eu
rate=100
rounds=3
burners=0
while getopts r:n:b: opt; do
	case $opt in
	r) rate=$OPTARG ;;
	n) rounds=$OPTARG ;;
	b) burners=$OPTARG ;;
	*) echo "usage: $0 [-r RATE] [-n ROUNDS] [-b BURNERS]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
need_built stackspy
command -v gcc >/dev/null && command -v make >/dev/null ||
	{ echo "needs gcc and make" >&2; exit 2; }
command -v perf >/dev/null || { echo "needs perf (apt-get install linux-perf)" >&2; exit 2; }
pids=
tmp=$(mktemp -d)
trap cleanup EXIT
mkdir "$tmp/b"
sh "$top/tests/build-makefile.sh" "$top" "$build" >"$tmp/b/Makefile"
unset MAKEFLAGS MFLAGS MAKELEVEL
start_burners "$burners"
now() { date +%s%N; }
echo "stackspy $stackspy, $rate Hz, $burners burners, load $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
while [ $i -lt "$rounds" ]; do
	rm -f "$tmp"/b/*.o
	t0=$(now); make -s -j2 -C "$tmp/b" >/dev/null; t1=$(now)
	plain=$(( (t1 - t0) / 1000000 ))
	rm -f "$tmp"/b/*.o
	t0=$(now)
	perf stat --no-inherit -x, -e task-clock -o "$tmp/stat" -- \
		"$stackspy" record --subprocesses --idle -r "$rate" -o "$tmp/out.folded" \
		-- make -s -j2 -C "$tmp/b" 2>"$tmp/err" >/dev/null
	t1=$(now)
	rec=$(( (t1 - t0) / 1000000 ))
	cpu=$(awk -F, '/task-clock/ { printf "%.0f", $1 }' "$tmp/stat")
	summary=$(grep ' samples in ' "$tmp/err")
	# "N samples in X s: T ticks at A Hz (asked R Hz), M missed; ..."
	achieved=$(echo "$summary" | sed -n 's/.* ticks at \([0-9.]*\) Hz.*/\1/p')
	missed=$(echo "$summary" | sed -n 's/.*), \([0-9]*\) missed.*/\1/p')
	ticks=$(echo "$summary" | sed -n 's/.*: \([0-9]*\) ticks at.*/\1/p')
	procs=$(echo "$summary" | sed -n 's/.* in \([0-9]*\) processes.*/\1/p')
	echo "round $i: build ${plain} ms alone, ${rec} ms recorded; $procs processes;" \
	     "achieved $achieved Hz of $rate ($missed of $((ticks + missed)) ticks missed);" \
	     "stackspy CPU ${cpu} ms"
	i=$((i + 1))
done
