# record-lib.sh: helpers of the tests/record-*.test scripts (sourced after
# tests/init.sh).  Their target, tests/targets/ratio, never sleeps in its
# worker threads, so init.sh's wait_ready/ping_target (which wait for every
# thread to be asleep) do not apply: these wait for the "ready" line only.

RATIO=$TARGETS/ratio
[ -x "$RATIO" ] || framework_failure_ "no $RATIO"

# start_ratio NAME [ARG...]: start the ratio target with start_bg; return
# once it printed "ready".  Sets bg_pid.
start_ratio()
{
	_name=$1
	shift
	start_bg "$_name" "$RATIO" "$@"
	wait_line "$_name" "$bg_pid"
}

# expected_share FILE: work_heavy's share of (heavy + light) time that the
# target measured on its own CPU clock ("calibration heavy/light R").
expected_share()
{
	_r=$(sed -n 's/^calibration heavy\/light \([0-9.]*\) .*/\1/p' "$1" | head -n 1)
	[ -n "$_r" ] || framework_failure_ "no calibration line in $1"
	awk -v r="$_r" 'BEGIN { printf "%.4f\n", r / (r + 1) }'
}

# check_folded FILE: every line is "frame;...;frame COUNT" with non-empty
# frames and a positive count, the file ends with a newline, and it is not
# empty.
check_folded()
{
	[ -s "$1" ] || fail_ "$1 is empty"
	[ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" = '\n' ] ||
		fail_ "$1 does not end with a newline (truncated?)"
	_bad=$(awk '{
		n = split($0, w, " ")
		cnt = w[n]
		stack = substr($0, 1, length($0) - length(cnt) - 1)
		if (cnt !~ /^[1-9][0-9]*$/ || stack == "" || stack ~ /(^;|;;|;$)/) {
			print NR ": " $0
			exit
		}
	}' "$1")
	[ -z "$_bad" ] || fail_ "$1: not a folded line: $_bad"
}

# leaf_count FILE FUNC: samples whose innermost frame is FUNC.
leaf_count()
{
	awk -v f="$2" '{
		cnt = $NF
		stack = substr($0, 1, length($0) - length(cnt) - 1)
		n = split(stack, fr, ";")
		if (fr[n] == f)
			s += cnt
	} END { print s + 0 }' "$1"
}

# total_count FILE: all samples.
total_count()
{
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

# roots FILE: the distinct root frames, sorted, one line.
roots()
{
	cut -d';' -f1 "$1" | sort -u | tr '\n' ' ' | sed 's/ $//'
}

# check_share FILE WANT TOL: work_heavy / (work_heavy + work_light) in FILE
# is within TOL of WANT, with enough samples to mean something; when a
# loaded machine allowed only a few hundred, within 3.5 standard
# deviations of a sample proportion of that size if that is more.
check_share()
{
	_h=$(leaf_count "$1" work_heavy)
	_l=$(leaf_count "$1" work_light)
	echo "  $1: work_heavy $_h, work_light $_l, expected share $2"
	[ $((_h + _l)) -ge 100 ] ||
		fail_ "$1: only $((_h + _l)) samples in work_heavy/work_light"
	awk -v h="$_h" -v l="$_l" -v w="$2" -v t="$3" 'BEGIN {
		s = h / (h + l); d = s - w; if (d < 0) d = -d
		sd = 3.5 * sqrt(w * (1 - w) / (h + l))
		if (sd > t) t = sd
		printf "  share %.3f, difference %.3f, tolerance %.3f\n", s, d, t
		exit !(d <= t)
	}' || fail_ "$1: work_heavy share $_h/($_h+$_l) is too far from $2"
}

# summary_field WHAT: from err's summary line "N samples in X s: T ticks
# at A Hz (asked R Hz), M missed; K threads seen": samples, seconds, ticks,
# missed, threads.
summary_field()
{
	_line=$(grep '^stackspy: [0-9]* samples in ' err) ||
		{ cat err; fail_ "no summary line on stderr"; }
	# shellcheck disable=SC2086
	set -- "$1" $_line
	case $1 in
	samples) echo "$3" ;;
	seconds) echo "$6" ;;
	ticks)   echo "${8}" ;;
	missed)  echo "${16}" ;;
	threads) echo "${18}" ;;
	esac
}

