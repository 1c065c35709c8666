# Benchmark targets.
# parked: N threads parked in a known chain, for dump/record timings.
noinst_PROGRAMS += bench/parked
bench_parked_SOURCES = bench/parked.c
bench_parked_CFLAGS = $(AM_CFLAGS) -pthread
bench_parked_LDFLAGS = $(AM_LDFLAGS) -pthread
