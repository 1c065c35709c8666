#!/bin/sh
# tests/vm-init.sh - /init of the guests of tests/vm-*.test (busybox sh,
# PID 1 of an initramfs).  For each line of /cases, "TARGET ENGINE...":
# start /t/TARGET, wait until it says every thread is in place, run
# `stackspy dump --format json` once per engine and `stackspy record
# --threads --idle` once with the first engine, and print each output and exit status to the
# serial console between markers:
#
#   @@begin dump TARGET ENGINE     ...JSON...      @@end rc=N
#   @@begin record TARGET                          @@end rc=N
#   @@stderr                       ...stderr of the run before...
#   @@folded TARGET                ...folded...    @@end-folded
#
# And an on-CPU `stackspy record --threads` (no --idle) with the first
# engine, as "record TARGET-oncpu" and "@@folded TARGET-oncpu".
# A line "core:TARGET ENGINE..." runs `TARGET crash` instead, and dumps
# the core the kernel wrote ("dump TARGET-core ENGINE"), then prints the
# core itself, gzip'd and in base64, between "@@core TARGET" and
# "@@end-core", for the host to unwind.
# Then "@@done" and power off.  Never exits (PID 1 must not): whatever
# fails, the machine is powered off at the end.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
mount -t devtmpfs devtmpfs /dev
echo 1 > /proc/sys/kernel/printk
echo "@@guest $(uname -m) $(uname -r), $(grep -c ^processor /proc/cpuinfo) cpu"

# show NAME CMD...: run CMD, its output and status between markers.
show()
{
	_what=$1
	shift
	echo "@@begin $_what"
	"$@" > /tmp/out 2> /tmp/err
	_rc=$?
	cat /tmp/out
	echo "@@end rc=$_rc"
	echo "@@stderr"
	cat /tmp/err
}

while read -r target engines; do
	[ -n "$target" ] || continue
	case $target in
	core:*)
		# "core:TARGET ENGINE...": TARGET crash dies and the kernel
		# writes its core, dumped once per engine as TARGET-core.
		t=${target#core:}
		rm -f /tmp/core*
		(cd /tmp && ulimit -c unlimited && exec /t/"$t" crash) > /dev/null 2>&1
		c=$(ls /tmp/core* 2> /dev/null | head -n 1)
		[ -n "$c" ] || echo "@@error $t: no core written"
		for e in $engines; do
			show "dump $t-core $e" stackspy dump --core "$c" --exe /t/"$t" \
				--engine "$e" --format json
		done
		if [ -n "$c" ]; then
			echo "@@core $t"
			gzip -c "$c" | base64
			echo "@@end-core"
		fi
		rm -f /tmp/core*
		continue;;
	esac
	rm -f /tmp/ready
	/t/"$target" /tmp/ready &
	pid=$!
	i=0
	while [ ! -s /tmp/ready ] && [ $i -lt 300 ] && kill -0 $pid; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -s /tmp/ready ]; then
		echo "@@error $target died or was not ready after 30 s"
		kill -9 $pid
		continue
	fi
	for e in $engines; do
		show "dump $target $e" stackspy dump -p $pid --engine "$e" --format json
		# One emulated CPU on a loaded host: a busy thread may miss
		# dump's 250 ms stop deadline; that is timing, not unwinding:
		# up to 4 more tries (the checker reads the last output).  Such
		# a thread, preempted, is read without stopping it: only its
		# sp and pc (no thread of these targets blocks in D).
		n=0
		while grep -q -e 'did not stop in time' -e '"unstopped": true' /tmp/out /tmp/err &&
		      [ $n -lt 4 ]; do
			n=$((n + 1))
			show "dump $target $e" stackspy dump -p $pid --engine "$e" --format json
		done
	done
	set -- $engines
	show "record $target" stackspy record -p $pid -d 4 --threads --idle \
		--engine "$1" -o /tmp/rec.folded
	echo "@@folded $target"
	cat /tmp/rec.folded
	echo "@@end-folded"
	# On-CPU: only where a thread ran at the tick (one emulated CPU).
	show "record $target-oncpu" stackspy record -p $pid -d 3 --threads \
		--engine "$1" -o /tmp/rec.folded
	echo "@@folded $target-oncpu"
	cat /tmp/rec.folded
	echo "@@end-folded"
	# The target was left running and untraced.
	echo "@@tracer $target $(sed -n 's/^TracerPid:[[:space:]]*//p' /proc/$pid/status) state $(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$pid/status)"
	kill -9 $pid
	wait $pid 2>/dev/null
done < /cases
echo "@@done"
poweroff -f
