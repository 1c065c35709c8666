# Stack aggregation and the output writers.
noinst_LIBRARIES += collapse/libcollapse.a
collapse_libcollapse_a_SOURCES = \
	collapse/collapse.c \
	collapse/collapse.h \
	collapse/collapse-internal.h \
	collapse/frame-names.c \
	collapse/map.c \
	collapse/output.c \
	collapse/speedscope.c \
	collapse/svg.c
