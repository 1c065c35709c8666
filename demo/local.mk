# stackspy-demo: the workload of the README's quick start. Built by plain
# `make` (not only `make check`) because users run it first.
noinst_PROGRAMS += demo/stackspy-demo
demo_stackspy_demo_SOURCES = demo/demo.c
demo_stackspy_demo_CFLAGS = $(AM_CFLAGS) -pthread
demo_stackspy_demo_LDFLAGS = $(AM_LDFLAGS) -pthread
