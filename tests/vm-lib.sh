# tests/vm-lib.sh - sourced by tests/vm-*.test (after tests/init.sh): run
# a cross-built, static stackspy live inside an emulated machine.
#
# The guest is Debian 12's own: its kernel and busybox-static for the
# architecture, and the -dev libraries stackspy links, fetched with
# apt-get download into a cache (STACKSPY_VM_CACHE, default
# ~/.cache/stackspy-vm) through a private apt state (lists of that one
# architecture under the cache: no dpkg --add-architecture, no root, the
# host's packages untouched), and unpacked there with dpkg-deb -x.  The
# stackspy under test is this tree's: `make distdir` of the build tree,
# configured with --host for the cross compiler against the unpacked
# libraries and linked -static.  The targets are tests/targets/vm/live.c
# cross-compiled.  An initramfs (cpio newc) holds busybox, stackspy, the
# targets, the dynamic targets' libc and tests/vm-init.sh as /init, which
# dumps and records each target and prints everything to the serial
# console between @@ markers; tests/vm-check.py checks it on the host.
#
# A missing piece on the host (qemu-system-*, the cross compiler, cpio,
# apt, the network for a first download) skips the test, saying which.

VM_CACHE=${STACKSPY_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/stackspy-vm}
VM_LIB=$abs_top_srcdir/tests/vm-lib.sh
for _f in tests/vm-init.sh tests/vm-check.py tests/targets/vm/live.c; do
	[ -f "$abs_top_srcdir/$_f" ] || framework_failure_ "no $abs_top_srcdir/$_f"
done

# vm_need COMMAND PACKAGE: skip unless COMMAND is on PATH.
vm_need()
{
	command -v "$1" >/dev/null 2>&1 || skip_ "no $1 (install $2; ./bootstrap does)"
}

