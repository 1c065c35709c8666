#!/bin/sh
# tests/build-makefile.sh TOP BUILD [GCC_OPTION...] - print a Makefile
# that compiles stackspy's own collapse/, ptrace/, arch/ and unwind/
# sources (or the folders BUILD_DIRS names) from the source tree TOP into
# one object each (gcc -O1, headers from TOP then BUILD, and the options
# given): a real C build for tests/record-make.test (with -wrapper) and
# bench/record-build.sh.
[ $# -ge 2 ] || { echo "usage: $0 TOP BUILD [GCC_OPTION...]" >&2; exit 64; }
top=$1 build=$2
shift 2
opts=
for a in "$@"; do
	opts="$opts $a"
done
objs= rules=
for d in ${BUILD_DIRS:-collapse ptrace arch unwind}; do
	for f in "$top/$d"/*.c; do
		o=$(echo "${f#"$top"/}" | tr / _)
		o=${o%.c}.o
		objs="$objs $o"
		rules="$rules$o: $f
	gcc -O1 -w -I$top -I$build$opts -c $f -o \$@
"
	done
done
printf 'all:%s\n%s' "$objs" "$rules"
