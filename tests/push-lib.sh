# push-lib.sh: helpers of the tests of record --push (sourced after
# tests/init.sh through load_lib): tests/push-receiver.py, a stand-in for
# Pyroscope's ingest API on 127.0.0.1.

# receiver DIR [ARG...]: start the receiver with its files in DIR (the
# ARGs are push-receiver.py's: --refuse, --hostile CODE); sets rport.
receiver()
{
	receiver_start "$@"
	receiver_port "$1"
}

# receiver_start DIR [ARG...]: start it only (several can start at once,
# their python3 starts overlapping); receiver_port DIR then waits for it
# to listen and sets rport.
receiver_start()
{
	mkdir "$1"
	start_bg "$1" "$PYTHON" "$abs_top_srcdir/tests/push-receiver.py" "$@"
}
receiver_port()
{
	_i=0
	while [ ! -s "$1/port" ]; do
		_i=$((_i + 1))
		[ $_i -lt 200 ] || { cat "$1.err"; framework_failure_ "the receiver did not start"; }
		sleep 0.05
	done
	read -r rport < "$1/port"
}

# record_bg NAME ARG...: stackspy ARG... in the background (bounded by
# STACKSPY_TIMEOUT as run_stackspy is), its stdout, stderr and exit code
# in NAME.o, NAME.e, NAME.rc; record_pid (and NAME.pid) is the job's PID.  record_got
# NAME waits for it and makes it the current run: out, err and rc as
# run_stackspy leaves them, for expect_rc and expect_err_has.
record_bg()
{
	_name=$1
	shift
	echo "+ stackspy $* (in the background: $_name)"
	(
		rc=0
		if [ -n "${STACKSPY_TIMEOUT:-}" ]; then
			timeout -k 5 "$STACKSPY_TIMEOUT" "$STACKSPY" "$@" > "$_name.o" 2> "$_name.e" || rc=$?
		else
			"$STACKSPY" "$@" > "$_name.o" 2> "$_name.e" || rc=$?
		fi
		echo "$rc" > "$_name.rc"
	) &
	record_pid=$!
	echo "$record_pid" > "$_name.pid"
}
record_got()
{
	wait "$(cat "$1.pid")" 2>/dev/null || :
	cp "$1.o" out && cp "$1.e" err && read -r rc < "$1.rc" ||
		framework_failure_ "the background record $1 left no result"
	echo "+ stackspy ($1)"
	[ -s err ] && sed 's/^/  stderr: /' err | head -20
	return 0
}
