# Stack aggregation and the output writers.
noinst_LIBRARIES += collapse/libcollapse.a
collapse_libcollapse_a_SOURCES = \
	collapse/collapse.c \
	collapse/collapse.h \
	collapse/collapse-internal.h \
	collapse/frame-names.c \
	collapse/json.c \
	collapse/output.c \
	collapse/speedscope.c \
	collapse/svg.c \
	collapse/text.c
collapse_libcollapse_a_SOURCES += collapse/pprof.c
EXTRA_DIST += collapse/profile.proto

# -f pprof: protoc-c generates the profile.proto code at build time (into
# the build tree), so it always matches the installed libprotobuf-c. Built
# as a library of its own: generated code is not held to our warnings.
if HAVE_PROTOBUF_C
noinst_LIBRARIES += collapse/libprofilepb.a
nodist_collapse_libprofilepb_a_SOURCES = collapse/profile.pb-c.c collapse/profile.pb-c.h
collapse_libprofilepb_a_CFLAGS = $(PROTOBUF_C_CFLAGS)
collapse_libprofilepb_a_CPPFLAGS = -I$(top_builddir)/collapse
BUILT_SOURCES = collapse/profile.pb-c.h
CLEANFILES += collapse/profile.pb-c.c collapse/profile.pb-c.h
collapse/profile.pb-c.h: $(srcdir)/collapse/profile.proto
	$(AM_V_GEN)$(MKDIR_P) collapse && \
	$(PROTOC_C) --proto_path=$(srcdir)/collapse --c_out=collapse $(srcdir)/collapse/profile.proto
collapse/profile.pb-c.c: collapse/profile.pb-c.h
	@:
PROFILEPB_LIBS = collapse/libprofilepb.a $(PROTOBUF_C_LIBS)
endif
