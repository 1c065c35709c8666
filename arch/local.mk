# arch/: one table per architecture; the lowest module (no dependencies).
noinst_LIBRARIES += arch/libarch.a
arch_libarch_a_SOURCES = \
	arch/arch.h \
	arch/arch.c \
	arch/arch-x86_64.c \
	arch/arch-aarch64.c \
	arch/arch-mips.c
