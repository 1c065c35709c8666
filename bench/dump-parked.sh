#!/bin/sh
# bench/dump-parked.sh - dump a process with N parked threads (default 1000)
# with stackspy, the serial floor (bench/parked --floor: seize, interrupt,
# wait, registers, one 16 KiB copy, detach per thread and nothing else),
# eu-stack and gdb, on the same process, alternating, and report wall
# times, stackspy's ratio to the floor (issue 36's goal: <= 1.1) and how
# long each thread was stopped by stackspy (<= 1.5x the floor's time per
# thread), with the phases of stackspy's dumps (STACKSPY_DEBUG) and the
# floor's calls pipelined (bench/parked --floor-ahead: what is left of the
# floor for the rest of a dump).  The machine may be shared: the ratio
# is also given as the median of each round's own ratio (the floor and
# stackspy run back to back, in alternating order), and the load average
# before and after.
#
#   bench/dump-parked.sh [-n THREADS] [-r ROUNDS] [-B BURNERS] [-G]
#   -B: that many CPU-bound processes load the host meanwhile (default 0);
#   -G: no gdb
# Run from the top of a built tree (needs ./stackspy and bench/parked).
# STACKSPY=path: another build's stackspy.
set -eu
n=1000
rounds=5
use_gdb=1
burners=0
while getopts n:r:B:G opt; do
	case $opt in
	n) n=$OPTARG ;;
	r) rounds=$OPTARG ;;
	B) burners=$OPTARG ;;
	G) use_gdb=0 ;;
	*) echo "usage: $0 [-n THREADS] [-r ROUNDS] [-B BURNERS] [-G]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=${STACKSPY:-$build/stackspy}
parked=$build/bench/parked
need_built stackspy bench/parked
tmp=$(mktemp -d)
fifo=$tmp/in
mkfifo "$fifo"
# parked exits when its stdin closes: keep the fifo open from this shell.
"$parked" -n "$n" <"$fifo" >"$tmp/pid" &
exec 3>"$fifo"
pids=
trap 'exec 3>&-; cleanup; wait 2>/dev/null' EXIT
while [ ! -s "$tmp/pid" ]; do sleep 0.1; done
pid=$(head -n1 "$tmp/pid")
# After the threads are parked: the burners load the dumps, not the start.
start_burners "$burners"

now() { date +%s%N; }
have_eu=0
command -v eu-stack >/dev/null 2>&1 && have_eu=1
have_gdb=0
[ $use_gdb = 1 ] && command -v gdb >/dev/null 2>&1 && have_gdb=1

