#!/bin/sh
# bench/record-threads.sh - record a process of N idle threads (parked in
# pthread_cond_wait) and B busy ones (busy_thread -> busy_outer ->
# busy_inner), on-CPU and --idle, for each N asked, and report the rate
# achieved (ticks done / ticks asked), the on-CPU samples in the busy chain
# (share, and per busy thread against the asked rate), the tracer's CPU,
# and the peak RSS of stackspy (issue "Scale": goals >= 0.9 of the asked
# rate at 5,000 idle threads, >= 0.5 at 20,000).  Mode wakers: --idle of
# N threads that each set their name and sleep a second, for ever
# (bench/parked -w 1000; issue 36: >= 0.5 of the asked rate at 20,000),
# with the thread-samples kept against the ticks x threads, and the
# summary's "put off" and "lost" figures.
#
#   bench/record-threads.sh [-n "100 1000 5000 20000"] [-b BUSY] [-d SECONDS]
#                           [-r HZ] [-m "oncpu idle wakers"] [-B BURNERS]
# Run from the top of a built tree (needs ./stackspy and bench/parked).
set -eu
ns="100 1000 5000 20000"
busy=2
secs=5
rate=99
modes="oncpu idle"
burners=0
while getopts n:b:d:r:m:B: opt; do
	case $opt in
	n) ns=$OPTARG ;;
	b) busy=$OPTARG ;;
	d) secs=$OPTARG ;;
	r) rate=$OPTARG ;;
	m) modes=$OPTARG ;;
	B) burners=$OPTARG ;;
	*) echo "usage: $0 [-n LIST] [-b BUSY] [-d SECONDS] [-r HZ] [-m MODES] [-B BURNERS]" >&2
	   exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
parked=$build/bench/parked
need_built stackspy bench/parked
tmp=$(mktemp -d)
pids=
cleanup() {
	exec 3>&- 2>/dev/null || true
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
start_burners "$burners"
# 20,000 threads need the descriptors and the thread limit to allow them.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

printf '%-6s %-6s %8s %6s %8s %8s %6s %9s %8s %6s %6s %s\n' threads mode ticks rate/ask \
	samples busy% busy/ask cpu-ms rss-MiB kept lost rc
# start_parked N ARG...: bench/parked with N threads, its pid in $pid
# (stop_parked ends it).
nfifo=0
start_parked() {
	_n=$1
	shift
	nfifo=$((nfifo + 1))
	fifo=$tmp/in.$nfifo
	mkfifo "$fifo"
	# parked exits when its stdin closes: the fifo stays open from here.
	"$parked" -n "$_n" "$@" <"$fifo" >"$tmp/pid" &
	parked_job=$!
	exec 3>"$fifo"
	while [ ! -s "$tmp/pid" ]; do sleep 0.1; done
	pid=$(head -n1 "$tmp/pid")
	: >"$tmp/pid"
}
# Not a bare wait: the burners are children too.
stop_parked() {
	exec 3>&-
	[ -z "${parked_job:-}" ] || wait "$parked_job" 2>/dev/null || true
	parked_job=
}
for n in $ns; do
	parked_pid=
	for mode in $modes; do
		opt=
		[ "$mode" = oncpu ] || opt=--idle
		if [ "$mode" = wakers ]; then
			stop_parked
			parked_pid=
			start_parked "$n" -w 1000
		elif [ -z "$parked_pid" ]; then
			start_parked "$n" -b "$busy"
			parked_pid=$pid
		fi
		rc=0
		/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" \
			"$stackspy" record $opt -r "$rate" -d "$secs" -f folded \
			-o "$tmp/out.folded" "$pid" 2>"$tmp/err" || rc=$?
		# 1: partial (the summary says why, e.g. most of it lost).
		[ "$rc" -le 1 ] || {
			echo "stackspy record failed:" >&2; cat "$tmp/err" >&2; exit 2; }
		python3 - "$tmp/out.folded" "$tmp/err" "$tmp/time" "$n" "$mode" "$rate" \
			"$secs" "$busy" "$rc" <<'PY'
import re, sys
folded, err, tm, n, mode, rate, secs, busy, rc = sys.argv[1:]
rate, secs, busy = float(rate), float(secs), int(busy)
total = inbusy = 0
for line in open(folded):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    total += int(count)
    if "busy_inner" in stack and "busy_outer" in stack:
        inbusy += int(count)
text = open(err).read()
m = re.search(r"(\d+) ticks at", text)
ticks = int(m.group(1)) if m else 0
asked = rate * secs
e, u, s, rss = open(tm).read().split()[-4:]
if mode == "wakers":
    busy = 0
# kept: the thread-samples against every thread at every tick done;
# lost: the summary's (put off and lost, dropped, not unwound in time).
threads = int(n) + (busy if mode != "wakers" else 0) + 1
kept = total / (ticks * threads) if ticks else 0
lost = sum(int(x) for x in re.findall(r"(\d+) of them lost", text))
lost += sum(int(x) for x in re.findall(r"(\d+) thread-samples dropped", text))
lost += sum(int(x) for x in re.findall(r"(\d+) thread-samples not in the output", text))
lostshare = lost / (total + lost) if total + lost else 0
print(f"{n:<6} {mode:<6} {ticks:8d} {ticks/asked:8.2f} {total:8d} "
      f"{(100.0*inbusy/total if total else 0):5.1f}% {inbusy/(busy*asked) if busy else 0:8.2f} "
      f"{(float(u)+float(s))*1000:9.0f} {int(rss)/1024:8.1f} {kept:6.2f} {lostshare:6.2f} {rc}")
PY
	done
	stop_parked
done
