# init.sh: sourced by every tests/*.test (POSIX sh).
#
# Exit status of a test: 0 pass, 1 fail (fail_), 77 skip (skip_ "why"),
# 99 the framework itself broke (framework_failure_).  Each test runs in its
# own temporary folder, removed at exit (set STACKSPY_KEEP_TMP=1 to keep it);
# every process it starts with start_bg is killed at exit, and a test that
# otherwise passed fails if one of them is left in a tracing stop.

me=${0##*/}
me=${me%.test}

skip_() { echo "SKIP: $me: $*"; exit 77; }
fail_() { echo "FAIL: $me: $*"; exit 1; }
framework_failure_() { echo "ERROR: $me: $*"; exit 99; }

# A command that does not exist is a broken test (a helper that did not
# load, a typo), never something to carry on after: under bash, which
# calls this hook in a subshell, stop the test itself with the TERM trap
# below (exit 99).  tests/run-test.sh catches the same under other shells
# from the shell's message.
command_not_found_handle()
{
	echo "ERROR: $me: $1: command not found" >&2
	kill -s TERM $$
	exit 127
}

[ -n "${abs_top_builddir-}" ] && [ -n "${abs_top_srcdir-}" ] ||
	framework_failure_ "abs_top_builddir and abs_top_srcdir must be set (run through make check)"

STACKSPY=$abs_top_builddir/stackspy
TARGETS=$abs_top_builddir/tests/targets
# The tests' Python (its standard library only): $PYTHON if set, else the
# one configure found and checked (TEST_PYTHON, from make check), else
# Debian's /usr/bin/python3 where there is one: a python3 found first in
# PATH may be a version manager's (pyenv: a shim, 130 ms a start, then an
# interpreter whose site packages took 47 ms a start against Debian's 14,
# at every call of every test).
JSONQ=$abs_top_srcdir/tests/jsonq.py
[ -x "$STACKSPY" ] || framework_failure_ "no $STACKSPY"
if [ -z "${PYTHON-}" ] && [ -n "${TEST_PYTHON-}" ] && [ -x "$TEST_PYTHON" ]; then
	PYTHON=$TEST_PYTHON
else
	if [ -z "${PYTHON-}" ] && [ -x /usr/bin/python3 ]; then
		PYTHON=/usr/bin/python3
	fi
	PYTHON=${PYTHON:-python3}
	# The interpreter itself, not what PATH finds first: a wrapper there
	# (a pyenv shim, 150 ms a start against 20) ran every jsonq call of
	# the suite.
	_py=$("$PYTHON" -c 'import json, sys; print(sys.executable)' 2>/dev/null) && [ -x "$_py" ] ||
		framework_failure_ "no $PYTHON (with its json module)"
	PYTHON=$_py
fi

bg_pids=
part_name=
tmp_dir=$(mktemp -d "${TMPDIR:-/tmp}/stackspy-$me.XXXXXX") ||
	framework_failure_ "mktemp failed"
cd "$tmp_dir" || framework_failure_ "cannot enter $tmp_dir"

cleanup_()
{
	for p in $bg_pids; do
		if [ "$1" = 0 ] && traced_stop_ "$p"; then
			echo "FAIL: $me: process $p left in a tracing stop"
			ls_threads "$p"
			set -- 1
		fi
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	cd /
	[ "${STACKSPY_KEEP_TMP-}" = 1 ] || rm -rf "$tmp_dir"
	return "$1"
}
trap 'cleanup_ $?; exit $?' EXIT
trap 'exit 99' HUP INT TERM

# load_lib FILE FUNC...: source tests/FILE, a library of helpers, and check
# that it loaded: it parses (sh -n, before anything of it runs), sourcing
# it succeeds, and it defines every FUNC the test is going to call.
# Anything else is a framework error (99), never a pass or a skip: a bare
# `. FILE` that fails goes on under bash as if nothing happened.
load_lib()
{
	_lib_file=$abs_top_srcdir/tests/$1
	shift
	[ -f "$_lib_file" ] && [ -r "$_lib_file" ] ||
		framework_failure_ "no helper library $_lib_file"
	_lib_err=$(sh -n "$_lib_file" 2>&1) ||
		framework_failure_ "$_lib_file does not parse: $_lib_err"
	. "$_lib_file" ||
		framework_failure_ "sourcing $_lib_file failed"
	for _lib_fn; do
		is_function_ "$_lib_fn" ||
			framework_failure_ "$_lib_file does not define $_lib_fn"
	done
}

# is_function_ NAME: NAME is a shell function ("is a function" in bash,
# "is a shell function" in dash).
is_function_()
{
	case $(type "$1" 2>/dev/null) in
	*function*) return 0 ;;
	*) return 1 ;;
	esac
}

