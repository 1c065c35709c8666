# accuracy.py: stackspy against gdb, at random stop points of running
# programs.  Runs inside gdb (its Python API gives the real frames):
#
#   gdb -nx -batch -x accuracy.py -- (nothing; settings from the environment)
#
#   ACC_STACKSPY   path of stackspy
#   ACC_STOPS      stops per program (default 10)
#   ACC_SEED       random seed (default: time)
#   ACC_PROGRAMS   one program per line: NAME<TAB>COMMAND, run as
#                  `sh -c "exec COMMAND"` (so redirections work)
#   ACC_ENGINE     stackspy --engine (default auto)
#   ACC_REPORT     file for the per-class table (default stdout)
#   ACC_VERBOSE    1: print every disagreeing stack
#   ACC_INDEX_CACHE  a directory for gdb's index cache (default: none)
#
# For each program: start it, let it run, then ACC_STOPS times: sleep a
# random 10-80 ms, kill -STOP, wait until every thread is stopped, run
# `stackspy dump --format json` (which must leave it stopped), attach gdb,
# walk every thread (INLINE_FRAME and TAILCALL_FRAME skipped: they have no
# frame of their own on the stack), detach, kill -CONT.  Then compare frame
# by frame and classify each disagreement.  The last line is
#   RESULT stacks=N exact=N frames=N gdb_named=N named=N name_diff=N
#          resumed=N switch_junk=N
# (tests/accuracy.test and bench/accuracy.sh read it); before it, one line
#   PROGRAM NAME stops=N stacks=N exact=N longer=N switch_junk=N
# per program (longer: stackspy went on to the end of the stack, every
# frame named, where gdb gave up or went on with frames it cannot name;
# switch_junk: stackspy ended at a Go stack switch, runtime.morestack or
# runtime.systemstack on g0, where Go's own traceback ends too, and gdb
# went on from there with frames it cannot name).
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set backtrace past-main on")
gdb.execute("set backtrace past-entry on")
gdb.execute("set print thread-events off")
gdb.execute("set print inferior-events off")
try:
    gdb.execute("set debuginfod enabled off")
except gdb.error:
    pass
# Every attach reads the shared libraries' symbols again (libc6-dbg's
# DWARF: some 0.15 s of CPU each time); gdb's index cache makes that a
# load of the index it wrote the first time (0.02 s).  The cache does not
# change what gdb finds: it indexes where symbols are, the frames still
# come from the same CFI and DWARF.
INDEX_CACHE = os.environ.get("ACC_INDEX_CACHE")
if INDEX_CACHE:
    try:
        os.makedirs(INDEX_CACHE, exist_ok=True)
        gdb.execute("set index-cache directory %s" % INDEX_CACHE)
        gdb.execute("set index-cache enabled on")
    except gdb.error:
        pass

SKIP = (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME)
STACKSPY = os.environ["ACC_STACKSPY"]
STOPS = int(os.environ.get("ACC_STOPS", "10"))
SEED = int(os.environ.get("ACC_SEED", str(int(time.time()))))
ENGINE = os.environ.get("ACC_ENGINE", "auto")
VERBOSE = os.environ.get("ACC_VERBOSE") == "1"
rng = random.Random(SEED)
out = open(os.environ["ACC_REPORT"], "w") if os.environ.get("ACC_REPORT") else sys.stdout


def log(msg):
    out.write(msg + "\n")
    out.flush()


def task_states(pid):
    st = {}
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                    s = f.read()
                st[int(t)] = s[s.rindex(")") + 2]
            except OSError:
                pass
    except OSError:
        pass
    return st


def wait_stopped(pid):
    for _ in range(500):
        st = task_states(pid)
        if st and all(v == "T" for v in st.values()):
            return True
        time.sleep(0.01)
    return False


