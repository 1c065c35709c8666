#!/bin/sh
# tests/mutate.sh: do the tests fail when a promise breaks?  Applies, one at
# a time, a small breaking change (a "mutation") to the code that keeps one
# of DESIGN.md's promises (ptrace rules, symbols, the sample's data path),
# rebuilds, runs the tests, restores the file, and lists every mutation the
# tests did not catch.  Not part of `make check` (it runs the suite once per
# mutation).
#
# Usage: tests/mutate.sh [-q] [-l] [-r RUNS] [-m NAME[,NAME...]] [TEST...]
#   TEST...  the tests to run for every mutation (make check TESTS=...);
#            default: the whole `make check`
#   -q       quick: each mutation runs only the tests its record names
#            (the ones expected to catch it), unless TESTs are given
#   -m       only these mutations
#   -r RUNS  run each mutation's tests RUNS times (one build): a mutation
#            caught in some runs but not all is listed as flaky, and fails
#            the run as a survivor does (-r 3: a catch that depends on the
#            host's speed shows up; its test needs a test hook that forces
#            the rare order, see tests/README)
#   -l       list the mutations and check that each still applies
# Run it from the top of a configured in-tree build (./configure && make),
# never on a tree with uncommitted changes to the mutated files: each file
# is restored from a copy, and the tree is rebuilt at the end.
#
# Exit status: 0 every mutation was caught (in every run); 1 some survived
# or were flaky; 2 a mutation
# no longer applies (its pattern does not match: the code moved; update the
# record) or does not build, or a usage error.
#
# A record: mutation NAME FILE PERL-EXPR DESCRIPTION TESTS.  PERL-EXPR is run
# as `perl -0pe` on FILE (the whole file is one string, so a pattern may
# span lines); it must change the file, or the record is an error, never a
# silent pass.  Keep patterns short and literal so they are easy to update.
#
# Left out as equivalent (no test can tell): skipping the detach in die()
# or any path that exits right after it (the kernel detaches the tracees of
# a dying tracer, handing back parked signals and group-stops: see
# promise-kill9.test; what matters is detaching before the output is
# written, mutation detach-at-stop); not taking a stopped thread's
# group-stop report at seize (the next poll or sample takes it); CPython's
# line-table size bound (PY_MAX_LINETABLE: a table that says it is larger
# is refused, one that is not there cannot be read or allocated either,
# and the line of an instruction is found in the table's first entries:
# the bound keeps memory, not the output).  Equivalent since the ticks put
# off are lost whenever the stop that ends them finds the thread running
# (owed_weight's ran_at_stop, mutation idle-owed-running): judging them
# without the scheduled-in count (idle-owed-woken), or from the census's
# reading rather than the last look's (idle-catchup-seen).  What is left
# of either is a thread found asleep again after a run between two looks:
# the ticks of that run counted where it sleeps, and not lost; where the
# looks come at fixed ticks that is a sample at a tenth of the rate, as
# fair, not a stack taken for another (measured with
# STACKSPY_TEST_IDLE_EVERY=10 on pool -n 3: the workers' totals 121-146
# of 198 ticks unmutated, 143-177 mutated, in pool_work 2-5 either way).


