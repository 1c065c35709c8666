#!/bin/sh
# bench/accuracy.sh - stackspy against gdb at hundreds of random stop points
# of real programs (tests/accuracy.py does the work, inside gdb).  Prints
# every class of disagreement with a count and one example, then the rates:
# stacks frame-exact against gdb (physical frames: gdb's INLINE_FRAME and
# TAILCALL_FRAME skipped) and frames named where gdb names them.
#
#   bench/accuracy.sh [STOPS-PER-PROGRAM]     (default 60; run after make check,
#                                              which builds tests/targets/busy)
#   ENGINE=cfi bench/accuracy.sh              another --engine
#   SEED=N bench/accuracy.sh                  repeat a run
#
# Programs: the project's own targets (busy: -O2 without frame pointers,
# tail calls, PLT, vdso, libc string functions, a function without CFI, a
# signal handler, stacks deeper than the snapshot; cxx-O2; threads-O2;
# busy-dwarf: busy with its CFI only in .debug_frame, and busy-dwarf-split:
# the same with the debug file apart; go: tests/targets/gowork.go built
# here when the go command is installed) and
# Debian programs nobody here wrote: xz, gzip, python3, perl, openssl,
# sqlite3 (each skipped when not installed).
set -e
. "$(dirname "$0")/lib.sh"
stops=${1:-60}
gdb=${GDB:-gdb}
command -v "$gdb" > /dev/null || { echo "accuracy.sh: no gdb" >&2; exit 1; }
[ -x "$build/stackspy" ] || { echo "accuracy.sh: build stackspy first" >&2; exit 1; }
[ -x "$build/tests/targets/busy" ] && [ -x "$build/tests/targets/busy-dwarf" ] ||
	make -C "$build" tests/targets/busy tests/targets/busy-dwarf tests/targets/cxx-O2 tests/targets/threads-O2 tests/targets/libdlt.so > /dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# .debug_frame only: busy-dwarf as built, and split into a stripped binary
# and a debug file found through .gnu_debuglink.
objcopy --only-keep-debug "$build/tests/targets/busy-dwarf" "$work/busy-dwarf-split.debug"
objcopy --strip-debug --add-gnu-debuglink="$work/busy-dwarf-split.debug" \
	"$build/tests/targets/busy-dwarf" "$work/busy-dwarf-split"
# Go (tests/targets/gowork.go), when the go command is there: no network,
# caches in $work.
gowork=
if command -v go > /dev/null &&
	GOCACHE=$work/gocache GOPATH=$work/gopath GOFLAGS=-mod=mod GOPROXY=off \
	GOTOOLCHAIN=local go build -o "$work/gowork" "$top/tests/targets/gowork.go" \
		> "$work/go.log" 2>&1; then
	gowork=$work/gowork
else
	echo "accuracy.sh: no Go target (no go command, or the build failed)" >&2
fi

tab=$(printf '\t')
progs="busy$tab$build/tests/targets/busy
cxx$tab$build/tests/targets/cxx-O2
threads$tab$build/tests/targets/threads-O2
busy-dwarf$tab$build/tests/targets/busy-dwarf
busy-dwarf-split$tab$work/busy-dwarf-split"
have() { command -v "$1" > /dev/null; }
add() { progs="$progs
$1$tab$2"; }
[ -n "$gowork" ] && add go "$gowork"
have xz && add xz "xz -9 -T1 -c < /dev/urandom"
have gzip && add gzip "gzip -9 -c < /dev/urandom"
[ -x /usr/bin/python3 ] && add python3 "/usr/bin/python3 -c 'import re, json; f=lambda n: n if n<2 else f(n-1)+f(n-2); [json.dumps([re.sub(\"a+\", \"b\", \"aaa\" * 50), f(15)]) for _ in iter(int, 1)]'"
have perl && add perl "perl -e 'my %h; while (1) { \$h{\$_ % 1000} .= sprintf(\"%x\", \$_) for 1..1000; %h = () if length(\$h{1}) > 1000 }'"
have openssl && add openssl "openssl speed -seconds 1000 sha256 aes-128-cbc"
have sqlite3 && add sqlite3 "sqlite3 :memory: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c WHERE x % 7 = 3'"

report=$work/report
# (An assignment that an expansion produces is a command name, not an
# assignment: SEED goes through the environment.)
[ -z "${SEED-}" ] || export ACC_SEED="$SEED"
echo "accuracy.sh: $stops stops per program, engine ${ENGINE:-auto}" >&2
ACC_STACKSPY=$build/stackspy ACC_STOPS=$stops ACC_ENGINE=${ENGINE:-auto} \
ACC_REPORT=$report ACC_PROGRAMS=$progs ACC_EXAMPLES=1 \
	"$gdb" -nx -batch -iex 'set debuginfod enabled off' \
	-x "$top/tests/accuracy.py" > "$work/gdb.log" 2>&1 || { tail -5 "$work/gdb.log" >&2; true; }
cat "$report"
grep -q '^RESULT ' "$report"
