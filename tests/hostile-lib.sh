# hostile-lib.sh: helpers of the tests/security-*.test scripts (sourced
# after tests/init.sh through load_lib).  stackspy runs as root against
# other users' processes; these tests play the other user: an
# unprivileged uid that plants symlinks, files and names for root's
# stackspy to trip over.
#
# The user is nobody (65534), present on every Debian and Ubuntu system
# and owning nothing: a user added by useradd in each test would race
# with the other tests for /etc/passwd's lock under make -j and could be
# left behind by a killed test.

HOSTILE_UID=65534
HOSTILE_GID=65534

# hostile_init: skip unless root can act as the hostile user; sets
# $as_user (a command prefix) and makes the test's folder reachable.
hostile_init()
{
	[ "$(id -u)" = 0 ] || skip_ "not root: these tests are about root's stackspy"
	command -v setpriv > /dev/null || skip_ "no setpriv (util-linux)"
	as_user="setpriv --reuid=$HOSTILE_UID --regid=$HOSTILE_GID --clear-groups"
	$as_user true || skip_ "setpriv cannot become uid $HOSTILE_UID"
	chmod 755 "$tmp_dir"
}

# user_exe PROG: print a path of PROG that the hostile user may run: PROG
# itself, or a copy in the test's folder when the build tree is out of
# its reach (under /root).
user_exe()
{
	if $as_user test -x "$1"; then
		echo "$1"
		return
	fi
	cp "$1" "$tmp_dir/" && chmod 755 "$tmp_dir/${1##*/}" ||
		framework_failure_ "cannot copy $1"
	$as_user test -x "$tmp_dir/${1##*/}" ||
		skip_ "uid $HOSTILE_UID cannot run programs from $tmp_dir"
	echo "$tmp_dir/${1##*/}"
}

# shared_tmp NAME: make NAME a directory like /tmp: root's, sticky, and
# writable by everyone.
shared_tmp()
{
	mkdir "$1" && chmod 1777 "$1" || framework_failure_ "mkdir $1"
}

# root_secret FILE TEXT: a file only root may read, holding TEXT.
root_secret()
{
	printf '%s\n' "$2" > "$1" && chmod 600 "$1" || framework_failure_ "cannot write $1"
}

# assert_file FILE TEXT MODE: FILE still holds just TEXT, with MODE (ls -l
# style, e.g. -rw-------) and root as its owner.
assert_file()
{
	[ "$(cat "$1")" = "$2" ] || fail_ "$1 was written: $(head -c 200 "$1")"
	_ls=$(ls -ln "$1")
	set -- "$1" "$2" "$3" $_ls
	[ "$4" = "$3" ] || fail_ "the mode of $1 is now $4, was $3"
	[ "$6" = 0 ] || fail_ "the owner of $1 is now $6"
}

# hostile_symbol_exe DEST: a copy of tests/targets/evilname at DEST whose
# sleeping thread's function is named by hostile bytes, as a target's own
# ELF file may name it: evil_RLOfn_x41 becomes evil_<U+202E>fn\x41 (a
# right-to-left override and a backslash; the same length) wherever the
# name is (.strtab, .debug_str).
hostile_symbol_exe()
{
	cp "$TARGETS/evilname" "$1" || framework_failure_ "cannot copy evilname"
	_offs=$(LC_ALL=C grep -obUaF evil_RLOfn_x41 "$1" | cut -d: -f1)
	[ -n "$_offs" ] || framework_failure_ "no evil_RLOfn_x41 in evilname"
	for _o in $_offs; do
		printf 'evil_\342\200\256fn\\x41' |
			dd of="$1" bs=1 seek="$_o" conv=notrunc 2> /dev/null ||
			framework_failure_ "cannot patch $1"
	done
	chmod 755 "$1"
}