# vm_fetch DEBARCH KERNEL-METAPACKAGE PACKAGE...: the packages of DEBARCH,
# with the kernel the metapackage depends on, unpacked into VM_ROOT
# ($VM_CACHE/DEBARCH/root).  Done once: later runs, offline too, reuse the
# cache while the list of packages is the same.
vm_fetch()
{
	_arch=$1 _meta=$2
	shift 2
	_dir=$VM_CACHE/$_arch
	VM_ROOT=$_dir/root
	_want="$_meta $*"
	if [ -f "$_dir/complete" ] && [ "$(cat "$_dir/complete")" = "$_want" ]; then
		return 0
	fi
	vm_need apt-get apt
	vm_need dpkg-deb dpkg
	rm -rf "$_dir"
	mkdir -p "$_dir/apt/lists/partial" "$_dir/apt/archives/partial" "$_dir/debs" ||
		framework_failure_ "cannot create $_dir"
	_apt="-q -o APT::Architectures=$_arch -o Dir::State::Lists=$_dir/apt/lists"
	_apt="$_apt -o Dir::Cache=$_dir/apt -o Debug::NoLocking=1"
	echo "fetching Debian's $_arch packages into $_dir"
	# shellcheck disable=SC2086
	apt-get $_apt update > "$_dir/apt.log" 2>&1 &&
		ls "$_dir"/apt/lists/*_binary-"${_arch}"_Packages* > /dev/null 2>&1 ||
		skip_ "cannot fetch the $_arch package lists (offline?): $(tail -n 1 "$_dir/apt.log")"
	# shellcheck disable=SC2086
	_kernel=$(apt-cache $_apt depends "$_meta:$_arch" 2>>"$_dir/apt.log" |
		sed -n 's/^ *Depends: \(linux-image-[^:]*\).*/\1/p' | head -n 1)
	[ -n "$_kernel" ] || skip_ "no kernel behind $_meta:$_arch in the package lists"
	_pkgs="$_kernel:$_arch"
	for _p; do _pkgs="$_pkgs $_p:$_arch"; done
	# shellcheck disable=SC2086
	(cd "$_dir/debs" && apt-get $_apt download $_pkgs) >> "$_dir/apt.log" 2>&1 ||
		skip_ "cannot download $_pkgs (offline?): $(tail -n 1 "$_dir/apt.log")"
	for _deb in "$_dir"/debs/*.deb; do
		dpkg-deb -x "$_deb" "$VM_ROOT" || framework_failure_ "dpkg-deb -x $_deb"
	done
	rm -rf "$_dir/apt"
	echo "$_want" > "$_dir/complete"
}

# vm_build_stackspy TRIPLET CONFIGURE-ARG...: this tree's stackspy,
# cross-built and linked -static against the libraries in VM_ROOT, as
# ./stackspy-guest.  A failure here is the test's failure.
vm_build_stackspy()
{
	_triplet=$1
	shift
	"${MAKE:-make}" -s -C "$abs_top_builddir" distdir distdir="$tmp_dir/src" \
		> distdir.log 2>&1 || { cat distdir.log; framework_failure_ "make distdir failed"; }
	mkdir build || framework_failure_ "mkdir build"
	_t0=$(date +%s)
	(cd build &&
	 PKG_CONFIG_SYSROOT_DIR=$VM_ROOT \
	 PKG_CONFIG_LIBDIR=$VM_ROOT/usr/lib/$_triplet/pkgconfig:$VM_ROOT/usr/share/pkgconfig \
	 ../src/configure --host="$_triplet" --enable-werror --without-ncurses \
		--without-demangle --without-libdw "$@" \
		PKG_CONFIG="pkg-config --static" LDFLAGS=-static CFLAGS="-g -O2" &&
	 "${MAKE:-make}" -j"$(nproc 2>/dev/null || echo 2)" stackspy) > build.log 2>&1 ||
		{ tail -n 40 build.log; fail_ "the $_triplet cross build of stackspy failed"; }
	mv build/stackspy stackspy-guest
	echo "cross build for $_triplet: $(($(date +%s) - _t0)) s"
}

# vm_target NAME CC FLAGS...: tests/targets/vm/live.c built as NAME.
vm_target()
{
	vm_target_from live.c "$@"
}

# vm_target_from SOURCE NAME CC FLAGS...: tests/targets/vm/SOURCE built as
# NAME.
vm_target_from()
{
	_src=$abs_top_srcdir/tests/targets/vm/$1 _name=$2 _cc=$3
	shift 3
	"$_cc" -g -Wall -Wextra -pthread "$@" -o "$_name" "$_src" ||
		framework_failure_ "$_cc $* ($_src) failed"
	VM_TARGETS="$VM_TARGETS $_name"
}

# vm_initramfs TRIPLET SYSROOT: initrd.gz with busybox, stackspy-guest,
# VM_TARGETS, the cases file `cases` (one line a target: NAME ENGINE...),
# /init, and the loader and libc of SYSROOT (the cross libc) for the
# dynamic targets, where their PT_INTERP and the multiarch path want them.
vm_initramfs()
{
	_triplet=$1 _sysroot=$2
	rm -rf rd
	mkdir -p rd/bin rd/sbin rd/usr/bin rd/usr/sbin rd/proc rd/sys rd/tmp \
		rd/dev rd/t "rd/lib/$_triplet" || framework_failure_ "mkdir rd"
	cp "$VM_ROOT/bin/busybox" rd/bin/busybox ||
		framework_failure_ "no busybox in the busybox-static package"
	ln -s busybox rd/bin/sh
	cp "$abs_top_srcdir/tests/vm-init.sh" rd/init && chmod 755 rd/init &&
	cp stackspy-guest rd/bin/stackspy && cp cases rd/cases ||
		framework_failure_ "cannot fill the initramfs"
	for _t in $VM_TARGETS; do
		cp "$_t" rd/t/ || framework_failure_ "cp $_t"
		_interp=$("$_triplet-readelf" -l "$_t" |
			sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
		[ -n "$_interp" ] && [ ! -e "rd$_interp" ] || continue
		mkdir -p "rd${_interp%/*}" &&
		cp -L "$_sysroot/lib/${_interp##*/}" "rd$_interp" &&
		cp -L "$_sysroot/lib/libc.so.6" "rd/lib/$_triplet/" ||
			framework_failure_ "cannot copy the $_triplet loader and libc"
	done
	(cd rd && find . | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > initrd.gz ||
		framework_failure_ "cpio failed"
}

# vm_run SECONDS QEMU-ARG...: boot the guest (one CPU, no network, no
# display) with initrd.gz; its serial console goes to console.log (the
# carriage returns dropped).  Fails when the guest did not power off in
# time or /init did not get to its end.
vm_run()
{
	_limit=$1
	shift
	# One guest at a time (make check-slow -j2 runs vm-aarch64 and
	# vm-mipsel together): a guest's one emulated CPU is what host CPU
	# its qemu gets, and the on-CPU records in it judge what ran at a
	# tick by the guest scheduler's clock.  Beside the other guest, CI's
	# aarch64 guest ran at half its speed and a check failed there once;
	# held to 45% of a CPU (a cgroup quota), its on-CPU records here lost
	# every sample of one busy thread of three, again and again.
	_t0=$(date +%s)
	flock -w "$_limit" "$abs_top_builddir/tests/vm-guest.lock" \
		timeout -k 5 "$_limit" "$@" -smp 1 -initrd initrd.gz -nographic \
		-no-reboot -nic none < /dev/null > console.raw 2>&1
	_rc=$?
	tr -d '\r' < console.raw > console.log
	echo "guest ran $(($(date +%s) - _t0)) s (qemu exit $_rc)"
	if [ $_rc = 124 ] || [ $_rc = 137 ]; then
		tail -n 30 console.log
		fail_ "the guest did not finish within $_limit s"
	fi
	grep -q '^@@done' console.log || {
		tail -n 40 console.log
		fail_ "the guest's /init did not finish (qemu exit $_rc)"
	}
}
