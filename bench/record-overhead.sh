#!/bin/sh
# bench/record-overhead.sh - the slowdown a CPU-bound program suffers when
# sampled at 1000 Hz: bench/fixed-work (fixed work, timing itself) run
# alone, under `stackspy record -r 1000`, under bench/pause-floor at 1000
# Hz (the bare ptrace stop, copy and resume: the floor of a ptrace
# sampler) and under `perf record -F 1000 --call-graph dwarf`,
# alternating, ROUNDS times; prints the median wall and CPU time of each
# and the slowdowns against no profiler, and stackspy's achieved rate.
#
#   bench/record-overhead.sh [-n ROUNDS] [-u UNITS] [-b BURNERS] [-s STACKSPY]
#     -n ROUNDS  (default 7)
#     -u UNITS   work per run (default 4000: about 2 s of CPU)
#     -b N       N CPU-bound processes (tests/targets/sleepwork -B) load
#                the host during the runs
#     -s PATH    another build's stackspy, alternated with this one's
#                ("other")
# Run from the top of a built tree.  Goals: stackspy <= 1.5 %, and no
# worse than the floor (issue 10); its slowdown <= 1.05x the floor's
# (issue 36), printed as the ratio of the two median slowdowns of the
# same run, with the hand-off's figures of the last run
# (STACKSPY_DEBUG=1: wake-ups of the unwinder and the tracer's context
# switches per tick).
# On a loaded machine the wall times are mostly scheduling noise: look at
# the spread (min-max) printed too.
set -eu
rounds=7
units=4000
burners=0
other=
while getopts n:u:b:s: opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	u) units=$OPTARG ;;
	b) burners=$OPTARG ;;
	s) other=$OPTARG ;;
	*) echo "usage: $0 [-n ROUNDS] [-u UNITS] [-b BURNERS] [-s STACKSPY]" >&2; exit 64 ;;
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
: >"$tmp/other"
start_burners "$burners"
echo "$burners burners; load average $(cut -d' ' -f1-3 /proc/loadavg)"

i=0
while [ $i -lt "$rounds" ]; do
	"$work" "$units" >>"$tmp/none"
	STACKSPY_DEBUG=1 "$stackspy" record -r 1000 -o "$tmp/out.folded" -- "$work" "$units" \
		>>"$tmp/stackspy" 2>"$tmp/stackspy.err"
	sed -n 's/.* ticks at \([0-9.]*\) Hz.*/\1/p' "$tmp/stackspy.err" >>"$tmp/hz"
	if [ -n "$other" ]; then
		STACKSPY_DEBUG=1 "$other" record -r 1000 -o "$tmp/out.folded" -- "$work" \
			"$units" >>"$tmp/other" 2>"$tmp/other.err"
	fi
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
for mode in stackspy other floor perf; do
	[ -n "$other" ] || [ "$mode" != other ] || continue
	[ -s "$tmp/$mode" ] || { echo "$mode: not run (perf cannot sample here?)"; continue; }
	w=$(median "$tmp/$mode" 2); c=$(median "$tmp/$mode" 4)
	awk -v m="$mode" -v w="$w" -v c="$c" -v bw="$bw" -v bc="$bc" -v sp="$(spread "$tmp/$mode" 2)" 'BEGIN {
		printf "%-9s wall %.3f s (%s)  cpu %.3f s  slowdown: wall %+.1f %%, cpu %+.1f %%\n",
			m, w, sp, c, 100 * (w / bw - 1), 100 * (c / bc - 1)
	}'
done
awk '{ h += $1 } END { if (NR) printf "stackspy achieved %.1f Hz of 1000 asked (mean)\n", h / NR }' "$tmp/hz"
# Slowdown against the floor's, from the medians of this run (goal
# <= 1.05x): a ratio of two small differences, so look at the spreads.
if [ -s "$tmp/floor" ]; then
	for mode in stackspy other; do
		[ -s "$tmp/$mode" ] || continue
		awk -v m="$mode" -v sw="$(median "$tmp/$mode" 2)" -v sc="$(median "$tmp/$mode" 4)" \
			-v fw="$(median "$tmp/floor" 2)" -v fc="$(median "$tmp/floor" 4)" \
			-v bw="$bw" -v bc="$bc" 'BEGIN {
			rw = "n/a (floor <= none)"; rc = rw
			if (fw > bw) rw = sprintf("%.2fx", (sw - bw) / (fw - bw))
			if (fc > bc) rc = sprintf("%.2fx", (sc - bc) / (fc - bc))
			printf "%s slowdown / floor slowdown: wall %s, cpu %s\n", m, rw, rc
		}'
	done
fi
grep -h '^stackspy: debug:' "$tmp/stackspy.err" | sed 's/^/stackspy /' || true
[ -z "$other" ] || grep -h '^stackspy: debug:' "$tmp/other.err" | sed 's/^/other /' || true
echo "($rounds rounds of $units units, alternating; medians; $burners burners;" \
	"load average after $(cut -d' ' -f1-3 /proc/loadavg))"
