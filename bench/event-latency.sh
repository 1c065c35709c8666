#!/bin/sh
# bench/event-latency.sh - how late a signal to a traced target is handled
# while stackspy reads a large perf map (issue 16, item 7).  A thread of
# tests/targets/events spins in anonymous executable memory, as JIT code
# does; /tmp/perf-PID.map gets LINES entries (default 4 million, about
# 200 MB), so the first on-CPU sample of that thread makes stackspy read
# the whole map.  Meanwhile SIGUSR1 goes to the target every 20 ms and its
# handler prints when it ran: the latency of each signal is handled -
# sent.  Prints the count, the median and the worst.
#
#   bench/event-latency.sh [-l LINES] [-d SECONDS]
# Run from the top of a built tree after `make check` (or
# `make tests/targets/events`); STACKSPY overrides the binary (e.g. an
# older build, for comparison).
set -eu
lines=4000000
secs=4
while getopts l:d: opt; do
	case $opt in
	l) lines=$OPTARG ;;
	d) secs=$OPTARG ;;
	*) echo "usage: $0 [-l LINES] [-d SECONDS]" >&2; exit 64 ;;
	esac
done
build=${BUILD:-.}
spy=${STACKSPY:-$build/stackspy}
events=$build/tests/targets/events
[ -x "$spy" ] && [ -x "$events" ] || { echo "$0: build stackspy and tests/targets/events first" >&2; exit 2; }
tmp=$(mktemp -d)
target=
cleanup() {
	[ -z "$target" ] || kill -KILL "$target" 2>/dev/null || true
	rm -f "/tmp/perf-$target.map"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 99' HUP INT TERM

mkfifo "$tmp/in"
"$events" jit 2 <> "$tmp/in" > "$tmp/out" 2> "$tmp/err" &
target=$!
while ! grep -qx ready "$tmp/out"; do sleep 0.05; done
jit=$(sed -n 's/^jit //p' "$tmp/out")
# LINES entries of 16 bytes below the page, then the page itself.
python3 -c '
import sys
n, jit = int(sys.argv[1]), int(sys.argv[2], 16)
w = sys.stdout.write
base = jit - n * 16
for i in range(n):
    w("%x 10 jit_function_%d\n" % (base + i * 16, i))
w("%x 1000 jit_spin_loop\n" % jit)
' "$lines" "$jit" > "/tmp/perf-$target.map"
echo "perf map: $(wc -c < "/tmp/perf-$target.map") bytes, $lines lines"

"$spy" record -p "$target" -d "$secs" -o "$tmp/rec.folded" 2> "$tmp/rec.err" &
rec=$!
sleep 0.2
: > "$tmp/sent"
n=0
while kill -0 $rec 2>/dev/null; do
	n=$((n + 1))
	echo "$n $(date +%s%N)" >> "$tmp/sent"
	kill -USR1 "$target"
	sleep 0.02
done
wait $rec || true
sleep 0.2
sed "s/^/  /" "$tmp/rec.err"
grep -q jit_spin_loop "$tmp/rec.folded" || echo "warning: the JIT thread was not symbolized from the map"
# A signal sent while another is pending merges with it (SIGUSR1 does not
# queue): the latency of a signal is from its sending to the first
# handler run after it.
awk '$1 == "got" { print $3 }' "$tmp/out" | sort -n > "$tmp/handled"
awk 'NR == FNR { h[++nh] = $1; next }
     { while (k < nh && h[k + 1] < $2) k++
       if (k < nh) print (h[k + 1] - $2) / 1e6 }' \
	"$tmp/handled" "$tmp/sent" | sort -n > "$tmp/lat"
cnt=$(wc -l < "$tmp/lat")
echo "signals: $n sent, $(wc -l < "$tmp/handled") handler runs; latency median $(sed -n "$(( (cnt + 1) / 2 ))p" "$tmp/lat") ms, worst $(tail -n 1 "$tmp/lat") ms"
