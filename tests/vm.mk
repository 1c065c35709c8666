# tests/vm.mk - stackspy live on the other architectures it claims, inside
# emulated machines (qemu-system-*): each test cross-builds this tree's
# stackspy static, boots Debian 12's kernel for the architecture with an
# initramfs, dumps and records tests/targets/vm/live.c there, and checks the
# stacks by name (tests/vm-lib.sh says how); and dumps a mutex deadlock
# (tests/targets/vm/locks.c), which must be named with its owners.  They skip, saying why, without
# qemu-system-arm / qemu-system-mips, the cross compilers, cpio, or the
# network for the first download of Debian's packages (cached in
# ~/.cache/stackspy-vm, or STACKSPY_VM_CACHE).  About 1 minute each on two
# cores (a few seconds more for the first download).
EXTRA_DIST += tests/vm-lib.sh tests/vm-init.sh tests/vm-check.py \
	tests/targets/vm/live.c tests/targets/vm/locks.c \
	tests/targets/vm/nullcall.c tests/targets/vm/ready.h
CLEANFILES += tests/vm-guest.lock