mutations()
{
	# --- ptrace rules: signals are delivered --------------------------
	mutation reinject ptrace/wait.c \
		's/ptrace\(PTRACE_CONT, th->tid, 0L, trace_signal\(st\)\)/ptrace(PTRACE_CONT, th->tid, 0L, 0L)/' \
		'ptrace_tracee_resume: a signal-delivery-stop is resumed without its signal' \
		'tests/promise-signals-record.test tests/promise-signals-dump.test'
	mutation sample-signal-first ptrace/sample.c \
		's/(if \(trace_stop_of\(st\) == TRACE_SIGNAL\) \{\s*)ptrace_tracee_resume\(th, st\);(\s*return false;)/$1ptrace(PTRACE_CONT, th->tid, 0L, 0L);$2/' \
		'ptrace_sample: a signal that comes before the interrupt stop is dropped' \
		'tests/promise-signals-record.test tests/promise-signals-dump.test'
	mutation wait-deadline ptrace/wait.c \
		's/armed = deadline_ns != UINT64_MAX;/armed = false;/' \
		'a dump'"'"'s blocking wait for a stop has no deadline (a thread in D holds the dump, and the stopped threads of its batch, forever)' \
		'tests/dump-dstate.test'
	mutation dump-timeout unwind/engine-dwarf.c \
		's/if \(unwind_deadline_passed\(\)\)\n\t\t\treturn UNWIND_STOP_DEADLINE;//' \
		'a walk under way when dump'"'"'s time limit passes goes on to its end (a hostile table or a huge stack holds the dump)' \
		'tests/dump-timeout.test'
	mutation wait-repeat ptrace/wait.c \
		's/its.it_interval = ns_to_timespec\(WAKE_REPEAT_NS\);/its.it_interval = ns_to_timespec(0);/' \
		'the deadline timer of a blocking wait fires once: a firing spent before the wait began leaves a dump waiting on a thread in D forever' \
		'tests/dump-dstate.test'
	mutation detach-signal ptrace/detach.c \
		's/long sig = trace_signal\(st\);\n(\s*\/\* After a group-stop)/long sig = 0;\n$1/' \
		'detach_collect: a signal whose stop comes at detach is dropped' \
		'tests/unit-detach tests/promise-signals-record.test tests/detach-signal.test'

	mutation trace-signal ptrace/ptrace-internal.h \
		's/return trace_stop_of\(st\) == TRACE_SIGNAL \? \(long\)WSTOPSIG\(st\) : 0L;/return 0L;/' \
		'trace_signal: no signal is handed back at resume or detach' \
		'tests/unit-detach tests/promise-signals-record.test tests/promise-signals-dump.test'

	# --- ptrace rules: a group-stop is preserved ----------------------
	mutation listen-cont ptrace/wait.c \
		's/ptrace\(PTRACE_LISTEN, th->tid, 0L, 0L\)/ptrace(PTRACE_CONT, th->tid, 0L, 0L)/' \
		'ptrace_tracee_resume: a group-stop is resumed with PTRACE_CONT, not PTRACE_LISTEN' \
		'tests/promise-stopped-record.test tests/promise-stopped-dump.test tests/promise-stopped-top.test'
	mutation listen-none ptrace/wait.c \
		's/r = ptrace\(PTRACE_LISTEN, th->tid, 0L, 0L\);/r = 0;/' \
		'ptrace_tracee_resume: a group-stop is left in its trace-stop (SIGCONT cannot end it)' \
		'tests/promise-sigcont.test'
	mutation group-stop-never ptrace/ptrace-internal.h \
		's/case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:\s*return TRACE_GROUP_STOP;/case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:\n\t\t\treturn TRACE_TRAP;/' \
		'trace_stop_of: no stop is seen as a group-stop' \
		'tests/promise-stopped-record.test tests/promise-stopped-dump.test tests/promise-stopped-top.test'

	# --- ptrace rules: every exit path detaches; kill -9 leaves them running
	mutation exitkill ptrace/attach.c \
		's/(o \|= PTRACE_O_TRACEFORK \| PTRACE_O_TRACEVFORK \| PTRACE_O_TRACECLONE;\n)(\treturn o;)/$1\to |= PTRACE_O_EXITKILL;\n$2/' \
		'attach: PTRACE_O_EXITKILL (a SIGKILLed stackspy kills its targets)' \
		'tests/promise-kill9.test'
	mutation detach-at-stop sampler/profiler.c \
		's/(one timeout\s*\* in all\.  The profiler.s targets are the only ones registered\. \*\/\s*)ptrace_detach_all\(\);/$1/' \
		'profiler stop (end of -d, SIGINT, ...): no detach before the output is written' \
		'tests/promise-detach-first.test'

	# --- --subprocesses: nothing the kernel attached for us stays traced
	mutation follow-detach-fork ptrace/detach.c \
		's/ptrace_follow_event\(t, th->tid, st\);\n(\s*long sig = )/$1/' \
		'detach: the child of a fork met on the way to the stop is not let go (a fork whose child is not adopted yet is met every time: STACKSPY_TEST_DETACH_FORK)' \
		'tests/record-subprocesses.test'
	mutation follow-detach-again ptrace/detach.c \
		's/while \(any_attached\(\)\) \{/if (any_attached()) {/' \
		'detach_all: a child adopted during the detach (a fork met on the way) is not detached' \
		'tests/record-subprocesses.test'

	# --- the data path of one sample ----------------------------------
	mutation stack-end ptrace/sample.c \
		's/if \(end > sp && end - sp < len\)/if (0)/' \
		'ptrace_sample: the stack window is not cut at the end of the stack mapping' \
		'tests/promise-stack-end.test'

	# --- symbols ------------------------------------------------------
	mutation st-size unwind/symtab.c \
		's/if \(vaddr - st->v\[i - 1\]\.start < st->v\[i - 1\]\.len\)/if (1)/' \
		'symbol lookup: no st_size check (an address past a function is named after it)' \
		'tests/unit-symtab'
	mutation caller-ip unwind/unwind.h \
		's/return i > 0 && !frames\[i - 1\]\.signal_frame && !frames\[i\]\.signal_frame;/return false;/' \
		'caller frames are named at ip, not ip - 1' \
		'tests/promise-caller-ip.test'
	mutation signal-frame-ip unwind/unwind.h \
		's/return i > 0 && !frames\[i - 1\]\.signal_frame && !frames\[i\]\.signal_frame;/return i > 0;/' \
		'the frame a signal interrupted is named at ip - 1' \
		'tests/promise-caller-ip.test'

	# --- on-CPU profiles (DESIGN.md "On-CPU and wall-clock") -------------
	mutation oncpu-rule sampler/oncpu.c \
		's/(uint64_t last_stop_cpu_ns\)\n\{\n)/$1\treturn -1;\n/' \
		'every stopped thread counts as on-CPU (runnable and asleep ones too)' \
		'tests/record-oncpu.test tests/unit-profiler'
	mutation oncpu-cut-syscall sampler/oncpu.c \
		's/case -EINTR:\n\t\treturn true;/case -EINTR:\n\t\treturn false;/' \
		'a stop that cut a blocking system call short counts as on-CPU' \
		'tests/unit-profiler'
	mutation oncpu-moved-on sampler/oncpu.c \
		's/return cut \? ONCPU_DROP_ASLEEP : -1;/return -1;/' \
		'a stop that found its thread gone on into a blocking call after the look counts in that call (sleepwork'"'"'s workers: 0.07 of their ticks in clock_nanosleep)' \
		'tests/unit-profiler tests/record-oncpu.test'
	mutation oncpu-took-cpu sampler/oncpu.c \
		's/bool took = in->slices == before->slices \+ 1 &&/bool took = 0 \&\&/' \
		'a thread whose CPU the tick took is dropped as waiting' \
		'tests/unit-profiler'
	mutation oncpu-took-other sampler/oncpu.c \
		's/if \(tick_cpu > 0 \|\| \(tick_cpu < 0 && !sc.in_syscall\)\)/if (tick_cpu > 0 || !sc.in_syscall)/' \
		'a thread another thread took the CPU of just before the tick counts as on-CPU (8 threads on a busy CPU stood for 1.48 of their CPU time)' \
		'tests/unit-profiler'
	mutation oncpu-took-syscall sampler/sample.c \
		's/\t\ttaker = p->tr.tick_exec_ns;/\t\ttaker = 0;/' \
		'a thread the tick preempted inside a system call is dropped as waiting (issue 33: a reader of /dev/zero on the tracer'"'"'s CPU kept 0 samples)' \
		'tests/record-syscall.test'
	mutation oncpu-cpu-claim sampler/oncpu.c \
		's/if \(slot\[0\] == tick \|\| slot\[1\] == tick\)/if (0)/' \
		'two threads seen running on one CPU at one tick both count (16 busy threads on 2 CPUs: the samples stood for 1.4-1.9x their CPU time)' \
		'tests/record-oversub.test'
	mutation oncpu-hold sampler/oncpu-hold.c \
		's/\tif \(none\)\n/\tif (none || 1)\n/' \
		'no CPU is held at the tick: a server whose client shares the tracer'"'"'s CPU runs dry and is asleep when looked at (2 of 186 samples kept; issue 33)' \
		'tests/record-server.test'
	mutation oncpu-hold-want sampler/sample.c \
		's/\t\toncpu_hold_want\(p, ts->state_cpu\);\n//' \
		'a CPU where the targets run is not held after the first ticks (the debug line'"'"'s CPUs held a tick: 0.21 against 1.00)' \
		'tests/record-server.test'
	mutation oncpu-hold-took sampler/sample.c \
		's/if \(!oncpu_hold_held\(p, cpu, &taker\)\)\n\t\t\treturn 0;/return 0;/' \
		'a thread whose CPU a holder took at the tick is dropped as waiting' \
		'tests/record-server.test'
	mutation oncpu-weight sampler/sample.c \
		's/\t\tweight = w;\n/\t\tweight = 1;\n/' \
		'a counted stop stands for its own tick only, not the CPU time its thread ran since the one before (nginx under ab kept 0.48-0.65)' \
		'tests/record-server.test tests/unit-profiler'
	mutation oncpu-weight-ahead sampler/oncpu.c \
		's/if \(ts->counted_cpu_ns > cpu_ns \+ \(uint64_t\)ONCPU_WEIGHT_MAX \* period_ns\)/if (ts->counted_cpu_ns > cpu_ns)/' \
		'a thread counted ahead of its CPU time is forgotten, and carries more later (8 busy threads on one CPU: 1.25x their CPU time)' \
		'tests/record-oversub.test tests/unit-profiler'
	mutation oncpu-syscall-frame sampler/sample.c \
		's/if \(!p->cfg.idle && p->cfg.kernel && !nk && syscall_frame\(/if (0 && syscall_frame(/' \
		'on-CPU --kernel shows no system call a sample was in' \
		'tests/record-kernel.test'
	mutation census-cold sampler/threads.c \
		's/if \(lo - ps->cpu_seen_sum == ps->cpu_base\)/if (1)/' \
		'threads that did not run lately are never read again (the census trusts nothing)' \
		'tests/record-pool.test'
	mutation idle-ran sampler/sample.c \
		's/\tbool ran = keep && !snap->group_stopped &&\n[^;]*;/\tbool ran = keep \&\& state == 0;/' \
		'--idle: a stack taken while the thread ran is reused while it sleeps after (the stop in the last 100 us of a burst that catches it is forced: STACKSPY_TEST_IDLE_SLACK_US)' \
		'tests/record-pool.test'
	mutation idle-ran-after-push sampler/sample.c \
		's/(\tbool ran = keep) && !snap->group_stopped &&\n\t\t   \(state == .R. \|\| !oncpu_cut_syscall\(p->tr.arch, snap\)\);/$1;/; s/\t\tts->last_ran = ran;/\t\tts->last_ran = ran \&\& !snap->group_stopped \&\& (state == \x27R\x27 || !oncpu_cut_syscall(p->tr.arch, snap));/' \
		'--idle: whether the stop found the thread running is read from its snapshot after the push gave it to the unwinder (another sample'"'"'s): a stopped process'"'"'s threads are stopped at every tick' \
		'tests/promise-stopped-record.test'
	mutation idle-group-stop sampler/sample.c \
		's/\t\tif \(th->state == TRACEE_LISTENING && last_reusable\(ts\)\) \{/\t\tif (0) {/' \
		'--idle: a thread in a group-stop whose CPU time moved by our stops is stopped again (at every tick on a loaded host)' \
		'tests/promise-stopped-record.test'
	mutation idle-owed-running sampler/sample.c \
		's/\tif \(ran_at_stop\) \{/\tif (0) {/' \
		'--idle: ticks put off while a thread slept go to its stop in its work just after it woke (forced: STACKSPY_TEST_IDLE_STOPS, STACKSPY_TEST_IDLE_SLACK_US)' \
		'tests/record-pool.test'
	mutation idle-deferred sampler/cmd-record.c \
		's/\tif \(!stop_signal\)\n\t\tprofiler_take_deferred\(p\);//' \
		'--idle: the stops put off are never taken (threads missing from the profile; put off on any host: STACKSPY_TEST_IDLE_STOPS)' \
		'tests/record-pool.test'
	mutation late-sample ptrace/poll.c \
		's/(trace_stop_of\(st\) == TRACE_TRAP &&\s*)ptrace_sample_late\(owner, th, st\)/${1}0/' \
		'a thread that stops after the tick deadline is only resumed, never sampled' \
		'tests/record-oncpu.test'
	mutation command-end sampler/launch.c \
		's/if \(p->cfg.keep_running\)\n\t\treturn 0;\n\t\/\* Ended by a signal/if (1)\n\t\treturn 0;\n\t\/* Ended by a signal/' \
		'a command stackspy started is left running when the recording ends first' \
		'tests/cli-command-end.test'
	mutation command-pdeathsig ptrace/launch.c \
		's/prctl\(PR_SET_PDEATHSIG, SIGTERM\)/prctl(PR_SET_PDEATHSIG, 0)/' \
		'a command stackspy started outlives a SIGKILLed stackspy' \
		'tests/cli-command-end.test'
	mutation watchdog-stuck ptrace/watchdog.c \
		's/if \(by && now > by &&/if (0 \&\& by \&\& now > by \&\&/' \
		'a hung stackspy holds its targets for good' \
		'tests/record-watchdog.test'
	mutation watchdog-debugger ptrace/watchdog.c \
		"s/if \(s != 'T' && s != 't'\) \{/if (s != 'T') {/" \
		'a stackspy stopped by a debugger holds its targets' \
		'tests/record-watchdog.test'
	mutation dump-dstate-check sampler/dump-live.c \
		's/\|\s*SAMPLE_DSTATE \| SAMPLE_INORDER,/ | SAMPLE_INORDER,/' \
		'a dump waits out the stop timeout for threads in D' \
		'tests/dump-dstate.test'
	mutation dump-state-from-stop sampler/dump-live.c \
		"s/if \(e == 0 && d->state == '\?'\)/if (0)/" \
		'a dump shows the state a thread is in after its release (read after a SIGSTOP: STACKSPY_TEST_INFO_WAIT)' \
		'tests/dump-group.test tests/dump-locks.test'
	mutation watchdog-strace ptrace/watchdog.c \
		's/\(rt && rt != ran\)/(0 \&\& rt != ran)/' \
		'a stackspy held in t by a debugger (strace -f), but running between, is killed as if stopped' \
		'tests/record-watchdog.test'

	# --- root's stackspy cannot be turned against its operator (issue 22)
	mutation out-symlink sampler/out-file.c \
		's/if \(planted\(&dst, st\)\) \{/if (0) {/' \
		'-o follows a symlink another user planted in /tmp' \
		'tests/security-output.test'
	mutation out-planted-file sampler/out-file.c \
		's/!S_ISDIR\(st->st_mode\) && planted\(&dst, st\)/0/' \
		'-o replaces or feeds a file or FIFO another user planted in /tmp' \
		'tests/security-output.test'
	mutation out-blockdev sampler/out-file.c \
		's/if \(S_ISBLK\(st->st_mode\)\) \{/if (0) {/' \
		'-o writes into a block device' \
		'tests/security-output.test'
	mutation out-chardev sampler/out-file.c \
		's/S_ISCHR\(st->st_mode\) && !writable_chardev/0 \&\& !writable_chardev/' \
		'-o opens any character device (/dev/kmsg)' \
		'tests/security-output.test'
	mutation out-owner sampler/out-file.c \
		's/fchown\(fd, res\.st\.st_uid, res\.st\.st_gid\) < 0 && mine\.st_uid != res\.st\.st_uid/0/' \
		'a file replaced by -o does not keep its owner' \
		'tests/security-output.test'
	mutation text-messages sampler/error.c \
		's/len = collapse_text_escape\(safe, sizeof\(safe\) - 1, buf\);/len = strlen(strcpy(safe, buf));/' \
		'messages (start line, already-traced hint) print target names raw' \
		'tests/security-terminal.test'
	mutation text-dump sampler/output.c \
		's/\tcollapse_text_write\(out, s\);/\tfputs(s, out);/' \
		'dump text prints names raw' \
		'tests/security-terminal.test'
	mutation comm-newline ptrace/procfs.c \
		's/if \(len && buf\[len - 1\] == .\\n.\)/buf[strcspn(buf, "\\n")] = 0;\n\tif (0)/' \
		'process and thread names are cut at a newline of their own (only the last is the kernel'"'"'s)' \
		'tests/security-terminal.test'
	mutation text-bidi collapse/text.c \
		's/return !\(cp == 0x061c/return 1 || !(cp == 0x061c/' \
		'bidi overrides reach the terminal' \
		'tests/security-terminal.test'
	mutation text-top ui/text.c \
		's/n = collapse_text_escape_char\(s, avail, &used, esc\);/n = 0; used = collapse_utf8_decode(s, avail, &cp); if (!used) used = 1;/' \
		'top shows a bidi override from the target'"'"'s thread name' \
		'tests/security-top.test'
	mutation text-backslash collapse/text.c \
		's/if \(s\[0\] == .\\\\.\) \{/if (0) {/' \
		'a backslash is not escaped: b\\xcac reads two ways' \
		'tests/security-terminal.test tests/unit-collapse'
	mutation folded-escape collapse/collapse.c \
		's/size_t len = collapse_text_escaped_len\(f->name\);/size_t len = f->len;/' \
		'folded output writes names raw (bidi, backslash)' \
		'tests/security-terminal.test'
	mutation svg-escape collapse/svg.c \
		's/collapse_text_escape_char\(p \+ i, len - i, &used, esc\)/(used = 1, 0)/g' \
		'SVG titles and labels write names raw' \
		'tests/security-terminal.test'
	mutation json-bidi collapse/json.c \
		's/collapse_text_char\(p \+ i, len - i\)/collapse_utf8_decode(p + i, len - i, &cp)/g' \
		'JSON (dump, speedscope) writes controls and bidi overrides raw' \
		'tests/security-terminal.test'
	mutation pprof-escape collapse/pprof.c \
		's/if \(collapse_text_escaped_len\(str\) == strlen\(str\)\)/if (1)/' \
		'pprof strings are written raw' \
		'tests/security-terminal.test'
	mutation perfmap-look unwind/perf-map.c \
		's/#define READ_BUDGET_NS \(2 \* NS_PER_SEC\)/#define READ_BUDGET_NS (100 * NS_PER_MS)/' \
		'one look of the perf map stops at 100 ms: a 250,000-line map is never read to its end' \
		'tests/symbols-perfmap-big.test'
	mutation perfmap-bad unwind/perf-map.c \
		's/(bad:\n\t\/\*[^\n]*\*\/\n)\tpm->bad\+\+;/$1\t;/' \
		'perf map lines not in perf'"'"'s format are not counted' \
		'tests/unit-perfmap tests/symbols-perfmap-big.test'
	mutation perfmap-follow unwind/perf-map.c \
		's/fd = unwind_elf_open_in_root_nofollow\(pid, rel\);/fd = unwind_elf_open_in_root(pid, rel);/' \
		'the perf map is read through a symlink' \
		'tests/security-perfmap.test'
	mutation perfmap-owner unwind/perf-map.c \
		's/return "it is owned by another user than the target.s or root";/return NULL;/' \
		'a perf map of another user than the target'"'"'s is read' \
		'tests/security-perfmap.test'
	mutation push-reply sampler/push.c \
		's/lc\.easy_setopt\(curl, CURLOPT_WRITEFUNCTION, reply_write\);\n\s*lc\.easy_setopt\(curl, CURLOPT_WRITEDATA, &reply\);/(void)reply_write;/' \
		'--push writes the server'"'"'s replies to stdout' \
		'tests/security-push.test'
	mutation push-argv sampler/cmd-record.c \
		's/memmove\(host, at \+ 1, len \+ 1\);\n\tmemset\(host \+ len, 0, cut\);/(void)cut; (void)len;/' \
		'credentials in the --push URL stay visible in /proc/PID/cmdline' \
		'tests/security-push.test'
	mutation debuginfod-root-cache unwind/debug-file.c \
		's/\t\tdbgi_cache_for_root\(\);/\t\t(void)dbgi_cache_for_root;/' \
		'root'"'"'s debuginfod cache follows the user'"'"'s HOME' \
		'tests/security-debuginfod.test'

	# --- every binary to its entry (issue 24) ---------------------------
	mutation eh-frame-no-hdr unwind/cfi-read.c \
		's/const struct cfi_index \*x = index_of\(img\);/const struct cfi_index *x = NULL; (void)index_of;/' \
		'a static link without .eh_frame_hdr gets no CFI' \
		'tests/accuracy-builds.test'
	mutation cfi-sdata unwind/cfi-read.c \
		's/if \(\(enc & 0x08\) && n < 8 && \(v >> \(8 \* n - 1\)\)\)/if (0)/' \
		'cfi-read.c: sdata4 pointers are not sign-extended (pc-relative FDE starts below their FDE)' \
		'tests/cfi-read.test'
	mutation cfi-index-sort unwind/cfi-read.c \
		's/\tent_sort\(x->v, x->n\);/\t(void)ent_sort;/' \
		'cfi-read.c: the table of an .eh_frame without a header is searched unsorted' \
		'tests/cfi-read.test'
	mutation cfi-ra-undefined unwind/cfi-read.c \
		's/reg == f->cie.ra_column;/reg != f->cie.ra_column;/' \
		'cfi-read.c: an FDE that marks another register undefined is taken for the outermost frame' \
		'tests/cfi-read.test'
	# --- hostile unwind tables (issue 32) ------------------------------
	mutation cfi-div-overflow unwind/cfi-exec.c \
		's/if \(b == 0 \|\| \(SX\(a\) == INT64_MIN && SX\(b\) == -1\)\)/if (b == 0)/' \
		'cfi-exec.c: DW_OP_div computes INT64_MIN / -1 (SIGFPE on x86-64)' \
		'tests/cfi-read.test tests/security-cfi.test'
	mutation cfi-expr-steps unwind/cfi-exec.c \
		's/if \(\*steps == 0\)\n(\t\t\treturn -ELOOP;)/if (0)\n$1/' \
		'cfi-exec.c: an expression runs without a step bound (a DW_OP_skip loop hangs the unwinder)' \
		'tests/security-cfi.test'
	mutation cfi-state-depth unwind/cfi-exec.c \
		's/remember \? \*nsaved == CFI_MAX_STATES :/remember ? 0 :/' \
		'cfi-exec.c: remember_state pushes past its 8 saved rows' \
		'tests/cfi-read.test tests/security-cfi.test'
	mutation cfi-insn-budget unwind/cfi-exec.c \
		's/if \(\*budget == 0\)\n\t\t\treturn -E2BIG;/if (0)\n\t\t\treturn -E2BIG;/' \
		'cfi-exec.c: no bound on the instructions run for one row (remember/restore pairs copy a row each, at every sample)' \
		'tests/cfi-read.test'
	mutation x86-decode-bound unwind/x86-code.c \
		's/size_t known = \(size_t\)\(end - code\) < INSN_MAX \? \(size_t\)\(end - code\) : INSN_MAX;/size_t known = (size_t)(end - code);/' \
		'x86-code.c: unwind_x86_decode() takes every byte it is given, past an instruction'"'"'s 15 (its copy overflows)' \
		'tests/fuzz-cfi.test'

	mutation mips-syscall-code arch/arch-mips.c \
		's/\.syscall_insn = \{ 0xfc00003f, 0x0000000c \}/.syscall_insn = { 0, 0 }/' \
		'MIPS: a stop that cut a blocking call short reads as running (NT_PRSTATUS has no r0): --idle never reuses a sleeping thread'"'"'s stack' \
		'tests/vm-mipsel.test'
	mutation lr-bad-pc unwind/engine-fp.c \
		's/if \(m && \(m->perms & MAPPING_X\)\)\n\t\treturn 0;         \/\* code:/if (1)\n\t\treturn 0;         \/* code:/' \
		'aarch64: a call through NULL does not go on at the link register' \
		'tests/vm-aarch64.test'
	mutation null-call-end unwind/engine-dwarf.c \
		's/if \(new_ip == 0 && !sig\)/if (new_ip == 0)/' \
		'a signal frame at pc 0 (a call through NULL) ends the walk' \
		'tests/dump-nullcall.test'
	mutation ra-not-code unwind/engine-dwarf.c \
		's/if \(rm \? !\(rm->perms & MAPPING_X\) : ip < LOWEST_CODE\)/if (0 \&\& rm)/' \
		'a return address in data memory (CFI that does not hold) is shown as a frame' \
		'tests/dump-badcfi.test'
	mutation ra-first-page unwind/engine-dwarf.c \
		's/: ip < LOWEST_CODE\)/: 0)/' \
		'a return address in the first page (no code there) is shown as a frame' \
		'tests/dump-badcfi.test'
	mutation jit-return-entry unwind/engine-fp.c \
		's/if \(!unwind_mapping_generated\(code\) && !unwind_x86_plausible_ra\(t, mr, ret\)\)/if (!unwind_x86_plausible_ra(t, mr, ret))/' \
		'a frame record whose return address into generated code follows no call (a JVM interpreter'"'"'s return entry) is refused: the walk of a Java thread is lost there' \
		'tests/dump-jvmlike.test'
	mutation jit-chain-return-entry unwind/engine-fp.c \
		's/!returns_into_generated_code\(f->t, ra\) &&/!(0 \&\& returns_into_generated_code(f->t, ra)) \&\&/' \
		'from compiled code stopped anywhere, a frame record whose return address into generated code follows no call is refused: a guess instead, then "frame pointer chain broken" (OpenJDK 17'"'"'s main thread in an OSR loop)' \
		'tests/dump-jvmlike.test'
	mutation jit-record-scan unwind/engine-fp.c \
		's/if \(f->prev_how == UNWIND_HOW_SCAN \|\| !a->fp_chain \|\| pc == 0\)/if (1)/' \
		'no frame record is looked for up the stack from generated code that keeps none: a Java thread in compiled code without frame pointers skips its interpreted frames and stops at the call stub' \
		'tests/dump-jvmlike.test'
	mutation jit-record-two-links unwind/engine-fp.c \
		's/if \(r.r\[a->reg_fp\] == 0 \|\| unwind_fp_record_step/if (r.r[a->reg_fp] != 0 \&\& unwind_fp_record_step/' \
		'a 0 beside a code address among a compiled frame'"'"'s locals is taken for the last frame record: a junk frame, then the end of the stack' \
		'tests/dump-jvmlike.test'
	mutation scan-retry unwind/engine-dwarf.c \
		's/#define SCAN_RETRIES 8/#define SCAN_RETRIES 0/' \
		'a walk that went nowhere from a scanned return address is not tried again from the next one: a thread of translated code (qemu-user) stops at a stale return address'"'"'s implausible frame' \
		'tests/dump-translated.test'
	mutation scan-guess-shown unwind/engine-dwarf.c \
		's/bool astray = stop == UNWIND_STOP_BAD_FRAME;/bool astray = false;/' \
		'the frames a scan guessed are shown where the walk from them ended at an implausible frame: a call that returned long ago appears in the stack' \
		'tests/dump-translated.test'
	mutation scan-zero-end unwind/engine-dwarf.c \
		's/return last->n > 0 \? UNWIND_STOP_BAD_FRAME : UNWIND_STOP_END;/return UNWIND_STOP_END;/' \
		'a 0 return address after a scanned frame is taken for the end of the stack: a stale frame shown, "end of stack" where the stack goes on' \
		'tests/dump-translated.test'
	mutation code-start-generated unwind/engine-x86.c \
		's/return \*no_symbol && !unwind_mapping_generated\(m\) &&/return *no_symbol \&\&/' \
		'a function start is looked for in generated code: the code before a translated block is taken for its prologue, and a stale return address for its caller' \
		'tests/dump-translated.test'
	mutation label-in-sized unwind/symtab.c \
		's/if \(\(s->info & SYM_REACH\) && s->start < covered\)\n\t\t\tcontinue;//' \
		'a label of size 0 inside a function of known size names the code after it: a thread in qemu'"'"'s safe_syscall_base shows safe_syscall_end' \
		'tests/symbols-sizes.test'
	mutation go-cgo-return unwind/go-stack.c \
		's/if \(m->go != 1\)\n\t\treturn 0;/return 0;/' \
		'where C returns to Go'"'"'s asmcgocall, its CFI is followed up the system stack: a goroutine in C shows runtime.park_m and ends at an implausible frame' \
		'tests/go-cgo.test'
	mutation go-cgo-switch-down unwind/engine-dwarf.c \
		's/if \(new_sp < prev_sp && !sig && !switched\)/if (new_sp < prev_sp \&\& !sig)/' \
		'a walk back to a goroutine'"'"'s stack, below the system stack, is taken for a frame that does not move up: it ends at asmcgocall' \
		'tests/go-cgo.test'
	mutation x86-vex unwind/x86-code.c \
		's/if \(x\[k\] == 0xc4 \|\| x\[k\] == 0xc5 \|\| x\[k\] == 0x62\)/if (0)/' \
		'AVX code is not decoded: a leaf of x264'"'"'s assembly ends the stack after frame #0 (its frame pointer register holds 0 as data)' \
		'tests/unit-symtab tests/dump-asmleaf.test'
	mutation null-call-sp unwind/engine-x86.c \
		's/return exact && take_frame\(t, mr, regs, sp \+ 8, 0\);/return 0 \&\& take_frame(t, mr, regs, sp + 8, 0);/' \
		'a pc outside executable memory does not return to [sp]' \
		'tests/dump-nullcall.test'
	mutation prologue-analysis unwind/engine-x86.c \
		's/\*no_symbol = !func_start\(m, pc, exact, &start\);/*no_symbol = !func_start(m, pc, exact, \&start) || 1;/' \
		'code without CFI is not stepped by prologue analysis' \
		'tests/accuracy-builds.test tests/go-dump.test'
	# No entry-end (the DWARF walk's stop at the program's entry point,
	# unwind/engine-dwarf.c): equivalent on every build made here.
	# glibc's _start has CFI that ends the stack; musl's (x86-64, static
	# and dynamic) has none, but clears the frame pointer, and the word
	# above its frame is argc, which no rule takes for a return address:
	# the walk ends there without the check ("end of stack", the same
	# frames, tests/accuracy-builds.test and a musl-gcc -static program,
	# session 17).  The check stays for startup code that does neither.
	mutation debug-file-limit unwind/debug-file.c \
		's/if \(\(uint64_t\)dbg->size > limit\) \{/if (0) {/' \
		'a debug file far larger than its module is read (the CRC of a 4 GiB sparse file)' \
		'tests/security-debugbounds.test'
	mutation minidebug-limit unwind/minidebuginfo.c \
		's/if \(max > MINIDEBUG_MAX\)\n\t\tmax = MINIDEBUG_MAX;/max = MINIDEBUG_MAX;/' \
		'a MiniDebugInfo may decompress to 256 MiB whatever its module' \
		'tests/security-debugbounds.test'
	mutation symtab-module-budget unwind/sym-build.c \
		's/if \(b->n >= b->max_funcs\) \{/if (0) {/; s/if \(count > b->max_funcs \* SYMTAB_ENTRIES_RATIO\) \{/if (0) {/' \
		'a module'"'"'s symbol table of any size is read and kept (a 20M-symbol library: 1.8 GB)' \
		'tests/security-symbols.test'
	mutation symtab-run-budget unwind/sym-build.c \
		's/if \(!unwind_budget_take\(UNWIND_BUDGET_SYMBOLS, more\)\) \{/if (0) {/' \
		'the symbol tables of a run are not bounded together' \
		'tests/security-symbols.test'
	mutation push-local-roots sampler/cmd-record.c \
		's/if \(!o->cfg.threads \|\| o->threads_asked\)\n\t\treturn write/if (1)\n\t\treturn write/' \
		'--push adds thread roots to the local -o output' \
		'tests/push-ingest.test'
	mutation command-tree ptrace/launch.c \
		's/\*out = v;\n\treturn n;/*out = v;\n\treturn 0;/' \
		'the children of a command stackspy started are left running when the recording ends' \
		'tests/cli-command-end.test'
	mutation watchdog-append ptrace/watchdog.c \
		's/O_WRONLY \| O_APPEND \| O_NONBLOCK/O_WRONLY | O_NONBLOCK/' \
		'the watchdog'"'"'s message overwrites the start of the log stderr goes to' \
		'tests/record-watchdog.test'
	mutation maps-current sampler/unwinder.c \
		's/if \(nf > 0 && !unwind_target_maps_current\(up->ut, p->uw_own\.frames, nf, sampled_ns\)\)/if (0 \&\& sampled_ns)/' \
		'a library swapped at the same address keeps the old one'"'"'s names' \
		'tests/record-dlswap.test'
	mutation code-at-stop unwind/target.c \
		's/\t\t    file_code_is\(m, pc, s->code, n\)\)\n/\t\t    1)\n/' \
		'the code at the pc, read just after the stop, is not compared with the file the map names: a library swapped since the stop names its code' \
		'tests/record-dlswap.test'
	mutation past-maps unwind/target.c \
		's/\tif \(p\) \{\n\t\tt->at_stop = \*p;/\tif (0 \&\& p) {\n\t\tt->at_stop = *p;/' \
		'a library swapped since the stop is not looked for among the mappings the map held before: its samples are [unknown]' \
		'tests/record-dlswap.test'
	mutation tracer-unwinds sampler/cmd-record.c \
		's/r = profiler_unwind_in_background\(p\);/r = 0;/' \
		'record unwinds on the tracer thread: a slow unwind holds the ticks and the target'"'"'s signals' \
		'tests/record-slow-unwind.test'
	mutation yield-thread unwind/yield.c \
		's/ &&\n\t    pthread_equal\(yield_thread, pthread_self\(\)\)\)/)/' \
		'the unwinder'"'"'s thread polls for the tracer: the target'"'"'s stops are taken and never resumed' \
		'tests/record-slow-unwind.test'
	mutation watchdog-rescue ptrace/watchdog.c \
		's/\tpage->rescue = 1;/\t(void)page;/' \
		'the watchdog kills a stuck stackspy without letting it write what it has' \
		'tests/record-watchdog.test'
	mutation unwinder-finish sampler/unwinder.c \
		's/(limit_ms \* NS_PER_MS\) \{\n\t\t\t)break;/$1since = now;/' \
		'the end of a recording waits for a stuck unwinder without bound: no output' \
		'tests/record-slow-unwind.test'

	# --- CPython's memory is hostile input ------------------------------
	mutation py-name-bound unwind/py-code.c \
		's/if \(length > PY_MAX_STRING_SEEN\)\n\t\treturn false;//' \
		'a name whose length says 2^62 is read as 1024 characters of whatever follows it' \
		'tests/python-hostile.test'
	mutation py-code-type unwind/py-code.c \
		's/if \(type != code_type\)\n\t\treturn false;//' \
		'any object a frame points at is named as a code object' \
		'tests/python-hostile.test'
	mutation py-thread-bound unwind/python.c \
		's/ts && n < PY_MAX_THREADS; n\+\+/ts; n++/' \
		'a thread list that loops is walked for ever (dump --core of it never ends)' \
		'tests/python-hostile.test'
	mutation py-keep-eval unwind/python.c \
		's/if \(\(o == o0 \|\| python_mode/if ((o < o0 || python_mode/' \
		'a run of frames that are no code objects takes its eval-loop frame away with it' \
		'tests/python-hostile.test'
	mutation py-version-check unwind/python.c \
		's/refuse\(st, "version %u.%u is not supported \(3.11 and later are\)", major, minor\);\n\treturn false;/st->L = layout_311;\n\treturn true;/' \
		'an interpreter of an unknown version is read with 3.11'"'"'s layout' \
		'tests/python-hostile.test'

	# --- who waits for whom (dump, --follow) ---------------------------
	mutation waits-stopped sampler/waits.c \
		"s/d->state == 'T' \\|\\| d->state == 't' \\|\\| //" \
		'a stopped thread is taken to wait on the call it was in (a stopped reader makes a false cycle with its writer)' \
		'tests/dump-waits.test'
	mutation follow-cycle sampler/follow.c \
		's/\t\t\t\tc->cycle_at = i;\n\t\t\t\treturn;/\t\t\t\t(void)i;/' \
		'a chain that comes back to a thread goes round until its bound: no deadlock named' \
		'tests/dump-waits.test'

	# --- the command line never starts a service by accident ----------
	mutation bare-word-launch sampler/options.c \
		's/(if \(!sampler_looks_like_pids\(argv\[optind\]\)\)\n\t\t\t)bare_word_and_help/$1return -1;\n\t\tif (0)\n\t\t\tbare_word_and_help/' \
		'record NAME and top NAME start NAME as a command again (a second redis-server), without --' \
		'tests/cli-newcomer.test'
}

