#!/bin/sh
# bench/top-rate.sh - does drawing disturb sampling?  The achieved tick rate
# of `stackspy top` (the UI running in a tmux pane, refreshing every
# --delay) against `stackspy record` at the same rate on the same demo
# workload, alternating runs so that machine load hits both alike.  The
# figures are what each prints in its end-of-run summary ("N ticks at X Hz
# (asked Y Hz)"), plus the mean pause per thread-sample.
#
#   bench/top-rate.sh [-r HZ] [-n ROUNDS] [-d DELAY] [-b BURNERS] [SECONDS]
#     -r HZ      sampling rate (default 99)
#     -b N       N CPU-bound processes (tests/targets/sleepwork -B) load
#                the host during the runs
#     -n ROUNDS  pairs of runs (default 3)
#     -d DELAY   top's refresh period (default 1; 0.1 is the stress case)
#     SECONDS    length of each run (default 10)
# Run from the top of a built tree; needs tmux.
set -eu
rate=99
rounds=3
delay=1
burners=0
while getopts r:n:d:b: opt; do
	case $opt in
	r) rate=$OPTARG ;;
	n) rounds=$OPTARG ;;
	d) delay=$OPTARG ;;
	b) burners=$OPTARG ;;
	*) echo "usage: $0 [-r HZ] [-n ROUNDS] [-d DELAY] [-b BURNERS] [SECONDS]" >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
secs=${1:-10}
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
demo=$build/demo/stackspy-demo
[ -x "$stackspy" ] && [ -x "$demo" ] || { echo "build first (./bootstrap)" >&2; exit 2; }
command -v tmux >/dev/null || { echo "needs tmux" >&2; exit 2; }
tmp=$(mktemp -d)
sock=top-rate-$$
export TMUX_TMPDIR="$tmp"
export LC_ALL=C.UTF-8
"$demo" --seconds $((rounds * secs * 3 + 60)) 2>/dev/null &
demo_pid=$!
pids=$demo_pid
# (set -e applies inside the trap too: nothing in it may fail.)
trap 'for p in $pids; do kill $p 2>/dev/null || true; done; tmux -L $sock kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
start_burners "$burners"
sleep 1

# hz FILE: "X Y" = achieved Hz, mean pause us, from a summary.
hz()
{
	sed -n 's/.* ticks at \([0-9.]*\) Hz.*/\1/p' "$1" | head -n 1 | tr '\n' ' '
	sed -n 's/.*pause per thread-sample: mean \([0-9.]*\) us.*/\1/p' "$1" | head -n 1
}

iters=$(awk -v s="$secs" -v d="$delay" 'BEGIN { printf "%d", s / d }')
echo "demo pid $demo_pid; $rounds rounds of ${secs}s at $rate Hz; top refreshes every ${delay}s;" \
	"$burners burners, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "round  record Hz  pause us   top Hz  pause us"
i=1
while [ $i -le "$rounds" ]; do
	"$stackspy" record -p $demo_pid -r "$rate" -d "$secs" -o "$tmp/folded" 2> "$tmp/rec.err"
	tmux -L $sock -f /dev/null new-session -d -x 120 -y 40 \
		"'$stackspy' top -p $demo_pid -r $rate --delay $delay --iterations $iters 2> '$tmp/top.err'; touch '$tmp/top.done'"
	while [ ! -e "$tmp/top.done" ]; do sleep 0.2; done
	rm -f "$tmp/top.done"
	tmux -L $sock kill-server 2>/dev/null || true
	set -- $(hz "$tmp/rec.err") $(hz "$tmp/top.err")
	printf '%5d  %9s  %8s  %7s  %8s\n' $i "$1" "$2" "$3" "$4"
	echo "$1 $3" >> "$tmp/pairs"
	i=$((i + 1))
done
awk '{ r += $1; t += $2 } END { printf "mean: record %.1f Hz, top %.1f Hz: top/record = %.3f\n", r / NR, t / NR, t / r }' "$tmp/pairs"
