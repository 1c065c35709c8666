#!/bin/sh
# tests/fuzz/fuzz.sh - build and run the libFuzzer targets (not part of
# make check: the runs take minutes).
#
#   tests/fuzz/fuzz.sh build [T...]     build tests/fuzz/fuzz-elf, fuzz-core, fuzz-cfi
#                                       (in the build tree) with clang,
#                                       -fsanitize=fuzzer,address,undefined
#   tests/fuzz/fuzz.sh run TARGET SECS  run TARGET (elf|core|cfi) for SECS seconds
#                                       on a copy of its seed corpus
#                                       (tests/fuzz/corpus-TARGET); crashes
#                                       go to fuzz-TARGET-crashes/
#
# Needs clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
# Run from the build tree (where config.h is) after ./configure.
set -e
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
CLANG=${CLANG:-clang}
cmd=${1:-build}

case $cmd in
build)
	flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
	cflags="-I. -I$srcdir $(pkg-config --cflags libelf)"
	libs="$(pkg-config --libs libelf)"
	# The optional libraries configure found, as the Makefile links them.
	for v in DEMANGLE LZMA LIBDW ZLIB DEBUGINFOD LIBCURL; do
		libs="$libs $(sed -n "s/^${v}_LIBS = //p" Makefile)"
	done
	# The unwind/ sources the library has (taken from its make fragment).
	srcs=$(sed -n 's/^[ 	]*\(unwind\/[a-z0-9_-]*\.c\).*/\1/p' "$srcdir/unwind/local.mk")
	# unwind/source.c is built only with libdw (configure --with-libdw).
	! grep -q '^#define HAVE_LIBDW 1' config.h || srcs="$srcs unwind/source.c"
	mkdir -p tests/fuzz
	shift
	for t in ${*:-elf core cfi}; do
		echo "  CLANG    tests/fuzz/fuzz-$t"
		# shellcheck disable=SC2086
		$CLANG $flags $cflags -o tests/fuzz/fuzz-$t "$srcdir/tests/fuzz/fuzz-$t.c" \
			$(for s in $srcs; do echo "$srcdir/$s"; done) \
			"$srcdir/ptrace/"*.c "$srcdir/arch/"*.c "$srcdir/base/"*.c $libs
	done
	;;
run)
	t=$2 secs=${3:-300}
	[ -x "tests/fuzz/fuzz-$t" ] || { echo "fuzz.sh: build first" >&2; exit 2; }
	work=fuzz-$t-corpus
	mkdir -p "$work" "fuzz-$t-crashes"
	cp -n "$srcdir/tests/fuzz/corpus-$t/"* "$work/" 2>/dev/null || true
	# -rss_limit_mb: the core target mmaps files the input names.
	"tests/fuzz/fuzz-$t" -max_total_time="$secs" -timeout=10 \
		-rss_limit_mb=4096 -max_len=1048576 \
		-artifact_prefix="fuzz-$t-crashes/" "$work"
	;;
*)
	echo "usage: fuzz.sh build [T...] | run elf|core|cfi SECONDS" >&2
	exit 64
	;;
esac
