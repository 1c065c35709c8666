#!/bin/sh
# bench/python-pause.sh - what reading CPython's frames in each stop costs
# (issue 38: the pause per thread-sample with Python frames at most 1.5x
# the pause without; the rate held at 99 Hz with 100 Python threads).
# Debian's python3.11 runs N threads, each D pure-Python calls deep, busy
# at the leaf (mode busy) or sleeping 10 ms at a time there (mode sleep);
# record --python=off and --python=on take turns (-k rounds each, same
# target, same minutes), on-CPU (busy) or --idle (sleep), and the mean
# pause of each turn, the ticks done against those asked and the share of
# samples whose stack holds the leaf's Python frame are printed; then the
# ratio of the mean pauses (on / off) over all rounds.
#
#   bench/python-pause.sh [-n THREADS] [-D DEPTH] [-m busy|sleep] [-d SECONDS]
#                         [-k ROUNDS] [-B BURNERS]
# Run from the top of a built tree.
set -eu
n=1
depth=20
mode=busy
secs=3
rounds=3
burners=0
while getopts n:D:m:d:k:B: opt; do
	case $opt in
	n) n=$OPTARG ;;
	D) depth=$OPTARG ;;
	m) mode=$OPTARG ;;
	d) secs=$OPTARG ;;
	k) rounds=$OPTARG ;;
	B) burners=$OPTARG ;;
	*) echo "usage: $0 [-n THREADS] [-D DEPTH] [-m busy|sleep] [-d SECONDS] [-k ROUNDS] [-B BURNERS]" >&2
	   exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
py=/usr/bin/python3.11
[ -x "$py" ] || { echo "$0: no $py" >&2; exit 2; }
stackspy=$build/stackspy
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM
start_burners "$burners"

cat > "$tmp/target.py" <<'PY'
import sys, threading, time
n, depth, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def leaf():
    if mode == "sleep":
        while True:
            time.sleep(0.01)
    x = 0
    while True:
        x += 1
def chain(k):
    if k == 0:
        leaf()
    chain(k - 1)
for _ in range(n):
    threading.Thread(target=chain, args=(depth,), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
PY
"$py" "$tmp/target.py" "$n" "$depth" "$mode" > "$tmp/target.out" &
pid=$!
pids="$pids $pid"
i=0
until grep -q ready "$tmp/target.out"; do
	i=$((i + 1)); [ $i -lt 600 ] || { echo "$0: target not ready" >&2; exit 1; }
	sleep 0.05
done
sleep 0.5
idle=
[ "$mode" = sleep ] && idle=--idle

printf '%-6s %5s %10s %9s %8s %8s\n' python round pause-us p99-us rate leaf%
r=1
while [ $r -le "$rounds" ]; do
	for m in off on; do
		"$stackspy" record -p "$pid" -d "$secs" $idle --python=$m -o "$tmp/p.folded" \
			2> "$tmp/err" || { cat "$tmp/err"; exit 1; }
		awk -v m=$m -v r=$r -v f="$tmp/p.folded" '
			/pause per thread-sample/ {
				for (i = 1; i <= NF; i++) {
					if ($i == "mean") mean = $(i + 1)
					if ($i == "p99") p99 = $(i + 1)
				}
			}
			/ticks at/ {
				for (i = 1; i <= NF; i++) {
					if ($i == "ticks") ticks = $(i - 1)
					if ($i == "(asked") asked = $(i + 1)
					if ($i == "at" && $(i + 2) == "Hz") hz = $(i + 1)
				}
			}
			END {
				leaf = 0; all = 0
				while ((getline line < f) > 0) {
					c = line; sub(/.* /, "", c)
					all += c
					if (line ~ /leaf \(/) leaf += c
				}
				printf "%-6s %5d %10s %9s %8s %7.1f%%\n", m, r, mean, p99, hz "/" asked,
					all ? 100 * leaf / all : 0
				print m, mean > "/dev/stderr"
			}' "$tmp/err" 2>> "$tmp/means"
	done
	r=$((r + 1))
done
awk '{ s[$1] += $2; k[$1]++ }
     END { printf "mean pause on/off: %.2f (%.1f us / %.1f us, %d rounds)\n",
		 (s["on"] / k["on"]) / (s["off"] / k["off"]), s["on"] / k["on"],
		 s["off"] / k["off"], k["on"] }' "$tmp/means"
