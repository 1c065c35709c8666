# tests/collapse.mk - unit tests of collapse/ (interning, counts, folded
# output, memory).
check_PROGRAMS += tests/unit-collapse
tests_unit_collapse_SOURCES = tests/unit-collapse.c
tests_unit_collapse_LDADD = collapse/libcollapse.a base/libbase.a
