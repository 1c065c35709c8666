# base/: array growth and hashing; the lowest module (libc only), linked
# last on every link line (a static library after all its users).
noinst_LIBRARIES += base/libbase.a
base_libbase_a_SOURCES = \
	base/base.h \
	base/grow.c \
	base/hash.c

# Growth (doubling, overflow refused, old array kept) and the hashes'
# values.
check_PROGRAMS += tests/unit-base
tests_unit_base_SOURCES = tests/unit-base.c
tests_unit_base_LDADD = base/libbase.a
