# Benchmark targets.
# parked: N threads parked in a known chain, for dump/record timings.
noinst_PROGRAMS += bench/parked
bench_parked_SOURCES = bench/parked.c
# Targets of stackspy are never sanitized (see demo/local.mk).
bench_parked_CFLAGS = $(WARN_CFLAGS) -pthread
bench_parked_LDFLAGS = -pthread
# pause-floor: raw INTERRUPT + GETREGSET + stack copy + CONT, the floor of
# record's pause per thread-sample (bench/record-pause.sh).
noinst_PROGRAMS += bench/pause-floor
bench_pause_floor_SOURCES = bench/pause-floor.c
# stacks: threads that compute in ever new stacks (bench/record-memory.sh).
noinst_PROGRAMS += bench/stacks
bench_stacks_SOURCES = bench/stacks.c
bench_stacks_CFLAGS = $(WARN_CFLAGS) -pthread
bench_stacks_LDFLAGS = -pthread
# fixed-work: fixed CPU work timing itself (bench/record-overhead.sh).
noinst_PROGRAMS += bench/fixed-work
bench_fixed_work_SOURCES = bench/fixed-work.c
bench_fixed_work_CFLAGS = $(WARN_CFLAGS)
bench_fixed_work_LDFLAGS =
# The scripts (bench/accuracy.sh and bench/top-rate.sh are listed with
# their tests, in tests/accuracy.mk and ui/local.mk).
EXTRA_DIST += \
	bench/dump-follow.sh \
	bench/dump-parked.sh \
	bench/hostile-symbols.sh \
	bench/lib.sh \
	bench/oncpu-busy.sh \
	bench/oncpu-syscall.sh \
	bench/pause-spin.sh \
	bench/python-pause.sh \
	bench/peers.sh \
	bench/event-latency.sh \
	bench/tracer-hold.sh \
	bench/record-build.sh \
	bench/record-cost.sh \
	bench/record-overhead.sh \
	bench/record-pause.sh \
	bench/record-memory.sh \
	bench/record-threads.sh \
	bench/startup.sh \
	bench/unwind-cost.sh
# unwind-cost: unwinding alone, per walk and per frame, from a core's
# snapshots (bench/unwind-cost.sh).
noinst_PROGRAMS += bench/unwind-cost
bench_unwind_cost_SOURCES = bench/unwind-cost.c
bench_unwind_cost_LDADD = $(tests_unit_symtab_LDADD)
