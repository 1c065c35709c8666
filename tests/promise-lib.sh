# promise-lib.sh: helpers of the tests/promise-*.test scripts (sourced after
# tests/init.sh), the tests of DESIGN.md's "ptrace rules": every signal is
# delivered, a kill -STOPped process stays stopped and uses no CPU time,
# SIGCONT resumes it, a SIGKILLed stackspy leaves its targets running.
# Their target is tests/targets/sigcount (it counts the real-time signals
# it receives; "sigcount send" queues them).

SIGCOUNT=$TARGETS/sigcount
[ -x "$SIGCOUNT" ] || framework_failure_ "no $SIGCOUNT"

# start_sigcount NAME [ARG...]: start sigcount with start_bg; return once it
# printed "ready" (its workers never sleep: no wait_asleep).  Sets bg_pid.
start_sigcount()
{
	_name=$1
	shift
	start_bg "$_name" "$SIGCOUNT" "$@"
	wait_line "$_name" "$bg_pid"
}

# signal_count NAME PID: the number of signals the sigcount target NAME
# (PID) has handled so far (it answers "count" with "count N").
signal_count()
{
	count_prefix_ "$1.out" "count "
	_before=$_count
	echo count > "$1.in"
	_i=0
	while count_prefix_ "$1.out" "count " && [ "$_count" -le "$_before" ]; do
		kill -0 "$2" 2>/dev/null || { cat "$1.err"; fail_ "target $1 ($2) died"; }
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || { ls_threads "$2"; fail_ "target $1 ($2) does not answer count"; }
		sleep 0.01
	done
	# The last count line (one sed, not sed | tail).
	sed -n '/^count [0-9]*$/{s/^count //;h;}; ${x;p;}' "$1.out"
}

# expect_count NAME PID N WHAT: the target's count reaches N (signals may
# still be queued for a moment; those that were dropped never come: give
# up when the count has not moved for 3 s) and does not pass it.
expect_count()
{
	_last=-1 _still=0
	while :; do
		_c=$(signal_count "$1" "$2")
		case $_c in
		''|*[!0-9]*) echo "$_c"; fail_ "$4: no count from the target" ;;
		esac
		[ "$_c" = "$3" ] && return 0
		[ "$_c" -gt "$3" ] && fail_ "$4: the target handled $_c signals, more than the $3 sent"
		if [ "$_c" = "$_last" ]; then
			_still=$((_still + 1))
			[ $_still -lt 30 ] ||
				fail_ "$4: the target handled $_c signals of $3 sent ($(($3 - _c)) lost)"
		else
			_still=0
		fi
		_last=$_c
		sleep 0.1
	done
}

# send_signals PID N MS [TID]: sigcount send in the background, its output in
# send.N.out; adds its pid to send_pids.
send_n=0
send_pids=
send_signals()
{
	send_n=$((send_n + 1))
	"$SIGCOUNT" send "$@" > "send.$send_n.out" 2> "send.$send_n.err" &
	send_pids="$send_pids $!"
}

# wait_senders: wait for the senders; sets sent to the total they sent.
wait_senders()
{
	sent=0
	for _p in $send_pids; do
		wait "$_p" || {
			cat send.*.err
			# It fails when its target is gone: that is the test's
			# failure, not the framework's.
			for _t in $bg_pids; do
				kill -0 "$_t" 2>/dev/null || fail_ "target $_t died"
			done
			framework_failure_ "a sender failed"
		}
	done
	send_pids=
	for _f in send.*.out; do
		_s=$(sed -n 's/^sent \([0-9]*\)$/\1/p' "$_f")
		[ -n "$_s" ] || framework_failure_ "no 'sent' line in $_f"
		sent=$((sent + _s))
		rm -f "$_f"
	done
}

# start_record ARG...: stackspy record ARG... in the background (record_pid),
# stdout in out, stderr in err.  It is one of the test's processes: a test
# that fails while it records ends it before its folder goes (it wrote its
# output there as the cleanup removed it, and the folder stayed).
start_record()
{
	echo "+ stackspy record $* &"
	"$STACKSPY" record "$@" > out 2> err &
	record_pid=$!
	bg_pids="$bg_pids $record_pid"
}

# stop_record: SIGINT to the recording, wait for it; it must exit 0.
stop_record()
{
	kill -INT "$record_pid"
	_rc=0
	wait "$record_pid" || _rc=$?
	sed 's/^/  stderr: /' err | head -20
	[ "$_rc" = 0 ] || fail_ "stackspy record exited $_rc, expected 0"
}

# wait_record: wait for the recording to end by itself; it must exit 0.
wait_record()
{
	_rc=0
	wait "$record_pid" || _rc=$?
	sed 's/^/  stderr: /' err | head -20
	[ "$_rc" = 0 ] || fail_ "stackspy record exited $_rc, expected 0"
}