die() { echo "mutate.sh: $*" >&2; exit 2; }

usage="usage: tests/mutate.sh [-q] [-l] [-r RUNS] [-m NAME[,NAME...]] [TEST...]"
list=no quick=no only= runs=1
while getopts lqm:r: c; do
	case $c in
	l) list=yes ;;
	q) quick=yes ;;
	m) only=",$OPTARG," ;;
	r) runs=$OPTARG ;;
	*) die "$usage" ;;
	esac
done
case $runs in
''|*[!0-9]*|0*) die "invalid -r argument: '$runs' ($usage)" ;;
esac
shift $((OPTIND - 1))
given_tests=$*

# -l reads the sources only (tests/mutate-records.test runs it in the
# source tree of any build).
[ -f tests/mutate.sh ] && { [ $list = yes ] || [ -f Makefile ]; } ||
	die "run me from the top of a configured in-tree build"
command -v perl > /dev/null || die "no perl"

work=$(mktemp -d "${TMPDIR:-/tmp}/stackspy-mutate.XXXXXX") || die "mktemp"
restore_file=
restore()
{
	if [ -n "$restore_file" ]; then
		cp "$work/orig" "$restore_file" && restore_file=
	fi
}
trap 'restore; rm -rf "$work"' EXIT
trap 'exit 2' HUP INT TERM

