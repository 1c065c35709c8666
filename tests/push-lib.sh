# push-lib.sh: helpers of the tests of record --push (sourced after
# tests/init.sh through load_lib): tests/push-receiver.py, a stand-in for
# Pyroscope's ingest API on 127.0.0.1.

# receiver DIR [ARG...]: start the receiver with its files in DIR (the
# ARGs are push-receiver.py's: --refuse, --hostile CODE); sets rport.
receiver()
{
	mkdir "$1"
	start_bg "$1" "$PYTHON" "$abs_top_srcdir/tests/push-receiver.py" "$@"
	_i=0
	while [ ! -s "$1/port" ]; do
		_i=$((_i + 1))
		[ $_i -lt 200 ] || { cat "$1.err"; framework_failure_ "the receiver did not start"; }
		sleep 0.05
	done
	rport=$(cat "$1/port")
}