def gdb_frames():
    """{tid: [(pc, name, how)]} for the attached inferior; how is gdb's
    unwind-stop reason at the outermost frame."""
    res = {}
    for inf in gdb.inferiors():
        for th in inf.threads():
            th.switch()
            frames = []
            fr = gdb.newest_frame()
            last = fr
            while fr is not None and len(frames) < 1000:
                if fr.type() not in SKIP:
                    # The start of the function, to tell an alias (same
                    # code, another name) from a wrong name.
                    start = None
                    try:
                        fn = fr.function()
                        if fn is not None:
                            start = int(fn.value().address)
                    except (gdb.error, RuntimeError):
                        pass
                    frames.append((fr.pc(), fr.name(), start))
                last = fr
                try:
                    fr = fr.older()
                except gdb.error:
                    break
            # A return address of 0 ends the stack (Go's runtime.clone and
            # runtime.goexit leave one): gdb shows it as a frame "0x0 in
            # ??", stackspy ends before it.
            while frames and frames[-1][0] == 0:
                frames.pop()
            reason = last.unwind_stop_reason() if last is not None else 0
            res[th.ptid[1]] = (frames, gdb.frame_stop_reason_string(reason))
    return res


SUFFIX = re.compile(r"\.(cold|part\.\d+|isra\.\d+|constprop\.\d+|lto_priv\.\d+|localalias)(?=\.|$)")


def norm_name(n):
    if n is None:
        return None
    n = n.split("@")[0]
    # Parameter lists (gdb prints them for C++), not template arguments.
    if n.endswith(")"):
        depth = 0
        for i in range(len(n) - 1, -1, -1):
            if n[i] == ")":
                depth += 1
            elif n[i] == "(":
                depth -= 1
                if depth == 0:
                    n = n[:i]
                    break
    while True:
        m = SUFFIX.sub("", n)
        if m == n:
            break
        n = m
    return n


class Stats:
    def __init__(self):
        self.stacks = 0
        self.exact = 0
        self.longer = 0
        self.switch_junk = 0
        self.frames = 0
        self.gdb_named = 0
        self.named = 0
        self.name_diff = 0
        self.resumed = 0
        self.classes = {}
        self.examples = {}

    def add(self, cls, example):
        self.classes[cls] = self.classes.get(cls, 0) + 1
        self.examples.setdefault(cls, example)


def fname(frames, i):
    if 0 <= i < len(frames):
        f = frames[i]
        return "%s (%s)" % (f.get("function") or "??",
                            os.path.basename(f.get("module") or "?"))
    return "-"


def classify(ours, ofr, stop, theirs, gstop):
    """One class name for a disagreeing stack."""
    a = ours
    b = [pc for pc, _, _ in theirs]
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    if i == n:
        if len(a) < len(b):
            return "stackspy stops early (%s) after %s" % (stop, fname(ofr, len(a) - 1))
        return "gdb stops early (%s) after %s" % (gstop, fname(ofr, len(b) - 1))
    if i == 0:
        return "different ip at frame 0"
    if i + 1 < len(b) and a[i] == b[i + 1]:
        return "stackspy misses a frame below %s" % fname(ofr, i - 1)
    if i + 1 < len(a) and a[i + 1] == b[i]:
        return "stackspy has an extra frame below %s" % fname(ofr, i - 1)
    return "different caller of %s" % fname(ofr, i - 1)


GO_STACK_ENDS = {"runtime.clone", "runtime.goexit", "runtime.mcall"}
# A goroutine's stack switched to g0 here: Go's traceback ends at them.
GO_SWITCHES = {"runtime.morestack.abi0", "runtime.systemstack.abi0",
               "runtime.morestack", "runtime.systemstack"}


def exec_ranges(pid):
    """The executable mappings of pid, as (start, end) pairs."""
    r = []
    try:
        with open("/proc/%d/maps" % pid) as f:
            for line in f:
                addr, perms = line.split()[:2]
                if "x" in perms:
                    lo, hi = addr.split("-")
                    r.append((int(lo, 16), int(hi, 16)))
    except OSError:
        pass
    return r


