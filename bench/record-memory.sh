#!/bin/sh
# bench/record-memory.sh - the memory of a long recording of ever new
# stacks: record bench/stacks (2 threads walking random paths of DEPTH
# calls through 16 functions) for SECONDS at HZ, and report the distinct
# stacks in the profile, stackspy's peak RSS, and the bytes of RSS per
# distinct stack above a short recording's (issue "Scale": 10 minutes).
#
#   bench/record-memory.sh [-d SECONDS] [-r HZ] [-D DEPTH]
# Run from the top of a built tree (needs ./stackspy and bench/stacks).
set -eu
secs=600
rate=999
depth=12
while getopts d:r:D: opt; do
	case $opt in
	d) secs=$OPTARG ;;
	r) rate=$OPTARG ;;
	D) depth=$OPTARG ;;
	*) echo "usage: $0 [-d SECONDS] [-r HZ] [-D DEPTH]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
stacks=$build/bench/stacks
need_built stackspy bench/stacks
tmp=$(mktemp -d)
cleanup() { exec 3>&- 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
mkfifo "$tmp/in"
"$stacks" 2 "$depth" <"$tmp/in" >"$tmp/pid" &
exec 3>"$tmp/in"
while [ ! -s "$tmp/pid" ]; do sleep 0.1; done
pid=$(head -n1 "$tmp/pid")

run() {
	/usr/bin/time -f '%M' -o "$tmp/time.$1" "$stackspy" record -q -r "$rate" -d "$1" \
		-f folded -o "$tmp/out.$1" "$pid" 2>"$tmp/err.$1" ||
		{ cat "$tmp/err.$1" >&2; exit 2; }
}
run 2
run "$secs"
python3 - "$tmp" "$secs" <<'PY'
import sys
tmp, secs = sys.argv[1], sys.argv[2]
def load(d):
    n = s = 0
    for line in open(f"{tmp}/out.{d}"):
        n += 1
        s += int(line.rsplit(" ", 1)[1])
    rss = int(open(f"{tmp}/time.{d}").read().split()[-1]) * 1024
    return n, s, rss
n0, s0, r0 = load("2")
n1, s1, r1 = load(secs)
print(f"2 s:   {n0} distinct stacks of {s0} samples, peak RSS {r0/2**20:.1f} MiB")
print(f"{secs} s: {n1} distinct stacks of {s1} samples, peak RSS {r1/2**20:.1f} MiB")
if n1 > n0:
    print(f"RSS per distinct stack above the short run: {(r1 - r0) / (n1 - n0):.0f} bytes")
PY