# ---- processes --------------------------------------------------------------

# start_bg NAME PROG [ARG...]: start PROG in the background; its stdin is the
# FIFO NAME.in (opened read-write, so it never sees end of file until
# killed), stdout NAME.out, stderr NAME.err; its pid goes into bg_pid, and
# it is killed at exit.
start_bg()
{
	_name=$1
	shift
	rm -f "$_name.in"
	mkfifo "$_name.in" || framework_failure_ "mkfifo $_name.in"
	# Emptied here, not only by the background job's redirection, which
	# may come after the caller's first look: a NAME used before would
	# show its old "ready" line.
	: > "$_name.out"
	: > "$_name.err"
	"$@" <> "$_name.in" > "$_name.out" 2> "$_name.err" &
	bg_pid=$!
	bg_pids="$bg_pids $bg_pid"
}

# wait_line NAME PID [SECONDS]: wait until NAME.out has a "ready" line (at
# most SECONDS, default 30; a target that dies first is a framework error).
# For targets whose threads never sleep; wait_ready also waits for them to.
wait_line()
{
	_limit=$((${3:-30} * 20))
	_i=0
	while ! has_line_ "$1.out" ready; do
		if ! kill -0 "$2" 2>/dev/null; then
			cat "$1.err"
			framework_failure_ "$1 ($2) died before it was ready"
		fi
		_i=$((_i + 1))
		[ $_i -lt $_limit ] ||
			framework_failure_ "$1 ($2) not ready after ${3:-30} s"
		sleep 0.05
	done
}

# has_line_ FILE LINE: FILE has a line LINE (read by the shell itself: the
# polls call it every few milliseconds, and a fork costs more than that).
has_line_()
{
	{
		while IFS= read -r _hl; do
			[ "$_hl" = "$2" ] && return 0
		done
	} 2>/dev/null < "$1"
	return 1
}

# count_prefix_ FILE PREFIX: sets _count to the number of lines of FILE that
# begin with PREFIX, without a fork.
count_prefix_()
{
	_count=0
	{
		while IFS= read -r _cp; do
			case $_cp in
			"$2"*) _count=$((_count + 1)) ;;
			esac
		done
	} 2>/dev/null < "$1"
}

# wait_ready NAME PID: wait_line, then until every thread of PID is asleep
# (S): the line is the last thing the main thread writes before it blocks.
wait_ready()
{
	wait_line "$1" "$2"
	wait_asleep "$2"
}

# wait_asleep PID: wait until every thread of PID is in state S.
wait_asleep()
{
	_i=0
	while ! all_in_state_ S "$1"; do
		_i=$((_i + 1))
		[ $_i -lt 2000 ] || {
			ls_threads "$1"
			framework_failure_ "the threads of $1 are not all asleep"
		}
		sleep 0.01
	done
}