def compare(prog, doc, g, st, code=()):
    ours = {}
    for t in doc.get("threads") or []:
        frs = [f for f in t.get("frames") or [] if not f.get("inlined")]
        ours[t["tid"]] = (frs, t.get("stop"))
    for tid in sorted(set(ours) | set(g)):
        if tid not in g or tid not in ours:
            st.stacks += 1
            st.add("thread seen by one side only", "%s tid %d" % (prog, tid))
            continue
        ofr, stop = ours[tid]
        theirs, gstop = g[tid]
        a = [int(f["ip"], 16) for f in ofr]
        # Go's stacks end at runtime.clone (thread entry), runtime.goexit
        # (goroutine entry) and runtime.mcall (a switch to g0 that never
        # returns): what either tool finds beyond them is whatever lies on
        # the stack there, not frames.  Compare up to them.
        for k, (_, name, _) in enumerate(theirs):
            if norm_name(name or "") in GO_STACK_ENDS:
                theirs = theirs[:k + 1]
                if a[:k + 1] == [pc for pc, _, _ in theirs]:
                    a, ofr = a[:k + 1], ofr[:k + 1]
                break
        st.stacks += 1
        st.frames += len(theirs)
        for i, (pc, name, start) in enumerate(theirs):
            if i >= len(a) or a[i] != pc or name is None:
                continue
            st.gdb_named += 1
            mine = ofr[i].get("function")
            if mine is None:
                st.add("naming: gdb names, stackspy does not",
                       "%s %s 0x%x in %s" % (prog, name, pc, ofr[i].get("module")))
                continue
            st.named += 1
            mine_start = pc - int(ofr[i].get("offset") or "0", 16)
            if norm_name(mine) != norm_name(name) and start != mine_start:
                st.name_diff += 1
                st.add("naming: %s vs gdb %s" % (norm_name(mine), norm_name(name)),
                       "%s 0x%x" % (prog, pc))
        if a == [pc for pc, _, _ in theirs]:
            st.exact += 1
            continue
        cls = classify(a, ofr, stop, theirs, gstop)
        # gdb gave up (a frame without CFI, a static binary's start), or
        # went on with junk (frames it cannot name, or outside code, from
        # code without CFI), where stackspy went on to the end of the
        # stack with every frame in a module.
        b = [pc for pc, _, _ in theirs]
        i = 0
        while i < min(len(a), len(b)) and a[i] == b[i]:
            i += 1
        if stop == "end of stack" and i > 0 and (
                (i == len(b) and len(a) > len(b)) or
                (i < len(b) and i < len(a) and
                 (theirs[i][1] is None or
                  not any(lo <= b[i] < hi for lo, hi in code)) and
                 all(f.get("function") or f.get("module") for f in ofr[:-1]))):
            st.longer += 1
        if (0 < i == len(a) < len(b) and (ofr[-1].get("function") or "") in GO_SWITCHES and
                (theirs[i][1] is None or not any(lo <= b[i] < hi for lo, hi in code))):
            st.switch_junk += 1
        detail = ["%s tid %d: stackspy %d frames (%s), gdb %d (%s)" %
                  (prog, tid, len(a), stop, len(theirs), gstop)]
        for i in range(max(len(a), len(theirs))):
            x = "0x%x" % a[i] if i < len(a) else "-"
            y = "0x%x" % theirs[i][0] if i < len(theirs) else "-"
            detail.append("  #%-3d %s %-16s %-16s %s | %s" % (
                i, " " if x == y else "!", x, y,
                fname(ofr, i), theirs[i][1] if i < len(theirs) else ""))
        st.add(cls, "\n".join(detail))
        if VERBOSE:
            log("DISAGREE %s\n%s" % (cls, "\n".join(detail)))


