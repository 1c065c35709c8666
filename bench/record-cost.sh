#!/bin/sh
# bench/record-cost.sh - what `stackspy record` costs the machine it runs on:
# tracer CPU per sample (stop + copy + unwind + symbols + aggregation:
# stackspy's own utime+stime over the samples it took) and its peak memory
# (max RSS), recording a workload for SECONDS.
#
# CPU time per sample moves with the load of a shared host (a thread that
# waits for a CPU is stopped and then not counted, so the same ticks cost
# more per counted sample; context switches cost more), so the figures that
# do not depend on it are printed too, from `perf stat` when it works
# here: system calls and context switches of the tracer per tick, per stop
# and per counted sample.  Compare those between builds, and CPU times only
# within one run of alternating builds.
#
#   bench/record-cost.sh [-r HZ] [-t TARGET] [-b BURNERS] [SECONDS]
#     SECONDS  how long to record (default 10: a smoke run; 600 for the
#              10-minute figure)
#     -r HZ    sampling rate (default 99, stackspy's default)
#     -t demo|ratio  the workload (default demo: two CPU-bound workers,
#              four sleeping threads; ratio: two CPU-bound workers)
#     -b N     N more CPU-bound processes loading the host
#              (tests/targets/sleepwork -B) while recording
#   STACKSPY=path: another build's stackspy on the same workloads.
# Then bench/pause-floor samples the same workload as long at the same
# rate (the bare stop, copy and resume of each running thread, nothing
# else): its CPU per thread-sample is the floor of a ptrace sampler on
# this host at this load, and stackspy's per stop is printed against it.
# Run from the top of a built tree (needs ./stackspy, demo/stackspy-demo,
# tests/targets/ratio for -t ratio, tests/targets/sleepwork for -b:
# `make check TESTS=` builds them).
set -eu
rate=99
target=demo
burners=0
while getopts r:t:b: opt; do
	case $opt in
	r) rate=$OPTARG ;;
	t) target=$OPTARG ;;
	b) burners=$OPTARG ;;
	*) echo "usage: $0 [-r HZ] [-t demo|ratio] [-b BURNERS] [SECONDS]" >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
secs=${1:-10}
. "$(dirname "$0")/lib.sh"
stackspy=${STACKSPY:-$build/stackspy}
need_built stackspy
tmp=$(mktemp -d)
pids=
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

start_burners "$burners"

case $target in
demo)
	"$build/demo/stackspy-demo" --daemon --seconds $((secs + 60)) >"$tmp/pid"
	pid=$(head -n1 "$tmp/pid")
	pids="$pids $pid"
	;;
ratio)
	[ -x "$build/tests/targets/ratio" ] || { echo "no tests/targets/ratio" >&2; exit 2; }
	: >"$tmp/ratio.out"
	"$build/tests/targets/ratio" -w 2 -s $((secs + 60)) </dev/null >"$tmp/ratio.out" &
	pid=$!
	pids="$pids $pid"
	while ! grep -qx ready "$tmp/ratio.out"; do sleep 0.05; done
	;;
*) echo "$0: unknown target $target" >&2; exit 64 ;;
esac

# perf stat counts stackspy's system calls and context switches (software
# events: no hardware counters needed) when it can.
counting=
if command -v perf >/dev/null 2>&1 &&
   perf stat -x, -e raw_syscalls:sys_enter,context-switches -o /dev/null -- true 2>/dev/null; then
	counting="perf stat -x, -e raw_syscalls:sys_enter,context-switches -o $tmp/counts --"
fi

# The rusage of what runs under wait4: stackspy (and perf stat, which
# costs next to nothing while it only counts), not the target.
load0=$(cut -d' ' -f1 /proc/loadavg)
python3 - $counting "$stackspy" record -p "$pid" -r "$rate" -d "$secs" -o "$tmp/out.folded" \
	>"$tmp/rusage" 2>"$tmp/err" <<'EOF2'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:])
_, st, ru = os.wait4(p.pid, 0)
print(os.waitstatus_to_exitcode(st), ru.ru_utime, ru.ru_stime, ru.ru_maxrss)
EOF2
read -r rc ut st maxrss <"$tmp/rusage"
[ "$rc" = 0 ] || { cat "$tmp/err"; echo "stackspy exited $rc" >&2; exit 1; }
sed 's/^/  /' "$tmp/err"
samples=$(sed -n 's/^stackspy: \([0-9]*\) samples in.*/\1/p' "$tmp/err")
ticks=$(sed -n 's/.* \([0-9]*\) ticks at .*/\1/p' "$tmp/err")
stopped=$(sed -n 's/.*(\([0-9]*\) stopped.*/\1/p' "$tmp/err")
lines=$(wc -l <"$tmp/out.folded")
sys=0 cs=0
if [ -n "$counting" ] && [ -s "$tmp/counts" ]; then
	sys=$(awk -F, '$3 == "raw_syscalls:sys_enter" { print $1 }' "$tmp/counts")
	cs=$(awk -F, '$3 == "context-switches" { print $1 }' "$tmp/counts")
fi
awk -v s="$secs" -v r="$rate" -v ut="$ut" -v st="$st" -v n="$samples" -v tk="$ticks" \
    -v stp="$stopped" -v rss="$maxrss" -v l="$lines" -v t="$target" -v b="$burners" \
    -v sc="${sys:-0}" -v cs="${cs:-0}" -v l0="$load0" -v l1="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	printf "record %s s at %s Hz on %s, %d burners, load %s-%s: %d samples (%d stopped, %d ticks), %d distinct stacks\n",
		s, r, t, b, l0, l1, n, stp, tk, l
	printf "tracer CPU: user %.2f s + sys %.2f s = %.1f%% of one CPU\n", ut, st, 100 * (ut + st) / s
	if (n > 0)
		printf "tracer CPU per sample: %.1f us (user %.1f + sys %.1f); per stop %.1f us; per tick %.1f us\n",
			1e6 * (ut + st) / n, 1e6 * ut / n, 1e6 * st / n,
			stp ? 1e6 * (ut + st) / stp : 0, tk ? 1e6 * (ut + st) / tk : 0
	if (sc > 0 && tk > 0)
		printf "system calls: %.1f per tick, %.1f per stop, %.1f per sample; context switches: %.2f per tick, %.2f per sample\n",
			sc / tk, stp ? sc / stp : 0, n ? sc / n : 0, cs / tk, n ? cs / n : 0
	printf "peak RSS: %.1f MiB\n", rss / 1024
}'
floor=$build/bench/pause-floor
if [ -x "$floor" ] && "$floor" -p "$pid" -r "$rate" -d "$secs" >"$tmp/floor" 2>&1; then
	sed 's/^/  /' "$tmp/floor"
	fcpu=$(sed -n 's/^floor cpu: \([0-9.]*\) us per thread-sample.*/\1/p' "$tmp/floor")
	awk -v ut="$ut" -v st="$st" -v stp="$stopped" -v f="$fcpu" 'BEGIN {
		if (stp > 0 && f > 0)
			printf "stackspy CPU per stop / floor CPU per thread-sample: %.1f / %.1f us = %.2f\n",
				1e6 * (ut + st) / stp, f, 1e6 * (ut + st) / stp / f
	}'
fi
