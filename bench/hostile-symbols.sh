#!/bin/sh
# bench/hostile-symbols.sh - what a hostile library's symbol table costs
# root's stackspy (issue 32): a program of nobody's (uid 65534) dlopens a
# library whose .symtab holds N junk functions laid over its code
# (tests/symbols-gen: 20,000,000 by default, a 730 MB file), or a stripped
# one whose .gnu_debuglink names a debug file holding M (7,000,000: 250
# MB); the program spins inside it.  For each, dump, record -d 2 and top
# (3 refreshes, on a terminal of script(1)'s) are run once under
# /usr/bin/time -v, and their max RSS, wall time, exit status and the name
# of the spinning frame are printed (issue 32's bar: under 300 MB, the
# recording written, the frames named).  Before: dump 1.8 GB and 23 s,
# frames named junk; record 1.7 GB and no output.
#
#   bench/hostile-symbols.sh [-n N] [-m M] [-D DIR]
# Run as root from the top of a built tree (needs ./stackspy and
# tests/symbols-gen).  The files go in DIR (default: a new folder under
# /var/tmp, on disk rather than a tmpfs) and are removed at the end.
set -eu
n=20000000
m=7000000
dir=
while getopts n:m:D: opt; do
	case $opt in
	n) n=$OPTARG ;;
	m) m=$OPTARG ;;
	D) dir=$OPTARG ;;
	*) echo "usage: $0 [-n N] [-m M] [-D DIR]" >&2; exit 64 ;;
	esac
done
. "$(dirname "$0")/lib.sh"
stackspy=$build/stackspy
gen=$build/tests/symbols-gen
need_built stackspy tests/symbols-gen
[ "$(id -u)" = 0 ] || { echo "$0: run as root (the target is nobody's)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$0: no /usr/bin/time (apt-get install time)" >&2; exit 2; }
tmp=$(mktemp -d "${dir:-/var/tmp}/hostile-symbols.XXXXXX")
pids=
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$tmp"
cd "$tmp"

cat > lib.c <<'C'
volatile unsigned long sink;
__attribute__((noinline)) void hostile_leaf(void) { for (int i = 0; i < 100000; i++) sink += i; }
void hostile_spin(void) { for (;;) hostile_leaf(); }
C
cat > host.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW);
	void (*f)(void) = h ? (void (*)(void))dlsym(h, "hostile_spin") : NULL;
	if (!f)
		return 1;
	printf("ready\n");
	fflush(stdout);
	f();
	return 0;
}
C
cc -O2 -o host host.c -ldl
cc -O2 -g -shared -fPIC -Wl,--build-id -o lib.so lib.c
echo "generating: $n symbols in big.so, $m in the debug file of dl.so"
"$gen" lib.so big.so "$n"
objcopy --only-keep-debug lib.so lib.debug
"$gen" lib.debug dl.debug "$m"
objcopy --strip-all --add-gnu-debuglink=dl.debug lib.so dl.so
chmod 644 ./*.so ./*.debug
ls -l big.so dl.debug | awk '{ printf "  %s: %d MB\n", $NF, $5 / 1000000 }'
as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"

# measure WHAT CMD...: CMD under /usr/bin/time -v; prints the figures.
measure()
{
	_what=$1
	shift
	_rc=0
	/usr/bin/time -v -o time.out "$@" > run.out 2> run.err || _rc=$?
	_rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.out)
	_wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.out)
	_st=$(sed -n 's/.*Exit status: //p' time.out)
	_frame=$(grep -a -o -m 1 -E 'hostile_leaf|junk[0-9]+' run.out folded.out 2>/dev/null | head -n 1 | sed 's/.*://')
	printf '  %-7s max RSS %6d MB, %8s s, exit %s, frame %s\n' "$_what" $((_rss / 1024)) \
		"$_wall" "${_st:-$_rc}" "${_frame:-none}"
	grep -h 'warning: .*not read' run.err 2>/dev/null | sed 's/^/          /' | head -n 2
}

for lib in big.so dl.so; do
	echo "$lib:"
	$as_user ./host "$tmp/$lib" > host.out &
	p=$!
	pids="$pids $p"
	while ! grep -q ready host.out 2>/dev/null; do
		kill -0 "$p" || { echo "$0: the target died" >&2; exit 1; }
		sleep 0.1
	done
	rm -f folded.out
	measure dump "$stackspy" dump "$p"
	measure record "$stackspy" record -p "$p" -d 2 -o folded.out
	[ -s folded.out ] || echo "          (no recording written)"
	rm -f folded.out
	measure top script -q -c "TERM=xterm '$stackspy' top -p $p --iterations 3 --delay 1 2> run.err" /dev/null
	kill "$p"
	wait "$p" 2>/dev/null || :
done
