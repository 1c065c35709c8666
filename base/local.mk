# base/: array growth, hashing and the hash index; the lowest module (libc only), linked
# last on every link line (a static library after all its users).
noinst_LIBRARIES += base/libbase.a
base_libbase_a_SOURCES = \
	base/base.h \
	base/grow.c \
	base/hash.c \
	base/index.c \
	base/map.c

# Growth (doubling, overflow refused, old array kept), the hashes'
# values, and the index (collisions, growth, removal).
check_PROGRAMS += tests/unit-base
tests_unit_base_SOURCES = tests/unit-base.c
tests_unit_base_LDADD = base/libbase.a
