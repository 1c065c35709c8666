# bench/lib.sh: what the bench scripts share; sourced by them
# (. "$(dirname "$0")/lib.sh").  Sets top (the source tree) and build (the
# build tree: $BUILD, else the current folder when it holds a built
# stackspy, as after an out-of-tree build, else the source tree).

top=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${BUILD-}" ]; then
	build=$BUILD
elif [ -x ./stackspy ]; then
	build=$(pwd)
else
	build=$top
fi

# start_burners N: N CPU-bound processes (tests/targets/sleepwork -B) that
# load the host; their pids are added to $pids for the caller's cleanup.
start_burners()
{
	[ "$1" -gt 0 ] || return 0
	[ -x "$build/tests/targets/sleepwork" ] ||
		{ echo "$0: no tests/targets/sleepwork (make tests/targets/sleepwork)" >&2; exit 2; }
	_b=0
	while [ $_b -lt "$1" ]; do
		"$build/tests/targets/sleepwork" -B &
		pids="$pids $!"
		_b=$((_b + 1))
	done
	sleep 0.2
}

# cleanup: the EXIT trap of the benches (trap cleanup EXIT): kill every
# process in $pids and remove $tmp.  Under set -e a kill of a process that
# is already gone would end the trap there and leave the others running
# (the demo daemon outlived record-pause.sh so): nothing here may fail.
cleanup()
{
	for _p in ${pids-}; do
		kill "$_p" 2>/dev/null || :
	done
	[ -z "${tmp-}" ] || rm -rf "$tmp"
}

# need_built PROGRAM...: each PROGRAM (a path in the build tree, such as
# stackspy or bench/parked) is built, or the script ends saying so.
need_built()
{
	for _p in "$@"; do
		[ -x "$build/$_p" ] || { echo "$0: no $build/$_p: build first (./bootstrap)" >&2; exit 2; }
	done
}