# apply FILE EXPR: the mutated FILE in $work/mutant; false if unchanged.
apply()
{
	perl -0pe "$2" "$1" > "$work/mutant" || die "perl failed on $1: $2"
	! cmp -s "$1" "$work/mutant"
}

# Pass 1: every record still applies (before any build or test).
bad=0 n=0
mutation()
{
	case $only in ''|*",$1,"*) ;; *) return 0 ;; esac
	n=$((n + 1))
	[ -f "$2" ] || { echo "ERROR $1: no file $2"; bad=$((bad + 1)); return 0; }
	if apply "$2" "$3"; then
		[ $list = yes ] && printf '%-20s %-22s %s\n' "$1" "$2" "$4"
	else
		echo "ERROR $1: the pattern no longer matches $2: $3"
		bad=$((bad + 1))
	fi
	return 0
}
mutations
[ $n -gt 0 ] || die "no mutation named ${only:-at all}"
[ $bad = 0 ] || die "$bad mutation(s) no longer apply: update their records"
[ $list = yes ] && exit 0

# A mutant stackspy that never ends (a bound taken away) can outlive its
# test: the test's time limit ends the test, and timeout(1) runs stackspy
# in a process group of its own.  None is left running after a run.
binary=$(pwd)/stackspy
reap_mutants()
{
	for _p in /proc/[0-9]*; do
		case $(readlink "$_p/exe" 2>/dev/null) in
		"$binary"|"$binary (deleted)") kill -9 "${_p#/proc/}" 2>/dev/null ;;
		esac
	done
	return 0
}

