# arch/: one table per architecture; the lowest module (no dependencies).
noinst_LIBRARIES += arch/libarch.a
arch_libarch_a_SOURCES = \
	arch/arch.h \
	arch/arch.c \
	arch/arch-x86_64.c \
	arch/arch-aarch64.c \
	arch/arch-mips.c

# Each table against the kernel's layout, on any host.
check_PROGRAMS += tests/unit-arch
tests_unit_arch_SOURCES = tests/unit-arch.c
tests_unit_arch_LDADD = arch/libarch.a base/libbase.a