# wait_exec PID NAME [THREADS]: wait until PID (a setpriv, a shell's
# fork) has exec'd NAME and has THREADS threads (default 1): its comm is
# NAME (read by the shell: no fork).
wait_exec()
{
	_i=0 _ew_pid=$1 _ew_name=$2 _ew_n=${3:-1}
	while :; do
		_c=
		read -r _c < /proc/"$_ew_pid"/comm 2>/dev/null
		if [ "$_c" = "$_ew_name" ]; then
			set -- /proc/"$_ew_pid"/task/*
			[ $# -ge "$_ew_n" ] && break
		fi
		kill -0 "$_ew_pid" 2>/dev/null || framework_failure_ "$_ew_name ($_ew_pid) exited"
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || framework_failure_ "$_ew_name ($_ew_pid) not started after 10 s"
		sleep 0.01
	done
}

# all_in_state_ STATE PID: PID has threads, all in STATE (one look).
all_in_state_()
{
	thread_scan_ "$2"
	[ "$_tt_n" -gt 0 ] || return 1
	while read -r _ais_tid _ais_state _ais_rest; do
		[ "$_ais_state" = "$1" ] || return 1
	done <<EOF
$_tt
EOF
	return 0
}

# start_target NAME PROG [ARG...]: start_bg, then wait_ready; sets bg_pid.
start_target()
{
	start_bg "$@"
	wait_ready "$1" "$bg_pid"
}

# thread_table_ PID...: a line "TID STATE TRACERPID NAME" for each thread
# of each PID (thread_scan_'s table).  A thread that exits meanwhile is
# left out.
thread_table_()
{
	thread_scan_ "$@"
	[ -z "$_tt" ] || printf '%s\n' "$_tt"
}

# thread_scan_ PID...: sets _tt to thread_table_'s lines (no newline after
# the last), _tt_n to their number.  The helpers that poll call it, in
# loops of 10 ms: up to 32 threads in all it reads each thread's status
# with the shell's own read (no fork: a look through grep and awk cost
# 28 ms of CPU on a 2-CPU VM, more than the 10 ms it waited, and the
# suite polls thousands of times); more, through grep and one awk (two
# processes whatever the number of threads: a command substitution per
# thread made the checks of a 10,000-thread target take over a minute
# under load).
thread_scan_()
{
	_tt=
	_tt_n=0
	for _ts_p; do
		for _ts_d in /proc/"$_ts_p"/task/*; do
			_tt_n=$((_tt_n + 1))
		done
	done
	if [ "$_tt_n" -gt 32 ]; then
		_tt_files=
		for _ts_p; do
			_tt_files="$_tt_files /proc/$_ts_p/task/*/status"
		done
		# shellcheck disable=SC2086
		_tt=$(grep -H -E '^(Name|State|TracerPid):' $_tt_files 2>/dev/null |
		awk '{
			path = $0; sub(/\/status:.*/, "", path); sub(/.*\//, "", path)
			line = $0; sub(/^[^:]*:/, "", line)
			key = line; sub(/:.*/, "", key)
			val = line; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "Name") name = val
			else if (key == "State") state = substr(val, 1, 1)
			else if (key == "TracerPid") print path, state, val + 0, name
		}')
		_tt_n=0
		[ -z "$_tt" ] || _tt_n=$(printf '%s\n' "$_tt" | wc -l)
		return 0
	fi
	_tt_n=0
	for _ts_p; do
		for _ts_d in /proc/"$_ts_p"/task/*; do
			_ts_name= _ts_state= _ts_tracer=
			# Name, State, then TracerPid: the first lines of the file.
			{
				while read -r _ts_k _ts_v; do
					case $_ts_k in
					Name:) _ts_name=$_ts_v ;;
					State:) _ts_state=${_ts_v%"${_ts_v#?}"} ;;
					TracerPid:) _ts_tracer=$_ts_v; break ;;
					esac
				done
			} 2>/dev/null < "$_ts_d/status"
			# Gone meanwhile (or no such PID: the glob as is).
			[ -n "$_ts_tracer" ] || continue
			[ -z "$_tt" ] || _tt="$_tt
"
			_tt="$_tt${_ts_d##*/} $_ts_state $_ts_tracer $_ts_name"
			_tt_n=$((_tt_n + 1))
		done
	done
}

# task_state_ /proc/PID/task/TID: the state letter, without a fork.
task_state_()
{
	task_state_var_ "$1"
	echo "$_state"
}