# Pass 2: apply, build, test, restore, one at a time.
survived= caught= broken= flaky=
mutation()
{
	case $only in ''|*",$1,"*) ;; *) return 0 ;; esac
	_name=$1 _file=$2 _expr=$3 _what=$4 _tests=$5
	if [ -n "$given_tests" ]; then
		_tests=$given_tests
	elif [ $quick = no ]; then
		_tests=
	fi
	echo "=== $_name: $_what ($_file)"
	cp "$_file" "$work/orig" || die "cannot copy $_file"
	apply "$_file" "$_expr" || die "$_name no longer applies"
	restore_file=$_file
	cp "$work/mutant" "$_file"
	if ! nice make -j2 > "$work/build.log" 2>&1; then
		tail -20 "$work/build.log"
		echo "    DOES NOT BUILD"
		broken="$broken $_name"
	else
		# Each run: caught (a test failed), survived, or broken (make
		# check failed without a failing test).
		_run=0 _caught=0 _surv=0 _brk=0 _tag=
		while [ $_run -lt "$runs" ]; do
			_run=$((_run + 1))
			if [ -n "$_tests" ]; then
				nice make -j2 check TESTS="$_tests" > "$work/check.log" 2>&1
			else
				nice make -j2 check > "$work/check.log" 2>&1
			fi
			_rc=$?
			reap_mutants
			_by=$(sed -n 's/^\(FAIL\|ERROR\|XPASS\): \([^ ]*\).*/\2(\1)/p' "$work/check.log" |
				sort -u | tr '\n' ' ')
			[ "$runs" = 1 ] || _tag=" (run $_run of $runs)"
			if [ $_rc = 0 ]; then
				echo "    SURVIVED${_tag:-} (tests: ${_tests:-make check})"
				_surv=$((_surv + 1))
			elif [ -z "$_by" ]; then
				tail -20 "$work/check.log"
				echo "    make check failed without a failing test${_tag:-}"
				_brk=$((_brk + 1))
			else
				echo "    caught by ${_by% }${_tag:-}"
				_caught=$((_caught + 1))
			fi
		done
		if [ $_brk -gt 0 ]; then
			broken="$broken $_name"
		elif [ $_caught = 0 ]; then
			survived="$survived $_name"
		elif [ $_surv -gt 0 ]; then
			echo "    FLAKY: caught in $_caught of $runs runs"
			flaky="$flaky $_name($_caught/$runs)"
		else
			caught="$caught $_name"
		fi
	fi
	cp "$work/orig" "$_file" || die "cannot restore $_file (copy in $work/orig)"
	restore_file=
	return 0
}
mutations
echo "=== rebuilding the unmutated tree"
nice make -j2 > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; die "the restored tree does not build"; }

echo
echo "caught:  ${caught:- none}"
echo "survived:${survived:- none}"
[ "$runs" = 1 ] || echo "flaky:   ${flaky:- none} (caught in fewer than $runs runs)"
[ -z "$broken" ] || { echo "broken:  $broken"; exit 2; }
[ -z "$survived$flaky" ] || exit 1
exit 0
