#!/bin/sh
# bench/oncpu-busy.sh - on-CPU profiles of a server-like process on a busy
# host: tests/targets/sleepwork (threads loop { sleep 200 us;
# 200 us of CPU in compute_heavy/compute_light, 3:1 }) with BURNERS CPU
# burners (sleepwork -B), recorded by `stackspy record` and by `perf record
# -e cpu-clock:u` over the same seconds.  Prints for both the share of the
# samples in the two compute functions and compute_heavy's share of them
# (the target's own calibration is the truth), then stackspy's achieved
# rate against the asked one, its pause mean/p99 and the samples it
# dropped as not on-CPU (from its summary on stderr).
#
#   bench/oncpu-busy.sh [-b BURNERS] [-d SECONDS] [-r HZ] [-w WORKERS] [-n ROUNDS]
#     defaults: 3 burners, 5 s at 999 Hz, 2 workers, 1 round
# Run from the top of a built tree (make; make tests/targets/sleepwork).
# STACKSPY=path: another build's stackspy on the same workloads.
# Without a usable perf, stackspy alone.  Goal: >= 90 % in the
# compute functions, compute_heavy share within 0.05 of perf's, achieved
# rate >= 0.9 x asked.
set -eu
burners=3
secs=5
rate=999
workers=2
rounds=1
while getopts b:d:r:w:n: opt; do
	case $opt in
	b) burners=$OPTARG ;;
	d) secs=$OPTARG ;;
	r) rate=$OPTARG ;;
	w) workers=$OPTARG ;;
	n) rounds=$OPTARG ;;
	*) echo "usage: $0 [-b BURNERS] [-d SECONDS] [-r HZ] [-w WORKERS] [-n ROUNDS]" >&2
	   exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=${STACKSPY:-$build/stackspy}
sw=$build/tests/targets/sleepwork
perf=${PERF:-perf}
for f in "$stackspy" "$sw"; do
	[ -x "$f" ] || { echo "$0: no $f (make; make tests/targets/sleepwork)" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM

# The target serves stdin: a FIFO held open read-write never ends.
mkfifo "$tmp/in"
"$sw" -w "$workers" <>"$tmp/in" >"$tmp/sw.out" 2>&1 & target=$!
pids="$pids $target"
i=0
while ! grep -qx ready "$tmp/sw.out" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 200 ] || { cat "$tmp/sw.out"; echo "$0: sleepwork not ready" >&2; exit 2; }
	sleep 0.05
done
want=$(sed -n 's/^calibration heavy\/light \([0-9.]*\) .*/\1/p' "$tmp/sw.out")
start_burners "$burners"

perf_ok=no
if command -v "$perf" >/dev/null 2>&1 &&
   "$perf" record -q -e cpu-clock:u -F "$rate" -p "$target" -o "$tmp/probe.data" \
	-- sleep 0.2 >/dev/null 2>&1; then
	perf_ok=yes
fi

# shares FOLDED: "compute% heavy-share samples"
shares()
{
	awk '{
		cnt = $NF; st = substr($0, 1, length($0) - length(cnt) - 1)
		n = split(st, f, ";"); leaf[f[n]] += cnt; t += cnt
	} END {
		h = leaf["compute_heavy"]; l = leaf["compute_light"]
		printf "%.1f %.3f %d\n", t ? 100 * (h + l) / t : 0, h + l ? h / (h + l) : 0, t
	}' "$1"
}

echo "sleepwork (pid $target, $workers workers, heavy/light $want on its CPU clock," \
	"share $(awk -v r="$want" 'BEGIN { printf "%.3f", r / (r + 1) }')), $burners burners," \
	"$secs s at $rate Hz; load average $(cut -d' ' -f1-3 /proc/loadavg)"
k=0
while [ $k -lt "$rounds" ]; do
	if [ $perf_ok = yes ]; then
		"$perf" record -q -e cpu-clock:u -F "$rate" -p "$target" -o "$tmp/perf.data" \
			-- sleep "$secs" >/dev/null 2>&1 &
		perf_pid=$!
	fi
	"$stackspy" record -p "$target" -r "$rate" -d "$secs" -o "$tmp/ss.folded" 2>"$tmp/ss.err"
	set -- $(shares "$tmp/ss.folded")
	echo "  stackspy: $1 % in compute, compute_heavy share $2, $3 samples"
	sed -n 's/^stackspy: [0-9]* samples in \([0-9.]*\) s: \([0-9]*\) ticks at \([0-9.]*\) Hz (asked \([0-9.]*\) Hz), \([0-9]*\) missed.*/\3 \4 \5/p' \
		"$tmp/ss.err" | awk '{ printf "    rate %.1f Hz of %.1f asked (%.2f), %d ticks missed\n", $1, $2, $1 / $2, $3 }'
	sed -n 's/^stackspy: pause per thread-sample: mean \([0-9.]*\) us, p99 \([0-9.]*\) us.*(\([0-9]*\) stopped, \([^)]*\)).*/    pause mean \1 us, p99 \2 us; \3 stopped, \4/p' \
		"$tmp/ss.err"
	if [ $perf_ok = yes ]; then
		wait $perf_pid || true
		"$perf" script -i "$tmp/perf.data" -F ip,sym 2>/dev/null |
			awk 'NF >= 2 { n[$2]++ } END { for (f in n) print f, n[f] }' >"$tmp/perf.folded"
		set -- $(shares "$tmp/perf.folded")
		echo "  perf:     $1 % in compute, compute_heavy share $2, $3 samples"
	else
		echo "  perf: not usable here"
	fi
	k=$((k + 1))
done