# task_state_var_ /proc/PID/task/TID: sets _state to the state letter (gone
# when there is no such thread), without a fork or a subshell.
task_state_var_()
{
	_line=
	read -r _line 2>/dev/null < "$1/stat" || :
	if [ -z "$_line" ]; then
		_state=gone
		return 0
	fi
	_state=${_line##*) }
	_state=${_state%% *}
}

# tracer_ /proc/PID/task/TID: its TracerPid.
tracer_()
{
	tracer_var_ "$1"
	echo "$_tracer"
}

# tracer_var_ /proc/PID/task/TID: sets _tracer to its TracerPid (gone when
# there is no such thread), without a fork or a subshell.
tracer_var_()
{
	_tracer=gone
	{
		while read -r _k _v; do
			[ "$_k" = TracerPid: ] && { _tracer=$_v; return 0; }
		done
	} 2>/dev/null < "$1/status"
	return 0
}

# traced_stop_ PID: true if a thread of PID is in a tracing stop (t).
traced_stop_()
{
	thread_scan_ "$1"
	while read -r _tsr_tid _tsr_state _tsr_rest; do
		[ "$_tsr_state" = t ] && return 0
	done <<EOF
$_tt
EOF
	return 1
}

# ls_threads PID: each thread's tid, state, TracerPid, name (for logs).
ls_threads()
{
	thread_table_ "$1" | awk '{
		name = $0; sub(/^[^ ]* [^ ]* [^ ]* /, "", name)
		print "  " $1 " state " $2 " TracerPid " $3 " " name
	}'
}