# check_sample_count RATE RUNNING [ONCPU]: the summary's counts agree with
# RATE x elapsed for at most RUNNING running threads (at least one always
# runs), generously, for the machine may be loaded (a tick that comes too
# late is counted as missed, not run; on a loaded 2-core machine half the
# ticks can be missed): ticks + missed is RATE x elapsed within 15 %,
# samples are between half of ticks x ONCPU and ticks x RUNNING, and at
# least a tenth of RATE x elapsed x ONCPU.  ONCPU (default 1) is the CPU
# time the threads had per second of the recording: on a busy host a
# CPU-bound thread is on a CPU only part of the time, and on-CPU samples
# count only then (DESIGN.md, "On-CPU and wall-clock").
check_sample_count()
{
	_n=$(summary_field samples)
	_s=$(summary_field seconds)
	_t=$(summary_field ticks)
	_m=$(summary_field missed)
	echo "  summary: $_n samples, $_s s, $_t ticks, $_m missed at $1 Hz"
	awk -v n="$_n" -v s="$_s" -v t="$_t" -v m="$_m" -v r="$1" -v k="$2" \
	    -v c="${3:-1}" 'BEGIN {
		want = r * s
		if (c > 1) c = 1
		exit !(t + m >= 0.85 * want - 2 && t + m <= 1.15 * want + 2 &&
		       n <= t * k + 2 && n >= 0.5 * t * c && n >= 0.1 * want * c)
	}' || fail_ "sample count $_n (ticks $_t + missed $_m) does not fit $1 Hz x $_s s x $2 threads (on a CPU ${3:-1} of the time)"
}

# schedstat_ns PID TID: CPU time the thread has run, in ns.
schedstat_ns()
{
	schedstat_var_ "$1" "$2"
	echo "$_ns"
}

# schedstat_var_ PID TID: sets _ns to what schedstat_ns prints, without a
# fork (the polls call it every 10 ms).
schedstat_var_()
{
	_ns=
	read -r _ns _rest 2>/dev/null < "/proc/$1/task/$2/schedstat" || :
	_ns=${_ns:-0}
}

# assert_progress PID TID...: each thread runs (its CPU time grows within
# 5 s) and nobody traces it.
assert_progress()
{
	_p=$1
	shift
	for _tid in "$@"; do
		schedstat_var_ "$_p" "$_tid"
		_b=$_ns
		_i=0
		while schedstat_var_ "$_p" "$_tid" && [ "$_ns" = "$_b" ]; do
			_i=$((_i + 1))
			[ $_i -lt 500 ] || {
				ls_threads "$_p"
				fail_ "thread $_tid of $_p makes no progress"
			}
			sleep 0.01
		done
	done
	assert_detached "$_p"
}


# watch_stops PID [--winch]: watch PID's threads for tracing stops
# (tests/tstop-watch.py), with --winch while it gets a SIGWINCH every
# 20 ms, until watch_end; the watch's pid in watch_pid.
watch_stops()
{
	"$PYTHON" "$abs_top_srcdir/tests/tstop-watch.py" "$1" 600 ${2+"$2"} > watch.out &
	watch_pid=$!
	bg_pids="$bg_pids $watch_pid"
	# Watching before the recording starts (and its SIGTERM handler in
	# place for watch_end).
	_i=0
	until count_prefix_ watch.out watching && [ "$_count" -gt 0 ]; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || framework_failure_ "tests/tstop-watch.py did not start"
		kill -0 "$watch_pid" 2>/dev/null || framework_failure_ "tests/tstop-watch.py exited"
		sleep 0.01
	done
}

# watch_end: end the watch; the longest tracing stop it saw, in ms, in
# watch_ms (a watch that printed nothing is a framework failure).
watch_end()
{
	kill -TERM "$watch_pid" 2>/dev/null
	wait "$watch_pid"
	watch_ms=$(sed -n 's/^max_t_ms //p' watch.out)
	[ -n "$watch_ms" ] || framework_failure_ "tests/tstop-watch.py printed nothing"
}
