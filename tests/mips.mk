# tests/mips.mk - MIPS: unit test of the MIPS prologue-analysis unwinder
# (unwind/engine-mips.c) and the o32 register layout (arch/arch-mips.c)
# on hand-assembled instruction arrays, both byte orders.  Runs on any host.
check_PROGRAMS += tests/unit-mips
tests_unit_mips_SOURCES = tests/unit-mips.c
tests_unit_mips_LDADD = $(UNWIND_LIBS)

# MIPS core files on this host: tests/targets/mips/chain.c is cross-compiled
# by the test itself (mipsel-linux-gnu-gcc; mips-linux-gnu-gcc when
# installed) and run under qemu-user; it skips, saying why, without them.
EXTRA_DIST += tests/targets/mips/chain.c

# unwind/cfi-read.c (the one .eh_frame reader) against readelf on a static
# link, this host's libc and the MIPS libcs: tests/unit-cfi does the
# lookups.
check_PROGRAMS += tests/unit-cfi
tests_unit_cfi_SOURCES = tests/unit-cfi.c
tests_unit_cfi_LDADD = $(UNWIND_LIBS)