# tids_of PID: the tids, sorted, one line.
tids_of()
{
	ls /proc/"$1"/task | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# assert_detached PID [STATE]: no thread of PID is traced or in a tracing
# stop; with STATE (S or T), every thread is in that state.  A thread
# detached from a group-stop runs for an instant in the kernel (R) before it
# stops again, and one woken by a detach goes back to sleep: the state may
# take up to half a second to settle; TracerPid and t may not.
assert_detached()
{
	_detached_wait_ "${2-}" "$1" || {
		ls_threads "$1"
		fail_ "process $1 not cleanly detached:$_bad"
	}
}

# assert_detached_all STATE PID...: assert_detached PID STATE of each PID,
# in one look at them all.
assert_detached_all()
{
	_ada_want=$1
	shift
	_detached_wait_ "$_ada_want" "$@" || fail_ "processes $* not cleanly detached:$_bad"
}

# _detached_wait_ STATE PID...: true when no thread of the PIDs is traced or
# in a tracing stop and (with STATE) all are in STATE, waiting up to half a
# second for the state to settle; else false, with what is wrong in _bad.
_detached_wait_()
{
	_try=0
	while ! _detached_once_ "$@" && [ "$_bad_state_only" = yes ] && [ $_try -lt 50 ]; do
		_try=$((_try + 1))
		sleep 0.01
	done
	[ -z "$_bad" ]
}

# _detached_once_ STATE PID...: sets _bad to what is wrong with the threads
# of the PIDs now, and _bad_state_only.
_detached_once_()
{
	_do_want=$1
	shift
	thread_scan_ "$@"
	_bad=
	_bad_state_only=yes
	while read -r _do_tid _do_state _do_tracer _do_rest; do
		[ -n "$_do_tid" ] || continue
		if [ "$_do_tracer" != 0 ]; then
			_bad="$_bad $_do_tid:TracerPid=$_do_tracer"
			_bad_state_only=no
		fi
		if [ "$_do_state" = t ]; then
			_bad="$_bad $_do_tid:state=t"
			_bad_state_only=no
		fi
		if [ -n "$_do_want" ] && [ "$_do_state" != "$_do_want" ]; then
			_bad="$_bad $_do_tid:state=$_do_state(expected $_do_want)"
		fi
	done <<EOF
$_tt
EOF
	[ -z "$_bad" ]
}

# ping_answer NAME PID: the main thread of a target still works (it answers
# "ping" with "pong N"), so stackspy left it runnable and its read(2) did
# not fail with EINTR.
ping_answer()
{
	count_prefix_ "$1.out" pong
	_before=$_count
	echo ping > "$1.in"
	_i=0
	while count_prefix_ "$1.out" pong && [ "$_count" -le "$_before" ]; do
		kill -0 "$2" 2>/dev/null || {
			cat "$1.err"
			fail_ "target $1 ($2) died"
		}
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || {
			ls_threads "$2"
			fail_ "target $1 ($2) does not answer ping"
		}
		sleep 0.01
	done
}

# ping_target NAME PID: ping_answer, then every thread is blocked again.
ping_target()
{
	ping_answer "$@"
	wait_asleep "$2"
}

# wait_state PID STATE: wait until the main thread of PID is in STATE.
wait_state()
{
	_i=0
	while task_state_var_ /proc/"$1"/task/"$1" && [ "$_state" != "$2" ]; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || framework_failure_ "$1 never reached state $2"
		sleep 0.01
	done
}

# ---- running stackspy -------------------------------------------------------

# run_stackspy ARG...: run stackspy, stdout in out, stderr in err, exit
# status in rc.  The command line is logged.
run_stackspy()
{
	echo "+ stackspy $*"
	stackspy_ out err "$@"
	[ -s err ] && sed 's/^/  stderr: /' err | head -20
	return 0
}

# stackspy_ OUT ERR ARG...: stackspy ARG..., its stdout in OUT, stderr in
# ERR, exit status in rc.
stackspy_()
{
	_so=$1 _se=$2
	shift 2
	rc=0
	if [ -n "${STACKSPY_TIMEOUT:-}" ]; then
		# A bound for a run that a broken stackspy would never end
		# (the mutations): killed, it exits 124 or 137.
		timeout -k 5 "$STACKSPY_TIMEOUT" "$STACKSPY" "$@" > "$_so" 2> "$_se" || rc=$?
	else
		"$STACKSPY" "$@" > "$_so" 2> "$_se" || rc=$?
	fi
}

# start_stackspy NAME ARG...: run_stackspy ARG... in the background (so
# that independent runs overlap): its stdout, stderr and exit status in
# NAME.o, NAME.e and NAME.rc, its job's pid in NAME.pid.  wait_stackspy
# NAME waits for it and makes it the last run: out, err and rc as
# run_stackspy leaves them, for expect_rc and expect_err_has.
start_stackspy()
{
	_ssn=$1
	shift
	echo "+ stackspy $* & ($_ssn)"
	(
		stackspy_ "$_ssn.o" "$_ssn.e" "$@"
		echo "$rc" > "$_ssn.rc"
	) &
	echo $! > "$_ssn.pid"
}

wait_stackspy()
{
	_wsp=
	read -r _wsp < "$1.pid" 2>/dev/null && wait "$_wsp" 2>/dev/null
	cp "$1.o" out && cp "$1.e" err && read -r rc < "$1.rc" ||
		framework_failure_ "the background stackspy $1 left no result"
	echo "+ stackspy ($1): exited $rc"
	[ -s err ] && sed 's/^/  stderr: /' err | head -20
	return 0
}

# part_start NAME FUNC [ARG...]: run FUNC ARG... in a subshell in the
# background (so that independent parts of a test overlap), in a folder
# NAME of its own (part_name: NAME there, empty in the test itself), its
# output in NAME.log.  A part starts no process with
# start_bg (its bg_pids would die with it): the test starts them first.
# part_wait NAME... waits for each part and shows its output; a part that
# failed (fail_ 1, framework_failure_ 99, anything else: 99) ends the test
# with its status, once all have ended.
part_start()
{
	_pn=$1
	shift
	mkdir "$_pn" || framework_failure_ "mkdir $_pn"
	(
		trap - EXIT
		part_name=$_pn
		cd "$_pn" || framework_failure_ "cannot enter $_pn"
		"$@"
	) > "$_pn.log" 2>&1 &
	echo $! > "$_pn.part"
}

part_wait()
{
	_pw_rc=0
	for _pw; do
		_pw_pid=
		read -r _pw_pid < "$_pw.part" ||
			framework_failure_ "no part $_pw"
		_pw_r=0
		wait "$_pw_pid" || _pw_r=$?
		echo "[part $_pw: exit $_pw_r]"
		cat "$_pw.log"
		case $_pw_r in
		0) ;;
		1|99) [ $_pw_rc != 0 ] || _pw_rc=$_pw_r ;;
		*) [ $_pw_rc != 0 ] || _pw_rc=99 ;;
		esac
	done
	[ $_pw_rc = 0 ] || exit $_pw_rc
}

