#!/bin/sh
# bench/dump-follow.sh - how long dump --follow takes over a chain of N
# processes (issue 39: 20 processes under 1 s): a pipeline yes | cat |
# ... | cat of N processes whose last cat is stopped, so that every stage
# blocks writing into the next; stackspy dump --follow from yes follows
# the chain through all N.  Against it, the same N processes given on the
# command line without --follow (the floor: the dumps alone), in the same
# minutes.  Prints each run's wall time and the medians.
#
#   bench/dump-follow.sh [-n PROCESSES] [-k RUNS]
# Run from the top of a built tree.
set -eu
n=20
runs=5
while getopts n:k: opt; do
	case $opt in
	n) n=$OPTARG ;;
	k) runs=$OPTARG ;;
	*) echo "usage: $0 [-n PROCESSES] [-k RUNS]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
tmp=$(mktemp -d)
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM

cmd=yes
i=1
while [ $i -lt "$n" ]; do
	cmd="$cmd | cat"
	i=$((i + 1))
done
sh -c "$cmd > /dev/null & echo \$! > $tmp/last; wait" &
shpid=$!
pids="$shpid"
i=0
until [ "$(pgrep -P "$shpid" | wc -l)" -ge "$n" ] && [ -s "$tmp/last" ]; do
	i=$((i + 1)); [ $i -lt 500 ] || { echo "$0: the pipeline did not start" >&2; exit 1; }
	sleep 0.02
done
stages=$(pgrep -P "$shpid" | tr '\n' ' ')
pids="$pids $stages"
last=$(cat "$tmp/last")
kill -STOP "$last"
first=$(pgrep -P "$shpid" -x yes)
sleep 0.5

now_ns() { date +%s%N; }
printf '%-8s %4s %10s %10s\n' run procs follow-ms floor-ms
r=1
while [ "$r" -le "$runs" ]; do
	t0=$(now_ns)
	"$stackspy" dump --follow --format json "$first" > "$tmp/f.json" 2> "$tmp/f.err" || :
	t1=$(now_ns)
	# shellcheck disable=SC2086
	"$stackspy" dump --format json $stages > "$tmp/p.json" 2> "$tmp/p.err" || :
	t2=$(now_ns)
	got=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["processes"]))' "$tmp/f.json")
	awk -v r="$r" -v got="$got" -v a="$t0" -v b="$t1" -v c="$t2" \
		'BEGIN { printf "%-8s %4s %10.1f %10.1f\n", r, got, (b - a) / 1e6, (c - b) / 1e6 }' |
		tee -a "$tmp/rows"
	r=$((r + 1))
done
kill -CONT "$last" 2>/dev/null || :
sort -n -k3 "$tmp/rows" | awk -v k="$runs" '{ a[NR] = $3 }
	END { printf "median follow: %.1f ms\n", a[int((k + 1) / 2)] }'
sort -n -k4 "$tmp/rows" | awk -v k="$runs" '{ a[NR] = $4 } END { printf "median floor (the same %s processes given): %.1f ms\n", "'"$n"'", a[int((k + 1) / 2)] }'
