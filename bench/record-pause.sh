#!/bin/sh
# bench/record-pause.sh - how long `stackspy record` stops a thread per
# sample, next to the floor: bench/pause-floor doing only INTERRUPT +
# waitpid + GETREGSET + one stack copy + CONT on the same target at the
# same rate.  Alternating, ROUNDS times, on tests/targets/ratio (one
# CPU-bound worker), on the demo (two CPU-bound workers) and on
# bench/parked -B 1 -n 200 -w 10 (one CPU-bound thread looked at first,
# then 200 that wake every 10 ms, each looked at every tick: a thread
# interrupted as soon as it is seen running must not wait in its stop
# for the looks at the 200).  Prints each
# run's mean and p99 and the ratio of stackspy's to the floor's, and the
# rate each achieved (ticks per second; stackspy's against the one asked).
#
#   bench/record-pause.sh [-n ROUNDS] [-d SECONDS] [-r HZ] [-b BURNERS]
#     defaults: 3 rounds of 3 s at 1000 Hz
#     -b N  N CPU-bound processes (tests/targets/sleepwork -B) load the
#           host during the runs: the busy-host figures
# STACKSPY=path: another build's stackspy on the same workloads.
# Run from the top of a built tree after `make check` (tests/targets/ratio)
# or `make tests/targets/ratio tests/targets/sleepwork`.  Goal (issue 10):
# stackspy's mean <= 1.0 x the floor's.
set -eu
rounds=3
secs=3
rate=1000
burners=0
while getopts n:d:r:b: opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) secs=$OPTARG ;;
	r) rate=$OPTARG ;;
	b) burners=$OPTARG ;;
	*) echo "usage: $0 [-n ROUNDS] [-d SECONDS] [-r HZ] [-b BURNERS]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=${STACKSPY:-$build/stackspy}
floor=$build/bench/pause-floor
parked=$build/bench/parked
ratio=$build/tests/targets/ratio
demo=$build/demo/stackspy-demo
for f in "$stackspy" "$floor" "$ratio" "$demo" "$parked"; do
	[ -x "$f" ] || { echo "$0: no $f (make; make tests/targets/ratio)" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM
start_burners "$burners"
echo "$burners burners; load average $(cut -d' ' -f1-3 /proc/loadavg)"

measure()
{
	name=$1 pid=$2
	: >"$tmp/$name.floor"; : >"$tmp/$name.ss"
	i=0
	while [ $i -lt "$rounds" ]; do
		"$floor" -p "$pid" -r "$rate" -d "$secs" >"$tmp/floor"
		# mean p99 Hz p50
		echo "$(sed -n 's/.*mean \([0-9.]*\) us, p50 [0-9.]* us, p99 \([0-9.]*\) us.*/\1 \2/p' "$tmp/floor")" \
		     "$(sed -n 's/^floor cpu: .*, \([0-9.]*\) Hz)$/\1/p' "$tmp/floor")" \
		     "$(sed -n 's/.*, p50 \([0-9.]*\) us, p99.*/\1/p' "$tmp/floor")" >>"$tmp/$name.floor"
		"$stackspy" record -p "$pid" -r "$rate" -d "$secs" -o /dev/null 2>"$tmp/err"
		echo "$(sed -n 's/.*pause per thread-sample: mean \([0-9.]*\) us, p99 \([0-9.]*\) us.*/\1 \2/p' "$tmp/err")" \
		     "$(sed -n 's/.* ticks at \([0-9.]*\) Hz.*/\1/p' "$tmp/err")" >>"$tmp/$name.ss"
		i=$((i + 1))
	done
	echo "$name (pid $pid), $rounds x $secs s at $rate Hz, $burners burners:"
	paste "$tmp/$name.floor" "$tmp/$name.ss" | awk -v r="$rate" '{
		printf "  floor mean %7.1f us p50 %6.1f us p99 %8.1f us %6.1f Hz | stackspy mean %7.1f us p99 %8.1f us %6.1f Hz | ratio mean %.2f p99 %.2f\n",
			$1, $4, $2, $3, $5, $6, $7, $5 / $1, $6 / $2
		fm += $1; fp += $2; fh += $3; f50 += $4; sm += $5; sp += $6; sh += $7
	} END {
		printf "  average: floor mean %.1f p99 %.1f, stackspy mean %.1f p99 %.1f: stackspy/floor %.2f (mean), %.2f (p99)\n",
			fm / NR, fp / NR, sm / NR, sp / NR, sm / fm, sp / fp
		# The floor waits for every R thread however long it waits for
		# a CPU; stackspy gives up after its deadline and samples the
		# late stop apart.  On a busy host the floor mean is that wait,
		# and its median is the stop of a thread that was on a CPU.
		printf "  stackspy mean / floor p50: %.1f / %.1f us = %.2f\n", sm / NR, f50 / NR, sm / f50
		printf "  achieved rate: floor %.1f Hz, stackspy %.1f Hz = %.2f of %s Hz asked\n",
			fh / NR, sh / NR, sh / NR / r, r
	}'
}

: >"$tmp/ratio.out"
"$ratio" -s 3600 </dev/null >"$tmp/ratio.out" &
rpid=$!
pids="$pids $rpid"
while ! grep -qx ready "$tmp/ratio.out"; do sleep 0.05; done
measure ratio "$rpid"
# Gone before the demo: its worker was a third CPU-bound thread on a
# two-CPU host, and the demo (--daemon: setsid, its own autogroup, which
# shares the CPUs with this script's group as one entity) got about one
# CPU for its two workers, each waiting for it half of the time.
# stackspy gives up on a thread after its deadline and times the late
# stop from when it comes; the floor waits for each thread in turn and
# times it from the interrupt: its mean was the scheduler's slice (3.9
# ms, 127 Hz achieved of 1000, load 0.6).  On a host loaded by other
# sessions the demo's workers still wait so (sched_autogroup_enabled):
# compare with the floor's p50 there, or on the ratio target.
kill "$rpid"
wait "$rpid" 2>/dev/null || :

dpid=$("$demo" --daemon --seconds 3600)
pids="$pids $dpid"
sleep 0.5
measure demo "$dpid"
kill "$dpid"

# parked exits when its stdin, this fifo, closes.
mkfifo "$tmp/in"
"$parked" -B 1 -n 200 -w 10 <"$tmp/in" >"$tmp/parked.pid" &
ppid=$!
pids="$pids $ppid"
exec 3>"$tmp/in"
while [ ! -s "$tmp/parked.pid" ]; do sleep 0.05; done
measure looks "$(head -n1 "$tmp/parked.pid")"
exec 3>&-