# expect_rc N: the last run_stackspy exited N.
expect_rc()
{
	[ "$rc" = "$1" ] || {
		head -c 4000 out
		fail_ "stackspy exited $rc, expected $1"
	}
}

# expect_err_line N TEXT: line N of err is exactly TEXT.
expect_err_line()
{
	_got=$(sed -n "$1p" err)
	[ "$_got" = "$2" ] || {
		cat err
		fail_ "stderr line $1 is '$_got', expected '$2'"
	}
}

# expect_err_start N TEXT: line N of err begins with TEXT (a reason may
# follow, e.g. "it is a zombie (its parent 123 has not reaped it)").
expect_err_start()
{
	_got=$(sed -n "$1p" err)
	case $_got in
	"$2"*) ;;
	*) cat err; fail_ "stderr line $1 is '$_got', expected '$2...'" ;;
	esac
}

# expect_err_has TEXT: err contains TEXT (fixed string).
expect_err_has()
{
	grep -qF -- "$1" err || {
		cat err
		fail_ "stderr does not contain '$1'"
	}
}

# expect_no_out: nothing on stdout (a fatal error writes nothing).
expect_no_out()
{
	[ ! -s out ] || { head -c 2000 out; fail_ "stdout is not empty"; }
}

# assert_eq ACTUAL EXPECTED WHAT
assert_eq()
{
	[ "$1" = "$2" ] || fail_ "$3: got '$1', expected '$2'"
}

# sanitized: stackspy was built with AddressSanitizer (configure
# --enable-sanitizers, CI's second run): 2-3 times slower, and freed
# memory held in a quarantine; tests whose bounds measure its speed or
# memory widen them there, and say why.
sanitized()
{
	grep -qa __asan_init "$STACKSPY"
}

# jsonq SUBCOMMAND ARG...: tests/jsonq.py; a failed check fails the test.
jsonq()
{
	"$PYTHON" "$JSONQ" "$@" || jsonq_failed_ "$1" $?
}

# jsonq_gets FILE PID|core|- EXPR...: jsonq gets (the document validated,
# then the EXPRs, in one python run); their values in get1, get2, ...
jsonq_gets()
{
	"$PYTHON" "$JSONQ" gets "$@" > gets.out || jsonq_failed_ gets $?
	_k=1
	while IFS= read -r _v; do
		eval "get$_k=\$_v"
		_k=$((_k + 1))
	done < gets.out
}

# jsonq_failed_ SUBCOMMAND STATUS: a usage error (99) is the framework's,
# anything else a failed check.
jsonq_failed_()
{
	[ "$2" = 99 ] && framework_failure_ "jsonq.py $1 usage"
	fail_ "jsonq.py $1 check failed (see above)"
}

# ---- the threads target -----------------------------------------------------

# check_names FILE PID NAME: the threads of the JSON dump FILE are those
# NAME.out announced ("thread NAME TID"), with those names, and comm is
# the main thread's name.
check_names()
{
	_want=$(sed -n 's/^thread \([^ ]*\) \([0-9]*\)$/\2:\1/p' "$3.out" |
		sort -n | tr '\n' ' ' | sed 's/ $//')
	_got=$(jsonq get "$1" '" ".join("%d:%s" % (t["tid"], t["name"]) for t in d["threads"])')
	assert_eq "$_got" "$_want" "threads (tid:name) of the dump"
	_comm=$(sed -n 's/^thread \([^ ]*\) '"$2"'$/\1/p' "$3.out")
	assert_eq "$(jsonq get "$1" 'd["comm"]')" "$_comm" "comm"
}

