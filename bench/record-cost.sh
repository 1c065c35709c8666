#!/bin/sh
# bench/record-cost.sh - what `stackspy record` costs the machine it runs on:
# tracer CPU per sample (stop + copy + unwind + symbols + aggregation:
# stackspy's own utime+stime over the samples it took) and its peak memory
# (max RSS), recording the demo workload (two CPU-bound workers, four
# sleeping threads) for SECONDS.
#
#   bench/record-cost.sh [-r HZ] [-t TARGET] [SECONDS]
#     SECONDS  how long to record (default 10: a smoke run; 600 for the
#              10-minute figure)
#     -r HZ    sampling rate (default 99, stackspy's default)
#     -t demo|ratio  the workload (default demo)
# Run from the top of a built tree (needs ./stackspy, demo/stackspy-demo,
# tests/targets/ratio for -t ratio: `make check TESTS=` builds it).
set -eu
rate=99
target=demo
while getopts r:t: opt; do
	case $opt in
	r) rate=$OPTARG ;;
	t) target=$OPTARG ;;
	*) echo "usage: $0 [-r HZ] [-t demo|ratio] [SECONDS]" >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
secs=${1:-10}
top=$(cd "$(dirname "$0")/.." && pwd)
# The build tree: $BUILD, else the current folder when it holds a built
# stackspy (an out-of-tree build), else the source tree.
if [ -n "${BUILD-}" ]; then
	build=$BUILD
elif [ -x ./stackspy ]; then
	build=$(pwd)
else
	build=$top
fi
stackspy=$build/stackspy
[ -x "$stackspy" ] || { echo "build first (./bootstrap)" >&2; exit 2; }
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

case $target in
demo)
	"$build/demo/stackspy-demo" --daemon --seconds $((secs + 60)) >"$tmp/pid"
	pid=$(head -n1 "$tmp/pid")
	;;
ratio)
	[ -x "$build/tests/targets/ratio" ] || { echo "no tests/targets/ratio" >&2; exit 2; }
	"$build/tests/targets/ratio" -w 2 -s $((secs + 60)) </dev/null >"$tmp/ratio.out" &
	pid=$!
	while ! grep -qx ready "$tmp/ratio.out"; do sleep 0.05; done
	;;
*) echo "$0: unknown target $target" >&2; exit 64 ;;
esac

# The rusage of stackspy itself, from wait4 (not of its children: in -p
# mode it has none).
python3 - "$stackspy" record -p "$pid" -r "$rate" -d "$secs" -o "$tmp/out.folded" \
	>"$tmp/rusage" 2>"$tmp/err" <<'EOF'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:])
_, st, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(st), ru.ru_utime, ru.ru_stime, ru.ru_maxrss)
EOF
read -r rc ut st maxrss <"$tmp/rusage"
[ "$rc" = 0 ] || { cat "$tmp/err"; echo "stackspy exited $rc" >&2; exit 1; }
sed 's/^/  /' "$tmp/err"
samples=$(sed -n 's/^stackspy: \([0-9]*\) samples in.*/\1/p' "$tmp/err")
stopped=$(sed -n 's/.*(\([0-9]*\) stopped.*/\1/p' "$tmp/err")
lines=$(wc -l <"$tmp/out.folded")
awk -v s="$secs" -v r="$rate" -v ut="$ut" -v st="$st" -v n="$samples" \
    -v stp="$stopped" -v rss="$maxrss" -v l="$lines" -v t="$target" 'BEGIN {
	printf "record %s s at %s Hz on %s: %d samples (%d stopped), %d distinct stacks\n", s, r, t, n, stp, l
	printf "tracer CPU: user %.2f s + sys %.2f s = %.1f%% of one CPU\n", ut, st, 100 * (ut + st) / s
	if (n > 0)
		printf "tracer CPU per sample: %.1f us (user %.1f + sys %.1f)\n", 1e6 * (ut + st) / n, 1e6 * ut / n, 1e6 * st / n
	printf "peak RSS: %.1f MiB\n", rss / 1024
}'
