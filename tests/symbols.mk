# tests/symbols.mk - memory maps, ELF files and symbols: unit tests of
# unwind/maps.c, elf-image.c, symtab.c (maps parsing, load bias, symbol
# lookup: own, libc through /usr/lib/debug/.build-id, vdso; demangling;
# damaged ELF files) and of unwind_file_map()'s SIGBUS guard.
check_PROGRAMS += tests/unit-symtab
tests_unit_symtab_SOURCES = tests/unit-symtab.c
tests_unit_symtab_CPPFLAGS = $(AM_CPPFLAGS) $(LIBELF_CFLAGS)
tests_unit_symtab_LDADD = unwind/libunwind-engines.a ptrace/libptrace.a arch/libarch.a base/libbase.a \
	$(LIBDW_LIBS) $(LIBELF_LIBS) $(DEMANGLE_LIBS) $(LZMA_LIBS) $(ZLIB_LIBS)

# An ELF file with as many symbols as asked (tests/security-symbols.test,
# bench/hostile-symbols.sh).
check_PROGRAMS += tests/symbols-gen
tests_symbols_gen_SOURCES = tests/symbols-gen.c

# unwind_file_map()'s SIGBUS guard (unwind/elf-image.c).
check_PROGRAMS += tests/unit-filemap
tests_unit_filemap_SOURCES = tests/unit-filemap.c
tests_unit_filemap_CPPFLAGS = $(AM_CPPFLAGS) $(LIBELF_CFLAGS)
tests_unit_filemap_LDADD = $(tests_unit_symtab_LDADD)

# unwind/perf-map.c: incremental reads, replacement, caps.
check_PROGRAMS += tests/unit-perfmap
tests_unit_perfmap_SOURCES = tests/unit-perfmap.c
tests_unit_perfmap_CPPFLAGS = $(AM_CPPFLAGS) $(LIBELF_CFLAGS)
tests_unit_perfmap_LDADD = $(tests_unit_symtab_LDADD)

# tests/symbols-perfmap-grow.test: a JIT that keeps appending to its perf map.
check_DATA += tests/targets/jitgrow
CLEANFILES += tests/targets/jitgrow
EXTRA_DIST += tests/targets/jitgrow.c
