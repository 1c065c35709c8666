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
