# top-lib.sh: helpers of the tests/top-*.test scripts (sourced after
# tests/init.sh): the demo workload, and `stackspy top` driven as a user
# would, in tmux (a private server: -L, no config file), the screen read
# back with capture-pane.  The tmux server goes at exit with everything in
# it; init.sh kills the targets started with start_bg.

DEMO=$abs_top_builddir/demo/stackspy-demo
[ -x "$DEMO" ] || framework_failure_ "no $DEMO"

# Compiled without ncursesw, top says so (before it needs a terminal).
if "$STACKSPY" top -p 1 2>&1 >/dev/null | grep -q 'not built in'; then
	skip_ "top is not built in (configure found no ncursesw)"
fi

# The screen has UTF-8 (the ellipsis): tmux and top both need the locale.
LC_ALL=C.UTF-8
export LC_ALL
locale -a 2>/dev/null | grep -qix 'c.utf-\?8' || skip_ "no C.UTF-8 locale"

# The sockets live in the test's folder, removed at exit with it.
TMUX_TMPDIR=$tmp_dir
export TMUX_TMPDIR
unset TMUX
# One tmux server per top_start: a server that was just killed may still
# hold its socket when the next one starts.  In a part of a test
# (part_start, init.sh) the names carry the part's name: its servers are
# not those of the other parts.  At exit, every server
# of the test goes, the parts' too (their sockets are in $TMUX_TMPDIR).
tmux_n=0
tmux_sock=stackspy-$me-$$-0
tm() { tmux -L "$tmux_sock" -f /dev/null "$@"; }
tmux_cleanup()
{
	for _s in "$TMUX_TMPDIR"/tmux-*/"stackspy-$me-$$-"*; do
		[ -S "$_s" ] || continue
		tmux -S "$_s" kill-server 2>/dev/null
	done
}
trap '_rc=$?; tmux_cleanup; cleanup_ $_rc; exit $?' EXIT

# start_demo [ARG...]: the demo workload (demo/demo.c: two workers in
# crunch -> compute_primes 3/4, hash_block 1/4; waiter, reader, sleeper,
# main blocked) in the background; returns once its 6 threads are named.
# Sets pid.
start_demo()
{
	start_bg demo "$DEMO" "$@"
	pid=$bg_pid
	_i=0
	while [ "$(cat /proc/"$pid"/task/*/comm 2>/dev/null | grep -c -e worker -e waiter -e reader -e sleeper)" -lt 5 ]; do
		kill -0 "$pid" 2>/dev/null || { cat demo.err; framework_failure_ "the demo died"; }
		_i=$((_i + 1))
		[ $_i -lt 600 ] || framework_failure_ "the demo threads did not start"
		sleep 0.05
	done
}

# top_start W H ARG...: run `stackspy top ARG...` in a new tmux session of
# W x H; its exit status goes to ./rc (in the folder top_start was called
# in), then the pane stays (sleep) so the screen after exit can be read.
# Sets top_pid.
top_start()
{
	_w=$1 _h=$2
	shift 2
	rm -f rc
	tmux_n=$((tmux_n + 1))
	tmux_sock=stackspy-$me-$$-$part_name$tmux_n
	echo "+ stackspy top $* (tmux ${_w}x$_h)"
	tm new-session -d -s top -x "$_w" -y "$_h" \
		"'$STACKSPY' top $*; echo \$? > '$PWD/rc'; exec sleep 300" ||
		framework_failure_ "tmux new-session failed"
	_shell=$(tm list-panes -t top -F '#{pane_pid}')
	_i=0
	top_pid=
	while [ -z "$top_pid" ] && [ ! -e rc ]; do
		top_pid=$(pgrep -P "$_shell" -x stackspy)
		_i=$((_i + 1))
		[ $_i -lt 600 ] || framework_failure_ "stackspy top did not start"
		sleep 0.05
	done
}

# screen: the pane as text.
screen() { tm capture-pane -p -t top; }

# keys KEY...: tmux send-keys.  What the keys bring is waited for next
# (wait_screen, wait_screen_gone, wait_rc), not a fixed pause: a key sent
# before the last one's screen came may be read as part of it (Escape,
# then q within top's 50 ms escape delay).
keys()
{
	tm send-keys -t top "$@"
}

# screen_until_ 1|0 ERE MESSAGE: wait (30 s at most) until the screen has
# (1) or has no (0) line matching ERE; fails with MESSAGE.
screen_until_()
{
	_i=0
	while :; do
		if screen | grep -qE -- "$2"; then _has=1; else _has=0; fi
		[ $_has != "$1" ] || return 0
		_i=$((_i + 1))
		[ $_i -lt 300 ] || {
			screen
			fail_ "$3"
		}
		sleep 0.1
	done
}

# wait_screen ERE [WHAT]: wait until the screen has a line matching ERE.
wait_screen()
{
	screen_until_ 1 "$1" "${2:-the screen} never showed /$1/"
}

# wait_screen_gone ERE [WHAT]: wait until no line of the screen matches
# ERE.
wait_screen_gone()
{
	screen_until_ 0 "$1" "${2:-the screen} still shows /$1/"
}

# samples_shown: the "Samples:" figure of the header, without commas.
samples_shown()
{
	screen | sed -n 's/.*Samples: \([0-9,]*\).*/\1/p' | tr -d , | head -n 1
}

# wait_samples N: until the header counts at least N samples.
wait_samples()
{
	_i=0
	while [ "$(samples_shown)" -lt "$1" ] 2>/dev/null || [ -z "$(samples_shown)" ]; do
		_i=$((_i + 1))
		[ $_i -lt 600 ] || { screen; fail_ "fewer than $1 samples after 60 s"; }
		sleep 0.1
	done
}

# rows: the table's data rows ("%Self %Total Self Total Function Module").
rows() { screen | grep -E '^ *[0-9.]+% +[0-9.]+% '; }

# col FUNCTION N: field N of FUNCTION's row (1: %Self, 2: %Total), no '%'.
col()
{
	rows | awk -v f="$1" -v n="$2" '$5 == f { sub("%", "", $n); print $n; exit }'
}

# first_function: the function of the first data row.
first_function() { rows | awk 'NR == 1 { print $5 }'; }

# wait_rc: until top has exited; sets top_rc.
wait_rc()
{
	_i=0
	while [ ! -s rc ]; do
		_i=$((_i + 1))
		[ $_i -lt 300 ] || { screen; fail_ "stackspy top did not exit"; }
		sleep 0.1
	done
	top_rc=$(cat rc)
}

# assert_restored: after top exited, the pane is the shell's again: no
# table (the alternate screen is gone) and the cursor is visible.
assert_restored()
{
	! screen | grep -q 'Function' || { screen; fail_ "the table is still on the screen after exit"; }
	[ "$(tm display-message -p -t top '#{cursor_flag}')" = 1 ] ||
		fail_ "the cursor is still hidden after exit"
}
