# go-lib.sh: sourced by tests/go-*.test after tests/init.sh.  Builds the Go
# target tests/targets/gowork.go in the test's folder, without network,
# caches there too; starts it; checks call chains by name.

# go_build_target: ./gowork, or skip when there is no go command.
go_build_target()
{
	command -v go > /dev/null || skip_ "no go command (Debian: golang-go)"
	GOCACHE=$tmp_dir/gocache GOPATH=$tmp_dir/gopath GOFLAGS=-mod=mod \
	GOPROXY=off GOTOOLCHAIN=local GOTELEMETRY=off \
		go build -o gowork "$abs_top_srcdir/tests/targets/gowork.go" \
		> go-build.log 2>&1 ||
		{ cat go-build.log; framework_failure_ "go build failed"; }
	readelf -S gowork | grep -q '\.debug_frame' ||
		framework_failure_ "the Go target has no .debug_frame"
}

# go_start_target [NAME PROG]: start PROG (./gowork) as NAME (target),
# wait for its "ready" (its hashing and leaf threads never sleep, so not
# for every thread to be asleep); sets pid and tid_hash, tid_leaf,
# tid_read, tid_chan.
go_start_target()
{
	_name=${1:-target}
	start_bg "$_name" "${2:-./gowork}"
	pid=$bg_pid
	wait_line "$_name" "$bg_pid"
	for _n in hash leaf read chan; do
		_t=$(sed -n "s/^thread $_n \\([0-9]*\\)\$/\\1/p" "$_name.out")
		[ -n "$_t" ] || framework_failure_ "gowork did not announce thread $_n"
		eval "tid_$_n=\$_t"
	done
	# The read thread announces itself before it reads: under load its
	# goroutine may still wait for the scheduler (the thread parked in
	# stoplockedm).  Until it sleeps in the pipe's read, at most 10 s.
	_i=0
	while ! grep -q pipe "/proc/$pid/task/$tid_read/wchan" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -lt 1000 ] || break
		sleep 0.01
	done
}

# go_stop: kill -STOP the target and wait until every thread is stopped.
go_stop()
{
	kill -STOP "$pid"
	for _t in /proc/"$pid"/task/*; do
		_i=0
		while [ "$(task_state_ "$_t")" != T ] && [ -d "$_t" ]; do
			_i=$((_i + 1))
			[ $_i -lt 1000 ] || framework_failure_ "${_t##*/} never stopped"
			sleep 0.01
		done
	done
}

# go_chain FILE TID prefix|suffix|has REGEX...: the function names of
# thread TID's frames in the JSON dump FILE begin (prefix), end (suffix:
# and the walk ended with "end of stack") or somewhere have (has) names
# matching the REGEXes in order.  Prints the thread and returns 1 when not.
go_chain()
{
	"$PYTHON" - "$@" <<'PY'
import json, re, sys
path, tid, mode, want = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
doc = json.load(open(path))
th = [t for t in doc["threads"] if t["tid"] == tid]
if not th:
    sys.exit("no thread %d in %s" % (tid, path))
t = th[0]
names = [f["function"] or "??" for f in t["frames"] if not f.get("inlined")]
def match(got):
    return len(got) == len(want) and all(re.fullmatch(w, g) for w, g in zip(want, got))
if mode == "has":
    ok = any(match(names[i:i + len(want)]) for i in range(len(names)))
else:
    ok = match(names[:len(want)] if mode == "prefix" else names[-len(want):])
if mode == "suffix" and t.get("stop") != "end of stack":
    ok = False
if not ok:
    print("thread %d (%s), stop %r:" % (tid, mode, t.get("stop")))
    for i, f in enumerate(t["frames"]):
        print("  #%-3d %s %s how=%s" % (i, f["ip"], f["function"], f["how"]))
    print("wanted: %s" % " ".join(want))
    sys.exit(1)
PY
}
