#!/bin/sh
# bench/peers.sh - stackspy, eu-stack and gdb on a real program at random
# moments: how many thread stacks each takes to the thread's entry.
#
#   bench/peers.sh [-n STOPS] [-w SECONDS] NAME COMMAND [ARG...]
#
# Starts COMMAND (its output to /dev/null), waits SECONDS (default 3) for
# it to settle, then STOPS times (default 10), at a random moment 0.1 to
# 1 s apart: stackspy dump --format json, eu-stack -p, and gdb's
# `thread apply all bt` (gdb -batch -p), one after the other, and counts
# the threads whose outermost frame is an entry: _start (or the program's
# entry point, named or not), clone / clone3, thread_start, and Go's top
# frames (runtime.goexit, runtime.clone, mstart, mcall, morestack, rt0_go:
# where Go's own tracebacks end).  Prints one line:
#
#   NAME: stackspy A of T, eu-stack B of T, gdb C of T
#
# (stackspy's count also asks that its walk ended with "end of stack"), and
# keeps every output under $PEERS_KEEP (default: a temporary folder,
# removed) for reading: a count says nothing of frames that are wrong on
# the way.  Each tool's outputs there: NAME.N.stackspy.json, .eu, .gdb.
# Needs eu-stack and gdb (each left out when missing); run as root.
set -eu
. "$(dirname "$0")/lib.sh"
stops=10 wait=3
while getopts n:w: opt; do
	case $opt in
	n) stops=$OPTARG ;;
	w) wait=$OPTARG ;;
	*) echo "usage: $0 [-n STOPS] [-w SECONDS] NAME COMMAND [ARG...]" >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: $0 [-n STOPS] [-w SECONDS] NAME COMMAND [ARG...]" >&2; exit 64; }
name=$1
shift
keep=${PEERS_KEEP:-}
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
pid=
trap 'if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; [ -n "$keep" ] || rm -rf "$work"' EXIT INT TERM

"$@" > /dev/null 2>&1 < /dev/null &
pid=$!
sleep "$wait"
kill -0 "$pid" 2>/dev/null || { echo "$name: the program ended within $wait s" >&2; exit 1; }
entry=$(readelf -h "/proc/$pid/exe" 2>/dev/null | awk '/Entry point/ { print $4 }')
# Where a position-independent executable was loaded: its entry is there.
exe=$(readlink "/proc/$pid/exe")
base=0x$(awk -v exe="$exe" '$6 == exe && $3 ~ /^0+$/ { split($1, r, "-"); print r[1]; exit }' \
	"/proc/$pid/maps")
readelf -h "$exe" 2>/dev/null | grep -q 'Type:.*DYN' || base=0

i=0
while [ $i -lt "$stops" ]; do
	i=$((i + 1))
	sleep "0.$(( $(od -An -N1 -tu1 /dev/urandom) % 9 + 1 ))"
	"$build/stackspy" dump "$pid" --format json > "$work/$name.$i.stackspy.json" 2>/dev/null || true
	if command -v eu-stack > /dev/null; then
		timeout 60 eu-stack -p "$pid" > "$work/$name.$i.eu" 2>&1 || true
	fi
	if command -v gdb > /dev/null; then
		timeout 120 gdb -nx -batch -p "$pid" -ex 'thread apply all bt' \
			> "$work/$name.$i.gdb" 2>&1 || true
	fi
done

python3 - "$work" "$name" "$stops" "${entry:-0}" "${base:-0}" <<'PY'
import glob, json, re, sys
work, name, stops, entry, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
ENDS = re.compile(r'^(_start|__clone3?|clone3?|thread_start|runtime\.goexit(\.abi0)?|'
                  r'runtime\.(clone|mstart|mcall|morestack|rt0_go)(\.abi0)?)$')
def is_end(fn, ip):
    if fn and ENDS.match(fn):
        return True
    try:
        e = int(entry, 16) + int(base, 16)
        return e and 0 <= int(ip, 16) - e < 64   # _start, unnamed (stripped)
    except (ValueError, TypeError):
        return False
def stackspy(path):
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        return 0, 0
    ok = 0
    for t in d["threads"]:
        fr = [f for f in t["frames"] if not f.get("kernel")]
        if fr and is_end(fr[-1]["function"], fr[-1]["ip"]) and t.get("stop") == "end of stack":
            ok += 1
    return ok, len(d["threads"])
def text(path, head, frame):
    try:
        lines = open(path, errors="replace").read().split("\n")
    except OSError:
        return 0, 0
    threads, last = [], None
    for l in lines:
        if head.match(l):
            if last is not None:
                threads.append(last)
            last = ("", "0")
        m = frame.match(l)
        if m and last is not None:
            last = (m.group("fn") or "", m.group("ip") or "0")
    if last is not None:
        threads.append(last)
    return sum(1 for fn, ip in threads if is_end(fn, ip)), len(threads)
eu_head = re.compile(r'^TID \d+:')
eu_frame = re.compile(r'^#\d+\s+(?P<ip>0x[0-9a-f]+)\s*(?P<fn>[^\s(]*)')
gdb_head = re.compile(r'^Thread \d+ ')
gdb_frame = re.compile(r'^#\d+\s+(?:(?P<ip>0x[0-9a-f]+) in )?(?P<fn>[^\s(]+)')
tot = {"stackspy": [0, 0], "eu-stack": [0, 0], "gdb": [0, 0]}
for i in range(1, stops + 1):
    for tool, r in (("stackspy", stackspy("%s/%s.%d.stackspy.json" % (work, name, i))),
                    ("eu-stack", text("%s/%s.%d.eu" % (work, name, i), eu_head, eu_frame)),
                    ("gdb", text("%s/%s.%d.gdb" % (work, name, i), gdb_head, gdb_frame))):
        tot[tool][0] += r[0]
        tot[tool][1] += r[1]
print("%s: %s" % (name, ", ".join("%s %d of %d" % (k, v[0], v[1]) for k, v in tot.items())))
PY
