#!/bin/sh
# tests/py-trixie-root.sh DIR: a Debian 13 (trixie) root at DIR holding
# Debian's own /usr/bin/python3.13, for the Python-frames tests on a
# Debian 12 host (CPython 3.13 and its _Py_DebugOffsets as Debian builds
# them).  Run the interpreter with `chroot DIR /usr/bin/python3.13 ...`:
# the host sees the process, /proc/PID/root -> DIR, and (a plain chroot,
# no mount namespace) its maps and /proc/PID/exe name the host's path,
# DIR/usr/bin/python3.13, so /proc/PID/root + that path does not exist;
# /proc/PID/map_files/ (root) or /proc/PID/root/usr/bin/python3.13 do.
#
# Idempotent: when DIR/usr/bin/python3.13 exists it only prints DIR.
# Otherwise debootstrap (minbase + python3.13-minimal) builds into DIR.tmp,
# which is renamed to DIR only once complete, so a half-made root is never
# used; concurrent runs for the same DIR wait on DIR.lock (flock).
#
# Prints DIR on success (exit 0).  Exit 77 with a one-line reason on
# stderr when the root cannot be made here (no debootstrap, not root, the
# download or debootstrap failed or timed out: tests skip on 77); 2 for
# bad usage; 1 when DIR exists but is not such a root (left untouched).
#
# Environment: STACKSPY_DEBIAN_MIRROR (default http://deb.debian.org/debian,
# the mirror this project's machines' apt uses), STACKSPY_TRIXIE_TIMEOUT
# (seconds for debootstrap, default 1800).  Needs root, the network to the
# Debian archive the first time, and about 200 MB.

MIRROR=${STACKSPY_DEBIAN_MIRROR:-http://deb.debian.org/debian}
LIMIT=${STACKSPY_TRIXIE_TIMEOUT:-1800}
PY=usr/bin/python3.13

skip() { echo "py-trixie-root: $*" >&2; exit 77; }
die() { echo "py-trixie-root: $*" >&2; exit 1; }

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
DIR=${1%/}
[ -n "$DIR" ] || { echo "$0: DIR must not be /" >&2; exit 2; }

if [ -x "$DIR/$PY" ]; then
	echo "$DIR"
	exit 0
fi

# debootstrap and the chroot it runs live in sbin, often not on a user's PATH.
PATH=$PATH:/usr/sbin:/sbin
export PATH
DEBOOTSTRAP=$(command -v debootstrap 2>/dev/null) ||
	skip "no debootstrap (apt-get install debootstrap)"
[ "$(id -u)" = 0 ] || skip "debootstrap needs root"

# An absolute DIR: debootstrap wants one, and so does the mount check below.
parent=$(dirname "$DIR")
mkdir -p "$parent" || skip "cannot create $parent"
parent=$(cd "$parent" && pwd -P) || skip "cannot enter $parent"
DIR=$parent/$(basename "$DIR")
TMP=$DIR.tmp
LOG=$DIR.log

# One builder at a time per DIR (make check -j); the loser of the race
# finds the finished root after the lock.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$DIR.lock" || skip "cannot create $DIR.lock"
	flock 9 || skip "cannot lock $DIR.lock"
	if [ -x "$DIR/$PY" ]; then
		echo "$DIR"
		exit 0
	fi
fi
[ -e "$DIR" ] && die "$DIR exists but has no $PY: not touching it"

# Mounts left under TMP by an interrupted debootstrap (proc, sys, ...):
# unmount them, deepest first, before anything removes TMP.
umount_under()
{
	awk -v p="$1" '$2 == p || index($2, p "/") == 1 { print $2 }' /proc/self/mounts |
		sort -r | while read -r m; do umount "$m" || umount -l "$m"; done
	! awk -v p="$1" '$2 == p || index($2, p "/") == 1 { f = 1 } END { exit !f }' /proc/self/mounts
}
clean_tmp()
{
	[ -e "$TMP" ] || return 0
	umount_under "$TMP" || die "mounts left under $TMP: not removing it"
	rm -rf "$TMP" || die "cannot remove $TMP"
}
clean_tmp
trap 'umount_under "$TMP" >/dev/null 2>&1' EXIT
trap 'exit 77' HUP INT TERM

if command -v timeout >/dev/null 2>&1; then
	TO="timeout $LIMIT"
else
	TO=
fi
# shellcheck disable=SC2086
$TO "$DEBOOTSTRAP" --variant=minbase --include=python3.13-minimal \
	trixie "$TMP" "$MIRROR" > "$LOG" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	[ -f "$TMP/debootstrap/debootstrap.log" ] &&
		cat "$TMP/debootstrap/debootstrap.log" >> "$LOG"
	clean_tmp
	[ $rc -eq 124 ] && skip "debootstrap timed out after ${LIMIT}s (log: $LOG)"
	why=$(grep '^E: ' "$LOG" | tail -n 1)
	skip "debootstrap trixie from $MIRROR failed (exit $rc${why:+: $why}; log: $LOG)"
fi
[ -x "$TMP/$PY" ] || { clean_tmp; skip "debootstrap made no $PY (log: $LOG)"; }
umount_under "$TMP" || die "mounts left under $TMP"
rm -f "$TMP"/var/cache/apt/archives/*.deb	# 35 MB nobody reads
mv "$TMP" "$DIR" || die "cannot rename $TMP to $DIR"
rm -f "$LOG"
echo "$DIR"