# check_states FILE STATE: every thread of the JSON dump FILE has "state"
# STATE.
check_states()
{
	assert_eq "$(jsonq get "$1" '" ".join(sorted(set(t["state"] for t in d["threads"])))')" \
		"$2" "the thread states in the dump"
}

# recurse_x N: "recurse" N times.
recurse_x()
{
	_n=0
	while [ $_n -lt "$1" ]; do
		printf ' recurse'
		_n=$((_n + 1))
	done
}

# DEEP_LEVELS in threads.c, plus one: recurse(48) down to recurse(0).
deep_recurse=49

# chain_ THREAD FUNC...: jsonq chain on $_f for the threads target $_p,
# with the stop reason $_stop when set.
chain_()
{
	_n=$1
	shift
	if [ -n "$_stop" ]; then
		jsonq chain "$_f" "$_n" --own "$_p" --own libdlt.so \
			--top-foreign --stop "$_stop" -- "$@"
	else
		jsonq chain "$_f" "$_n" --own "$_p" --own libdlt.so \
			--top-foreign -- "$@"
	fi
}

# check_threads_chains FILE PROG [STOP]: the call chain of every thread of
# the threads target PROG (see tests/targets/threads.c) in the JSON dump
# FILE: the frames in PROG and libdlt.so, in order, are exactly the
# expected functions, and frame #0 is in libc; with STOP, every thread's
# "stop" is STOP.
check_threads_chains()
{
	_f=$1 _p=$2 _stop=${3-}
	chain_ t-main main_f3 main_f2 main_f1 main _start
	chain_ t-read read_f3 read_f2 read_f1 read_thread
	chain_ t-mutex mutex_f3 mutex_f2 mutex_f1 mutex_thread
	chain_ t-cond cond_f3 cond_f2 cond_f1 cond_thread
	chain_ t-signal sig_f3 sig_f2 sig_f1 sig_handler \
		sigwait_f2 sigwait_f1 signal_thread
	chain_ t-dlopen dlt_f3 dlt_f2 dlt_f1 dlopen_thread
	# shellcheck disable=SC2046
	chain_ t-deep deep_leaf $(recurse_x $deep_recurse) deep_thread
	# The dlopen()ed functions are named from libdlt.so itself.
	assert_eq "$(jsonq get "$_f" '" ".join(sorted(set(f["module"].rsplit("/", 1)[-1] for t in d["threads"] if t["name"] == "t-dlopen" for f in t["frames"] if (f["function"] or "").startswith("dlt_"))))')" \
		libdlt.so "module of dlt_f1..dlt_f3"
}

# dump_threads_target PROG [STACKSPY-ARG...]: start tests/targets/PROG,
# dump it as JSON, check the contract, names, states and chains, then that
# it was left running.  Sets pid.
dump_threads_target()
{
	_prog=$1
	shift
	start_target target "$TARGETS/$_prog"
	pid=$bg_pid
	run_stackspy dump "$pid" --format json "$@"
	expect_rc 0
	jsonq validate out "$pid"
	check_names out "$pid" target
	check_states out S
	check_threads_chains out "$_prog" 'end of stack'
	assert_detached "$pid" S
	ping_target target "$pid"
	[ ! -s target.err ] || { cat target.err; fail_ "the target complained"; }
}

# tid_of NAME THREAD: the tid NAME.out announced for THREAD.
tid_of()
{
	sed -n "s/^thread $2 \\([0-9]*\\)\$/\\1/p" "$1.out"
}

# wait_traced PID TID: wait until TID of PID is traced (stackspy attached).
wait_traced()
{
	_i=0
	while tracer_var_ "/proc/$1/task/$2" && [ "$_tracer" = 0 ]; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || fail_ "stackspy never attached to $2"
		sleep 0.01
	done
}

# Last: tell tests/run-test.sh that init.sh loaded to its end (a test that
# passes or skips without it is a framework error).
[ -z "${STACKSPY_INIT_MARK-}" ] || echo loaded > "$STACKSPY_INIT_MARK" ||
	framework_failure_ "cannot write $STACKSPY_INIT_MARK"
