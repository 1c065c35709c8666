# tests/pprof.mk - -f pprof, --push and debuginfod (issue 15).
EXTRA_DIST += tests/pprof-traces.py tests/pprof-gen.c \
	tests/push-receiver.py
if HAVE_PROTOBUF_C
check_PROGRAMS += tests/pprof-gen
tests_pprof_gen_SOURCES = tests/pprof-gen.c
tests_pprof_gen_LDADD = collapse/libcollapse.a $(PROFILEPB_LIBS) base/libbase.a $(ZLIB_LIBS)
endif
