#!/bin/sh
# bench/record-overhead.sh - the slowdown a CPU-bound program suffers when
# sampled at 1000 Hz: bench/fixed-work (fixed work, timing itself) run
# alone, under `stackspy record -r 1000`, under bench/pause-floor at 1000
# Hz (the bare ptrace stop, copy and resume: the floor of a ptrace
# sampler) and under `perf record -F 1000 --call-graph dwarf`,
# alternating, ROUNDS times; prints the median wall and CPU time of each
# and the slowdowns against no profiler, and stackspy's achieved rate.
#
#   bench/record-overhead.sh [-n ROUNDS] [-u UNITS] [-b BURNERS]
#     -n ROUNDS  (default 7)
#     -u UNITS   work per run (default 4000: about 2 s of CPU)
#     -b N       N CPU-bound processes (tests/targets/sleepwork -B) load
#                the host during the runs
# Run from the top of a built tree.  Goals: stackspy <= 1.5 %, and no
# worse than the floor (issue 10).
# On a loaded machine the wall times are mostly scheduling noise: look at
# the spread (min-max) printed too.
set -eu
rounds=7
units=4000
burners=0
while getopts n:u:b: opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	u) units=$OPTARG ;;
	b) burners=$OPTARG ;;
	*) echo "usage: $0 [-n ROUNDS] [-u UNITS] [-b BURNERS]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
work=$build/bench/fixed-work
[ -x "$stackspy" ] && [ -x "$work" ] || { echo "build first (make)" >&2; exit 2; }
have_perf=0
if command -v perf >/dev/null 2>&1 &&
   perf record -F 1000 --call-graph dwarf -o /dev/null -- true >/dev/null 2>&1; then
	have_perf=1
fi
floor=$build/bench/pause-floor
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM
: >"$tmp/none"; : >"$tmp/stackspy"; : >"$tmp/floor"; : >"$tmp/perf"; : >"$tmp/hz"
start_burners "$burners"
echo "$burners burners; load average $(cut -d' ' -f1-3 /proc/loadavg)"

i=0
while [ $i -lt "$rounds" ]; do
	"$work" "$units" >>"$tmp/none"
	"$stackspy" record -r 1000 -o "$tmp/out.folded" -- "$work" "$units" \
		>>"$tmp/stackspy" 2>"$tmp/stackspy.err"
	sed -n 's/.* ticks at \([0-9.]*\) Hz.*/\1/p' "$tmp/stackspy.err" >>"$tmp/hz"
	if [ -x "$floor" ]; then
		# The floor attaches once the work runs (a few ms of it
		# unsampled) and ends when it exits.
		"$work" "$units" >>"$tmp/floor" &
		wpid=$!
		"$floor" -p $wpid -r 1000 -d 3600 >"$tmp/floor.out" 2>&1 || true
		wait $wpid
	fi
	if [ $have_perf = 1 ]; then
		perf record -q -F 1000 --call-graph dwarf -o "$tmp/perf.data" -- \
			"$work" "$units" >>"$tmp/perf" 2>/dev/null
	fi
	i=$((i + 1))
done
echo "last stackspy summary:"
sed 's/^/  /' "$tmp/stackspy.err"

# median FILE FIELD: the median of field FIELD (2: wall, 4: cpu).
median() { awk -v f="$2" '{ print $f }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { awk -v f="$2" '{ print $f }' "$1" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f-%.3f", lo, hi }'; }

bw=$(median "$tmp/none" 2); bc=$(median "$tmp/none" 4)
printf "%-9s wall %.3f s (%s)  cpu %.3f s\n" "none" "$bw" "$(spread "$tmp/none" 2)" "$bc"
for mode in stackspy floor perf; do
	[ -s "$tmp/$mode" ] || { echo "$mode: not run (perf cannot sample here?)"; continue; }
	w=$(median "$tmp/$mode" 2); c=$(median "$tmp/$mode" 4)
	awk -v m="$mode" -v w="$w" -v c="$c" -v bw="$bw" -v bc="$bc" -v sp="$(spread "$tmp/$mode" 2)" 'BEGIN {
		printf "%-9s wall %.3f s (%s)  cpu %.3f s  slowdown: wall %+.1f %%, cpu %+.1f %%\n",
			m, w, sp, c, 100 * (w / bw - 1), 100 * (c / bc - 1)
	}'
done
awk '{ h += $1 } END { if (NR) printf "stackspy achieved %.1f Hz of 1000 asked (mean)\n", h / NR }' "$tmp/hz"
echo "($rounds rounds of $units units, alternating; medians; $burners burners;" \
	"load average after $(cut -d' ' -f1-3 /proc/loadavg))"
