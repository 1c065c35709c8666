#!/bin/sh
# run-test.sh TEST: the LOG_COMPILER of tests/*.test.  Runs TEST under a time
# limit (STACKSPY_TEST_TIMEOUT seconds; default 120, or what the test says
# in a "# time limit: N s" line of its header comment) and makes sure that a
# test which did not run as written can never pass or skip: each of these is
# a hard error (99), whatever the test's own exit status was:
#   - the time limit ran out;
#   - TEST, or tests/init.sh, does not parse (sh -n; bash -n for a bash
#     script);
#   - TEST passed or skipped without loading tests/init.sh to its end (it
#     writes STACKSPY_INIT_MARK last);
#   - the shell reported a command not found or a syntax error in a test
#     script or a tests/ helper (a sourced file that did not load, a typo):
#     bash and dash both carry on after those.
# The header: the comment lines at the top (a limit written further down
# was silently ignored: tests/accuracy-builds.test ran under 120 s).
# Read by the shell, as the clock below: each program started here costs
# every test 5-6 ms on a 2-CPU VM (the suite's 133 tests ran ~80 ms of
# this script each before the test itself).
limit=
{
	IFS= read -r _line || :
	while IFS= read -r _line; do
		case $_line in
		'# time limit: '*' s')
			_n=${_line#'# time limit: '}
			_n=${_n%' s'}
			case $_n in
			''|*[!0-9]*) ;;
			*) limit=$_n; break ;;
			esac
			;;
		'#'*) ;;
		*) break ;;
		esac
	done
} 2>/dev/null < "$1"
limit=${STACKSPY_TEST_TIMEOUT:-${limit:-120}}
test=$1
tests_dir=${0%/*}

error_() { echo "ERROR: $test: $*"; exit 99; }

# shell_of FILE: sets _sh to the shell FILE's first line names (bash, or
# sh), without a fork.
shell_of()
{
	_first=
	read -r _first < "$1" || :
	case $_first in
	*bash*) _sh=bash ;;
	*) _sh=sh ;;
	esac
}

# parse_check FILE: FILE parses with the shell its first line names.
parse_check()
{
	shell_of "$1"
	_msg=$($_sh -n "$1" 2>&1) || error_ "$1 does not parse ($_sh -n): $_msg"
}

[ -f "$test" ] || error_ "no such test"
parse_check "$test"
parse_check "$tests_dir/init.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/stackspy-run.XXXXXX") ||
	error_ "mktemp failed"
trap 'rm -rf "$work"' EXIT
trap 'exit 99' HUP INT TERM
STACKSPY_INIT_MARK=$work/init-mark
export STACKSPY_INIT_MARK

# The output goes through a file so that it can be searched for the shell's
# own complaints afterwards; the harness logs it all the same.  The test
# runs in the shell its first line names, not make's $SHELL (bash, which
# configure prefers): a POSIX test under Debian's dash took 12-22 % less
# time and 22 % less CPU (each fork of bash copies a larger process, and
# the suite forks tens of thousands of times).
shell_of "$test"
# now_us: microseconds since the epoch into _us, from bash's EPOCHREALTIME
# (seconds, the locale's radix, microseconds) where the shell has it.
now_us()
{
	_t=${EPOCHREALTIME-}
	case $_t in
	*[.,]??????) _us=${_t%[.,]*}${_t#*[.,]} ;;
	*) _us=$(( $(date +%s%N) / 1000 )) ;;
	esac
}
now_us; t0=$_us
timeout -k 10 "$limit" "$_sh" "$@" > "$work/output" 2>&1
rc=$?
now_us; t1=$_us
cat "$work/output"
# What makes `make check` slow: grep -h '^# duration' tests/*.log | sort -k3 -n
echo "# duration: $(( (t1 - t0) / 1000 )) ms"

case $rc in
124|137)
	error_ "did not finish within $limit s" ;;
esac

if grep -E '^[^ ]*tests/[^ :]*\.(test|sh): (line )?[0-9]+: .*(command not found|: not found|[Ss]yntax error)' \
	"$work/output" > "$work/shell-errors"; then
	error_ "the shell could not run it as written (exit status was $rc):
$(cat "$work/shell-errors")"
fi

case $rc in
0|77)
	_mark=
	read -r _mark 2>/dev/null < "$STACKSPY_INIT_MARK" || :
	[ "$_mark" = loaded ] ||
		error_ "exited $rc without loading tests/init.sh"
	;;
esac
exit $rc