: >"$tmp/ss" ; : >"$tmp/eu" ; : >"$tmp/fl" ; : >"$tmp/fa" ; : >"$tmp/gdb"
run_floor() {
	t0=$(now); "$parked" --floor "$pid" >/dev/null; t1=$(now)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/fl"
	# The same calls pipelined (the next thread interrupted before each
	# copy): what a tracer's ptrace calls cost at best, so what the
	# floor leaves for everything else a dump does.
	t0=$(now); "$parked" --floor-ahead "$pid" >/dev/null; t1=$(now)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/fa"
}
run_stackspy() {
	rc=0
	t0=$(now)
	STACKSPY_DEBUG=1 "$stackspy" dump -f json "$pid" >"$tmp/out.json" 2>"$tmp/err" || rc=$?
	t1=$(now)
	# Where its time went (a build without the figures prints none).
	grep '^stackspy: debug: ' "$tmp/err" >>"$tmp/phases" || true
	grep -v '^stackspy: debug: ' "$tmp/err" >&2 || true
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/ss"
	# 1 is a partial dump (a thread did not stop in time: a loaded host);
	# said, and counted: its time stays in the figures.
	[ $rc = 0 ] || echo "round $i: stackspy dump exited with $rc" >&2
	[ $rc -le 1 ] || exit 2
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# One of each first, not counted: the first look at /proc/PID/task and
# the first copies of 1,000 stacks are the cold ones, whoever runs them.
"$parked" --floor "$pid" >/dev/null
"$stackspy" dump -f json "$pid" >/dev/null || [ $? = 1 ]
: >"$tmp/phases"
i=0
while [ $i -lt "$rounds" ]; do
	# Alternating order: neither always runs on a cache the other warmed.
	if [ $((i % 2)) = 0 ]; then
		run_floor; run_stackspy
	else
		run_stackspy; run_floor
	fi
	i=$((i + 1))
done
# The others after all the rounds, not between them: a round that ran
# right after eu-stack (which stops and wakes every thread with SIGSTOP)
# was 20-30% slower for stackspy than one that ran after the floor.
i=0
while [ $have_eu = 1 ] && [ $i -lt "$rounds" ]; do
	t0=$(now); eu-stack -p "$pid" >/dev/null 2>&1 || true; t1=$(now)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/eu"
	i=$((i + 1))
done
# gdb is slow (seconds): once.
if [ $have_gdb = 1 ]; then
	t0=$(now)
	gdb -p "$pid" -batch -nx -ex 'thread apply all bt' >/dev/null 2>&1 || true
	t1=$(now)
	echo $(( (t1 - t0) / 1000 )) >>"$tmp/gdb"
fi

load1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp/ss" "$tmp/eu" "$tmp/out.json" "$n" "$tmp/fl" "$tmp/gdb" "$load0" "$load1" "$burners" "$tmp/phases" "$tmp/fa" <<'PY'
import json, os, re, statistics, sys
ss = [int(x) for x in open(sys.argv[1])]
eu = [int(x) for x in open(sys.argv[2])]
fl = [int(x) for x in open(sys.argv[5])]
gd = [int(x) for x in open(sys.argv[6])]
d = json.load(open(sys.argv[3]))
pauses = [t["pause_us"] for t in d["threads"] if t["error"] is None]
frames = sum(len(t["frames"]) for t in d["threads"])
errors = sum(1 for t in d["threads"] if t["error"] is not None)
print(f"threads: {len(d['threads'])} (asked {sys.argv[4]}), frames in last dump: {frames}, threads with an error: {errors}")
print(f"serial floor wall:  median {statistics.median(fl)/1000:.1f} ms  (runs: {', '.join(f'{x/1000:.1f}' for x in fl)})")
print(f"stackspy dump wall: median {statistics.median(ss)/1000:.1f} ms  (runs: {', '.join(f'{x/1000:.1f}' for x in ss)})")
print(f"ratio stackspy/floor: {statistics.median(ss)/statistics.median(fl):.2f}  (goal <= 1.1)")
fa = [int(x) for x in open(sys.argv[11])]
if fa:
    print(f"the floor's calls pipelined (parked --floor-ahead): median {statistics.median(fa)/1000:.1f} ms, "
          f"{statistics.median(fa)/statistics.median(fl):.2f} of the floor: 1.1x the floor leaves "
          f"{(1.1*statistics.median(fl) - statistics.median(fa))/1000:.1f} ms for all but the ptrace calls")
per_round = [s / f for s, f in zip(ss, fl)]
print(f"ratio per round: median {statistics.median(per_round):.2f}  (rounds: {', '.join(f'{r:.2f}' for r in per_round)})")
print(f"load average (1, 5, 15 min): {sys.argv[7]} before, {sys.argv[8]} after, on {len(os.sched_getaffinity(0))} CPUs, {sys.argv[9]} burners")
if eu:
    print(f"eu-stack wall:      median {statistics.median(eu)/1000:.1f} ms  (runs: {', '.join(f'{x/1000:.1f}' for x in eu)})")
    print(f"ratio stackspy/eu-stack: {statistics.median(ss)/statistics.median(eu):.3f}, eu-stack/floor: {statistics.median(eu)/statistics.median(fl):.1f}")
if gd:
    print(f"gdb wall:           {gd[0]/1000:.1f} ms, gdb/floor: {gd[0]/statistics.median(fl):.1f}")
print(f"per-thread pause (last dump): mean {statistics.mean(pauses):.1f} us, "
      f"p99 {sorted(pauses)[int(len(pauses)*0.99)-1]:.1f} us, max {max(pauses):.1f} us")
print(f"pause / floor's per-thread time: {statistics.mean(pauses) / (statistics.median(fl) / len(d['threads'])):.2f}  (goal <= 1.5)")
# STACKSPY_DEBUG's phases of a dump: median wall and CPU (of the tracer's
# thread) over the rounds, in the order they come.
phases = {}
for line in open(sys.argv[10]):
    m = re.match(r"stackspy: debug: (.+?)\s+([0-9.]+) ms,\s+([0-9.]+) ms of CPU", line)
    if m:
        phases.setdefault(m.group(1), []).append((float(m.group(2)), float(m.group(3))))
if phases:
    print("stackspy's phases, median ms (wall / tracer CPU): " +
          ", ".join(f"{k} {statistics.median(w for w, _ in v):.2f}/{statistics.median(c for _, c in v):.2f}"
                    for k, v in phases.items()))
PY
