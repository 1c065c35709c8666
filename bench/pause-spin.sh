#!/bin/sh
# bench/pause-spin.sh - the wait for a stop: bench/pause-floor blocking in
# waitpid against spinning on waitpid(WNOHANG) for up to SPIN us first
# on one busy thread (tests/targets/sleepwork -B) at 1000 Hz,
# alternating ROUNDS times so that both see the same machine.  Prints each
# run's mean and p99, the averages and spin/block ratios; with -b, the
# same with N more CPU burners running.  On a shared machine compare the
# ratios within one run only.
#
#   bench/pause-spin.sh [-n ROUNDS] [-d SECONDS] [-r HZ] [-s SPIN_US] [-b BURNERS]
#     defaults: 5 rounds of 2 s at 1000 Hz, spin 200 us, no burners
#   FLOOR_OPTS=--no-boost: both without SCHED_FIFO during the stop.
# Run from the top of a built tree (make; make tests/targets/sleepwork).
set -eu
rounds=5
secs=2
rate=1000
spin=200
burners=0
while getopts n:d:r:s:b: opt; do
	case $opt in
	n) rounds=$OPTARG ;;
	d) secs=$OPTARG ;;
	r) rate=$OPTARG ;;
	s) spin=$OPTARG ;;
	b) burners=$OPTARG ;;
	*) echo "usage: $0 [-n ROUNDS] [-d SECONDS] [-r HZ] [-s SPIN_US] [-b BURNERS]" >&2
	   exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
floor=$build/bench/pause-floor
sw=$build/tests/targets/sleepwork
for f in "$floor" "$sw"; do
	[ -x "$f" ] || { echo "$0: no $f (make; make tests/targets/sleepwork)" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM

"$sw" -B & target=$!
pids="$pids $target"
start_burners "$burners"
echo "one busy thread (pid $target), $burners burners, $rounds x $secs s at $rate Hz;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg)"
floor_run()
{
	"$floor" -p "$target" -r "$rate" -d "$secs" $FLOOR_OPTS "$@" |
		sed -n 's/.*mean \([0-9.]*\) us, p50 [0-9.]* us, p99 \([0-9.]*\) us.*/\1 \2/p'
}
i=0
while [ $i -lt "$rounds" ]; do
	echo "$(floor_run) $(floor_run --spin "$spin")" >>"$tmp/runs"
	i=$((i + 1))
done
awk -v spin="$spin" '{
	printf "  block mean %7.1f us p99 %8.1f us | spin %s mean %7.1f us p99 %8.1f us | spin/block %.2f %.2f\n",
		$1, $2, spin, $3, $4, $3 / $1, $4 / $2
	bm += $1; bp += $2; sm += $3; sp += $4
} END {
	printf "  average: block mean %.1f p99 %.1f, spin mean %.1f p99 %.1f: spin/block %.2f (mean), %.2f (p99)\n",
		bm / NR, bp / NR, sm / NR, sp / NR, sm / bm, sp / bp
}' "$tmp/runs"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
