# stackspy-demo: the workload of the README's quick start. Built by plain
# `make` (not only `make check`) because users run it first.
noinst_PROGRAMS += demo/stackspy-demo
demo_stackspy_demo_SOURCES = demo/demo.c
# Never sanitized: it is a process stackspy traces, and LeakSanitizer's
# exit-time check (it ptraces its own threads) fails in a traced process.
demo_stackspy_demo_CFLAGS = $(WARN_CFLAGS) -pthread
demo_stackspy_demo_LDFLAGS = -pthread