def run_program(name, cmd, st):
    try:
        p = subprocess.Popen(["/bin/sh", "-c", "exec " + cmd],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        log("SKIPPED %s: %s" % (name, e))
        return
    try:
        time.sleep(0.3)
        if p.poll() is not None:
            log("SKIPPED %s: exited with %s" % (name, p.returncode))
            return
        done = 0
        stacks0, exact0, longer0, junk0 = st.stacks, st.exact, st.longer, st.switch_junk
        for _ in range(STOPS):
            # A random moment: the stops follow each other, so that the
            # phase of a program's loops is random whatever the range.
            time.sleep(rng.uniform(0.01, 0.08))
            if p.poll() is not None:
                break
            os.kill(p.pid, signal.SIGSTOP)
            try:
                if not wait_stopped(p.pid):
                    log("ERROR %s: did not stop" % name)
                    continue
                # Native frames against gdb's bt: CPython's frames (they
                # replace the eval loop's) are tests/python-frames.test's.
                r = subprocess.run([STACKSPY, "dump", str(p.pid), "--format", "json",
                                    "--engine", ENGINE, "--max-depth", "1000",
                                    "--python=off"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if r.returncode not in (0, 1):
                    log("ERROR %s: stackspy exited %d: %s" % (name, r.returncode, r.stderr.decode()))
                    st.add("stackspy failed", name)
                    continue
                doc = json.loads(r.stdout)
                # A detached thread of a group-stopped process is woken to
                # re-enter the group stop: R for a moment is expected.
                if not wait_stopped(p.pid):
                    st_after = task_states(p.pid)
                    # A ptrace-layer bug, not an unwinding one: counted
                    # apart, and this stop is not compared (gdb would see
                    # a running thread).
                    log("ERROR %s: stackspy did not leave the process stopped: %r" % (name, st_after))
                    st.resumed += 1
                    continue
                # This program's symbols and CFI, not the last one's: gdb
                # keeps the previous executable's (and shared library
                # list) across attach, which breaks a static binary such
                # as a Go program after a dynamic one.
                if done == 0:
                    gdb.execute("file /proc/%d/exe" % p.pid, to_string=True)
                gdb.execute("attach %d" % p.pid, to_string=True)
                try:
                    g = gdb_frames()
                finally:
                    gdb.execute("detach", to_string=True)
                compare(name, doc, g, st, exec_ranges(p.pid))
                done += 1
            finally:
                os.kill(p.pid, signal.SIGCONT)
        log("PROGRAM %s stops=%d stacks=%d exact=%d longer=%d switch_junk=%d" % (
            name, done, st.stacks - stacks0, st.exact - exact0, st.longer - longer0,
            st.switch_junk - junk0))
    finally:
        p.kill()
        p.wait()


def main():
    st = Stats()
    log("SEED %d" % SEED)
    for line in os.environ.get("ACC_PROGRAMS", "").splitlines():
        if not line.strip():
            continue
        name, _, cmd = line.partition("\t")
        run_program(name.strip(), cmd.strip(), st)
    log("")
    log("%-6s  %s" % ("count", "class of disagreement"))
    for cls, c in sorted(st.classes.items(), key=lambda kv: -kv[1]):
        log("%6d  %s" % (c, cls))
    if VERBOSE or os.environ.get("ACC_EXAMPLES") == "1":
        for cls, ex in st.examples.items():
            log("EXAMPLE %s\n%s" % (cls, ex))
    log("")
    log("stacks frame-exact: %d/%d (%.2f%%)" % (st.exact, st.stacks,
        100.0 * st.exact / st.stacks if st.stacks else 0))
    log("frames named where gdb names them: %d/%d (%.2f%%), names differing: %d" % (
        st.named, st.gdb_named, 100.0 * st.named / st.gdb_named if st.gdb_named else 0,
        st.name_diff))
    if st.resumed:
        log("stops where stackspy left a stopped thread running: %d" % st.resumed)
    log("RESULT stacks=%d exact=%d frames=%d gdb_named=%d named=%d name_diff=%d resumed=%d "
        "switch_junk=%d" % (st.stacks, st.exact, st.frames, st.gdb_named, st.named,
                            st.name_diff, st.resumed, st.switch_junk))


try:
    main()
except Exception as e:
    import traceback
    traceback.print_exc()
    out.write("ERROR %s\n" % e)
    gdb.execute("quit 99")