# samples: the sample count of the last recording's summary line on err
# ("stackspy: N samples in ...").
samples()
{
	_l=$(grep '^stackspy: [0-9]* samples in ' err) ||
		{ cat err; fail_ "no summary line on stderr"; }
	set -- $_l
	echo "$2"
}

# stat_field PID N: field N of /proc/PID/stat (N >= 3, counted as in
# proc(5): 3 state, 14 utime, 15 stime, in clock ticks for the whole
# process).
stat_field()
{
	_line=
	read -r _line < "/proc/$1/stat" || framework_failure_ "no /proc/$1/stat"
	set -- "$2" ${_line##*) }
	shift $(($1 - 2))
	echo "$1"
}

# cpu_ticks PID: "UTIME STIME" of the process (all its threads).
cpu_ticks()
{
	echo "$(stat_field "$1" 14) $(stat_field "$1" 15)"
}

# wait_utime PID BEFORE TICKS STEPS WHAT [SPID]: until the utime of PID
# has grown by more than TICKS clock ticks since BEFORE (cpu_ticks'
# "UTIME STIME"), polled every 10 ms, STEPS times at most; fails WHAT when
# it has not, or when the stackspy SPID has ended first.
wait_utime()
{
	_wu_before=${2%% *}
	_wu_i=0
	while _wu_ran=$(($(stat_field "$1" 14) - _wu_before)) && [ $_wu_ran -le "$3" ]; do
		if [ -n "${6-}" ] && ! kill -0 "$6" 2>/dev/null; then
			ls_threads "$1"
			fail_ "$5: stackspy ended first (utime +$_wu_ran clock ticks)"
		fi
		_wu_i=$((_wu_i + 1))
		[ $_wu_i -lt "$4" ] || fail_ "$5 (utime +$_wu_ran clock ticks in $(($4 / 100)).$(($4 % 100 / 10)) s)"
		sleep 0.01
	done
}

# stop_target PID: kill -STOP, and wait until every thread is in group-stop.
stop_target()
{
	kill -STOP "$1"
	for _t in /proc/"$1"/task/*; do
		_i=0
		while [ "$(task_state_ "$_t")" != T ]; do
			_i=$((_i + 1))
			[ $_i -lt 1000 ] || framework_failure_ "${_t##*/} never stopped"
			sleep 0.01
		done
	done
}

# assert_no_cpu PID BEFORE WHAT: the process used no CPU time since
# cpu_ticks gave BEFORE ("UTIME STIME"): its user time did not move by more
# than one clock tick (a tick of accounting can land late), nor its user +
# system time by more than two (a tracee that enters a ptrace stop runs a
# few microseconds of kernel code).  A stopped process that ran for even
# 30 ms of a recording fails this.
assert_no_cpu()
{
	set -- "$1" $2 "$3" $(cpu_ticks "$1")
	_du=$(($5 - $2)) _ds=$(($6 - $3))
	echo "  $4: utime +$_du, stime +$_ds clock ticks"
	[ $_du -le 1 ] && [ $((_du + _ds)) -le 2 ] || {
		ls_threads "$1"
		fail_ "$4: the stopped process ran (utime +$_du, stime +$_ds clock ticks)"
	}
}

# assert_stopped PID WHAT: every thread in group-stop (T) and untraced.
# A thread detached from its group-stop passes through R in the kernel on
# its way back into the stop (no user code runs: assert_no_cpu checks
# that), so wait for T, 2 s at most: a hang guard.
assert_stopped()
{
	_i=0
	while :; do
		# One look, without a fork (init.sh's thread_scan_).
		thread_scan_ "$1"
		_bad=
		while read -r _as_tid _as_state _as_tracer _as_rest; do
			[ -n "$_as_tid" ] || continue
			[ "$_as_state" = T ] && [ "$_as_tracer" = 0 ] ||
				_bad="thread $_as_tid in state $_as_state, TracerPid $_as_tracer"
		done <<EOF
$_tt
EOF
		[ -z "$_bad" ] && return 0
		_i=$((_i + 1))
		[ $_i -lt 200 ] || {
			ls_threads "$1"
			fail_ "$2: $_bad (expected T, 0)"
		}
		sleep 0.01
	done
}

# assert_running PID WHAT: no thread stopped (t or T) or traced.
assert_running()
{
	kill -0 "$1" 2>/dev/null || fail_ "$2: the target died"
	_bad=$(thread_table_ "$1" | awk '
		$2 == "t" || $2 == "T" { print "thread " $1 " left in state " $2; exit }
		$3 != 0 { print "thread " $1 " still traced by " $3; exit }')
	[ -z "$_bad" ] || {
		ls_threads "$1"
		fail_ "$2: $_bad"
	}
}

# rnd N: a random number in [0, N).
rnd()
{
	echo $(($(od -An -N2 -tu2 /dev/urandom) % $1))
}

# sleep_ms MS (no awk: the milliseconds padded to three digits by hand)
sleep_ms()
{
	_ms=$(($1 % 1000 + 1000))
	sleep "$(($1 / 1000)).${_ms#1}"
}
