# tests/list.mk - every test, in one list (tests/README: adding a test;
# the fragments of tests/ and each folder's local.mk build what the tests
# run: unit-test programs and target programs).
#
# `make check` runs TESTS, which are QUICK_TESTS: no network, no emulated
# machine, no browser.
# `make check-slow` runs SLOW_TESTS: a minute of the CFI fuzzer (with
# clang's libFuzzer: configure --enable-fuzzing), stackspy live in emulated machines of
# the other architectures (tests/vm.mk; Debian's kernels and libraries
# downloaded on first use into ~/.cache/stackspy-vm) and the flamegraph
# and speedscope files opened in headless Chromium (tests/flamegraph.mk;
# playwright-core from npm).  .ci/run runs both.  Each test's log ends
# with its duration: grep -h '^# duration' tests/*.log | sort -k3 -n.

QUICK_TESTS =

# The longest first (each 3 to 18 s, in this order on a 2-CPU VM): with
# make -j2 the suite ends sooner when they do not start last.
QUICK_TESTS += \
	tests/accuracy-builds.test \
	tests/python-frames.test \
	tests/record-subprocesses.test \
	tests/record-pool.test \
	tests/push-ingest.test \
	tests/mips-core.test \
	tests/many-fds.test \
	tests/symbols-perfmap-grow.test \
	tests/record-oncpu.test \
	tests/record-crash.test \
	tests/accuracy.test \
	tests/record-syscall.test \
	tests/record-watchdog.test \
	tests/security-symbols.test \
	tests/cli-newcomer.test \
	tests/record-slow-unwind.test \
	tests/cli-command-end.test \
	tests/record-signals-all.test \
	tests/dump-locks.test \
	tests/record-churn.test \
	tests/record-ratio.test \
	tests/python-hostile.test \
	tests/security-push.test \
	tests/security-cfi.test \
	tests/record-threads.test \
	tests/core-bad.test \
	tests/promise-kill9.test \
	tests/go-dump.test \
	tests/top-lifecycle.test \
	tests/promise-detach-first.test \
	tests/record-make.test \
	tests/record-kernel.test \
	tests/record-perf.test \
	tests/cli-terminal.test \
	tests/security-debugbounds.test \
	tests/promise-signals-record.test \
	tests/record-server.test \
	tests/dump-linger.test \
	tests/record-oversub.test

# The framework and the command line
QUICK_TESTS += \
	tests/cli-options-docs.test \
	tests/mutate-records.test \
	tests/cli-pids.test \
	tests/cli-top-command.test \
	tests/code-shape.test \
	tests/layering.test \
	tests/options.test \
	tests/prefix.test \
	tests/shell-syntax.test

# Unit tests (C programs against one module)
QUICK_TESTS += \
	tests/unit-arch \
	tests/unit-base \
	tests/unit-collapse \
	tests/unit-detach \
	tests/unit-filemap \
	tests/unit-flamegraph \
	tests/unit-mips \
	tests/unit-perfmap \
	tests/unit-profiler \
	tests/unit-symtab \
	tests/unit-uimodel

# Attaching, detaching and the ptrace promises (DESIGN.md, "ptrace rules")
QUICK_TESTS += \
	tests/attach-eperm.test \
	tests/attach-kthread.test \
	tests/attach-nonexistent.test \
	tests/attach-other-tracer.test \
	tests/attach-traced.test \
	tests/attach-zombie.test \
	tests/detach-running.test \
	tests/detach-signal.test \
	tests/detach-stopped.test \
	tests/promise-caller-ip.test \
	tests/promise-sigcont.test \
	tests/promise-signals-dump.test \
	tests/promise-stack-end.test \
	tests/promise-stopped-dump.test \
	tests/promise-stopped-record.test \
	tests/promise-stopped-top.test

# dump and core files
QUICK_TESTS += \
	tests/dump-waits.test \
	tests/core-dump.test \
	tests/core-foreign.test \
	tests/core-nonregular.test \
	tests/dump-O0.test \
	tests/dump-O2-nopie.test \
	tests/dump-O2.test \
	tests/dump-consistent.test \
	tests/dump-cxx.test \
	tests/dump-deep.test \
	tests/dump-dstate.test \
	tests/dump-engine-cfi.test \
	tests/dump-engine-fp.test \
	tests/dump-exited-main.test \
	tests/dump-group.test \
	tests/dump-multi.test \
	tests/dump-nullcall.test \
	tests/dump-asmleaf.test \
	tests/dump-badcfi.test \
	tests/dump-source.test \
	tests/dump-subprocesses.test \
	tests/dump-text.test \
	tests/dump-tid-depth.test \
	tests/dump-timeout.test \
	tests/dump-ucontext.test

# record
QUICK_TESTS += \
	tests/record-dlswap.test \
	tests/record-errors.test \
	tests/record-exec.test \
	tests/record-idle-dstate.test \
	tests/record-inline.test \
	tests/record-memo.test \
	tests/record-nginx.test \
	tests/record-signals.test \
	tests/record-stop.test \
	tests/record-wakers.test

# top
QUICK_TESTS += \
	tests/top-options.test \
	tests/top-subprocesses.test \
	tests/top-tmux.test

# Accuracy against gdb, symbols, other languages and architectures
QUICK_TESTS += \
	tests/cfi-read.test \
	tests/debugframe-gdb.test \
	tests/gdb-compare.test \
	tests/go-cgo.test \
	tests/go-gdb.test \
	tests/symbols-minidebuginfo.test \
	tests/symbols-perfmap.test \
	tests/symbols-perfmap-big.test \
	tests/symbols-sizes.test \
	tests/dump-musl.test \
	tests/dump-jvmlike.test \
	tests/dump-translated.test \
	tests/dump-sighandler.test

# -f pprof, --push, debuginfod
QUICK_TESTS += \
	tests/debuginfod-server.test \
	tests/pprof-record.test

# Root against a hostile unprivileged target (tests/hostile-lib.sh)
QUICK_TESTS += \
	tests/security-debuginfod.test \
	tests/security-output.test \
	tests/security-perfmap.test \
	tests/security-terminal.test \
	tests/security-top.test

SLOW_TESTS = \
	tests/fuzz-cfi.test \
	tests/vm-aarch64.test \
	tests/vm-mipsel.test \
	tests/svg-browser.test \
	tests/speedscope.test \
	tests/python313.test

TESTS += $(QUICK_TESTS)
# Not from TESTS: `make check-slow` (and `make check TESTS=...`) set it on
# the command line, and a distdir made then (the VM tests make one) would
# leave the other tests out.
EXTRA_DIST += $(filter %.test,$(QUICK_TESTS) $(SLOW_TESTS)) tests/layering.py \
	tests/prefix.py tests/code-shape.py

check-slow:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(SLOW_TESTS)'
.PHONY: check-slow
