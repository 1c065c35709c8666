noinst_LIBRARIES += unwind/libunwind-engines.a
unwind_libunwind_engines_a_SOURCES = \
	unwind/unwind.h \
	unwind/yield.h \
	unwind/maps.h \
	unwind/elf-image.h \
	unwind/symbols.h \
	unwind/sym-build.h \
	unwind/budget.h \
	unwind/perf-map.h \
	unwind/memory.h \
	unwind/core-file.h \
	unwind/target.h \
	unwind/cfi.h \
	unwind/engines.h \
	unwind/x86-code.h \
	unwind/python.h \
	unwind/unwind.c \
	unwind/target.c \
	unwind/target-open.c \
	unwind/symbolize.c \
	unwind/name-pool.c \
	unwind/maps.c \
	unwind/elf-image.c \
	unwind/budget.c \
	unwind/yield.c \
	unwind/sym-build.c \
	unwind/symtab.c \
	unwind/debug-file.c \
	unwind/cfi-read.c \
	unwind/cfi-exec.c \
	unwind/gopclntab.c \
	unwind/minidebuginfo.c \
	unwind/plt.c \
	unwind/demangle.c \
	unwind/perf-map.c \
	unwind/memory.c \
	unwind/core-file.c \
	unwind/core-target.c \
	unwind/engine-mips.c \
	unwind/engine-fp.c \
	unwind/x86-code.c \
	unwind/engine-x86.c \
	unwind/go-stack.c \
	unwind/engine-dwarf.c \
	unwind/engine-auto.c \
	unwind/py-code.c \
	unwind/python-debug.c \
	unwind/python.c
unwind_libunwind_engines_a_CPPFLAGS = $(AM_CPPFLAGS) $(LIBELF_CFLAGS) $(LZMA_CFLAGS) $(LIBDW_CFLAGS) $(ZLIB_CFLAGS) $(DEBUGINFOD_CFLAGS)
if HAVE_LIBDW
unwind_libunwind_engines_a_SOURCES += unwind/source.c
endif
EXTRA_DIST += unwind/source.c

# What every program linking unwind/ needs (base/ after every library of
# ours that uses it: libprofilepb, generated, does not).
UNWIND_LIBS = unwind/libunwind-engines.a ptrace/libptrace.a arch/libarch.a base/libbase.a \
	$(LIBDW_LIBS) $(LIBELF_LIBS) $(DEMANGLE_LIBS) $(LZMA_LIBS) $(ZLIB_LIBS) \
	$(PROFILEPB_LIBS) -lpthread
