#!/usr/bin/env python3
"""tests/vm-check.py - check what a guest of tests/vm-*.test printed.

usage: vm-check.py CONSOLE.LOG [--static T,...] [--deadlock T:E,...]
                   [--oncpu T,...] TARGET:ENGINE...

CONSOLE.LOG holds the markers of tests/vm-init.sh.  Each TARGET:ENGINE
named must have a dump, and each TARGET a record; each thread of
tests/targets/vm/live.c must show its chain by name, innermost first, in
the dumps and in every recorded stack:

- the functions of live.c in the thread are exactly its chain (the signal
  thread: with a signal frame between on_usr1 and sig_2);
- the walk ended at the end of the stack, not on an error;
- every frame is named, except in a stripped library (Debian's libc of a
  foreign architecture has only .dynsym: its local functions stay
  unnamed, in their module) and the signal trampoline in the vdso (the
  kernel's __kernel_rt_sigreturn on aarch64 and the MIPS trampolines are
  untyped symbols, which the symbol reader skips);
- in static targets (libc's symbols linked in) the outermost frame is the
  thread's entry: _start/__start for the main thread, the clone code for
  the others.

A target's record must also leave it untraced and running (@@tracer).

Each --oncpu TARGET (of live.c) must have an on-CPU record (TARGET-oncpu:
no --idle) that counted samples of each busy thread (spin, alloca,
signal), every one in its chain as above, and none of the sleeping ones
(main, sleeper): a thread is counted only where it ran.

Each --deadlock TARGET:ENGINE is a dump of tests/targets/vm/locks.c: it
must report one deadlock, of lock-a and lock-b over mutex_a and mutex_b,
and each of the three lock threads must wait for its mutex, named by
symbol, held by the right thread (lock-c: contention, in no cycle).
Each --same A:E=B:F,... says that dump A with engine E and dump B with F
found the same frames (addresses) in every thread: a core unwound in the
guest and on the host.  Each --eu T:E=FILE,... compares dump T with
engine E frame for frame with eu-stack's output FILE for the same core
(eu-stack's repeated frames counted once; where eu-stack stops after a
frame at 0x0, its frames begin stackspy's).
Exit 0 when every check holds, 1 otherwise (each failure printed).
"""
import json
import re
import sys

CHAINS = {
    "main": ["main_wait", "main"],
    "spin": ["spin_leaf", "spin_2", "spin_1", "spin_entry"],
    "sleeper": ["sleep_2", "sleep_1", "sleep_entry"],
    "alloca": ["va_leaf", "va_alloca", "va_1", "va_entry"],
    "signal": ["handler_leaf", "on_usr1", "SIGNAL", "sig_2", "sig_1",
               "sig_entry"],
}
# tests/targets/vm/nullcall.c (targets named nullcall-*): a call through
# NULL, dumped inside its SIGSEGV handler; the frame at 0x0 between the
# signal frame and null_2 is unnamed, and only that one may be.
NULL_CHAINS = {
    "main": ["main_wait", "main"],
    "nullcall": ["segv_leaf", "on_segv", "SIGNAL", "null_2", "null_1",
                 "null_entry"],
}
OWN = set(n for c in list(CHAINS.values()) + list(NULL_CHAINS.values())
          for n in c)


# The core of the same crash (targets named nullcall-*-core): no handler,
# frame #0 at 0x0; the main thread waits in pthread_join (the crashing thread
# gives it 300 ms to get there).  Cores keep no thread names: the thread that is not
# the main one is the crashed one.
NULL_CORE_CHAINS = {
    "main": ["main_wait", "main"],
    "nullcall": ["null_2", "null_1", "null_entry"],
}
OWN |= set(n for c in NULL_CORE_CHAINS.values() for n in c)


def chains_for(target):
    if target.startswith("nullcall") and target.endswith("-core"):
        return NULL_CORE_CHAINS
    return NULL_CHAINS if target.startswith("nullcall") else CHAINS
MAIN_ENTRY = {"_start", "__start"}
THREAD_ENTRY = {"thread_start", "__thread_start", "clone", "__clone",
                "clone3", "__clone3"}


def sections(path):
    """(kind, target, engine) -> (rc, body lines, stderr lines)."""
    out, tracer, cur = {}, {}, None
    lines = open(path, errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"^@@begin (dump|record) (\S+) ?(\S*)$", ln)
        if m:
            cur = (m.group(1), m.group(2), m.group(3))
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("@@end rc="):
                body.append(lines[i])
                i += 1
            rc = int(lines[i][len("@@end rc="):]) if i < len(lines) else None
            err = []
            i += 2
            while i < len(lines) and not lines[i].startswith("@@"):
                err.append(lines[i])
                i += 1
            out[cur] = [rc, body, err]
            continue
        m = re.match(r"^@@folded (\S+)$", ln)
        if m:
            body = []
            i += 1
            while i < len(lines) and lines[i] != "@@end-folded":
                body.append(lines[i])
                i += 1
            out.setdefault(("record", m.group(1), ""), [None, [], []])[1] = body
        m = re.match(r"^@@tracer (\S+) (\S*) state (\S*)$", ln)
        if m:
            tracer[m.group(1)] = (m.group(2), m.group(3))
        i += 1
    return out, tracer


def role(name, is_main, chains):
    if is_main:
        return "main"
    return name if name in chains else None


def check_chain(names, want, static, stop, entry_set):
    """Problems with one stack: names innermost first ("SIGNAL" marks a
    signal frame, None an unnamed frame), as (text, ...)."""
    errs = []
    got = [n for n in names if n in OWN or n == "SIGNAL"]
    if "SIGNAL" not in want:
        got = [n for n in got if n != "SIGNAL"]
    if got != want:
        errs.append("chain %s, want %s" % (got, want))
    if stop is not None and stop != "end of stack":
        errs.append("walk stopped: %s" % stop)
    if static:
        outer = [n for n in names if n != "SIGNAL"][-1:]
        if not outer or outer[0] not in entry_set:
            errs.append("outermost frame %s is not the thread's entry %s"
                        % (outer, sorted(entry_set)))
    return errs


LOCK_WAITS = {"lock-a": ("mutex_b", "lock-b"), "lock-b": ("mutex_a", "lock-a"),
              "lock-c": ("mutex_a", "lock-a")}


def check_deadlock(d):
    """The errors of a dump of locks.c (JSON d)."""
    errs = []
    by_name = {t["name"]: t for t in d["threads"]}
    missing = sorted(set(LOCK_WAITS) - set(by_name))
    if missing:
        return ["threads missing: %s" % missing]
    addr = {}
    for name, (sym, owner) in sorted(LOCK_WAITS.items()):
        w = by_name[name].get("waits_for")
        if not w or "mutex" not in w:
            errs.append("%s: waits for %s, not a mutex" % (name, w))
            continue
        if w.get("symbol") != sym:
            errs.append("%s: waits for %s, not %s" % (name, w.get("symbol"), sym))
        if w.get("owner") != by_name[owner]["tid"]:
            errs.append("%s: owner %s, not %s (%s)" % (name, w.get("owner"), owner,
                                                     by_name[owner]["tid"]))
        addr.setdefault(sym, w["mutex"])
    cycles = d.get("deadlocks") or []
    pair = {by_name["lock-a"]["tid"], by_name["lock-b"]["tid"]}
    if len(cycles) != 1 or set(cycles[0]["threads"]) != pair:
        errs.append("deadlocks %s, want one of lock-a and lock-b %s" % (cycles, sorted(pair)))
    elif len(addr) == 2 and set(cycles[0]["mutexes"]) != set(addr.values()):
        errs.append("the cycle's mutexes %s are not mutex_a and mutex_b %s" %
                    (cycles[0]["mutexes"], sorted(addr.values())))
    return errs


def main():
    args = sys.argv[1:]
    log = args.pop(0)
    static, want, deadlock, oncpu, same, eu = set(), [], [], [], [], []
    while args:
        a = args.pop(0)
        if a == "--static":
            static = set(args.pop(0).split(","))
        elif a == "--same":
            same += [x.split("=") for x in args.pop(0).split(",")]
        elif a == "--eu":
            eu += [x.split("=") for x in args.pop(0).split(",")]
        elif a == "--oncpu":
            oncpu = args.pop(0).split(",")
        elif a == "--deadlock":
            deadlock += [x.split(":") for x in args.pop(0).split(",")]
        else:
            want.append(a.split(":"))
    secs, tracer = sections(log)
    bad = 0

    failed = []

    def report(title, errs, detail):
        nonlocal bad
        print("%s %s: %s" % ("FAIL" if errs else "ok", title, detail))
        for e in errs:
            print("    " + e)
        if errs:
            failed.append("FAIL %s: %s" % (title, "; ".join(errs)[:400]))
        bad += bool(errs)

    def load_dump(target, engine, title):
        """(JSON, rc, stderr lines) of a dump, or None (reported)."""
        sec = secs.get(("dump", target, engine))
        if not sec:
            report(title, ["no output"], "")
            return None
        rc, body, err = sec
        try:
            return json.loads("\n".join(body)), rc, err
        except ValueError as e:
            report(title, ["not JSON (%s), rc %s" % (e, rc)] + err[:5], "")
            return None

    for target, engine in want:
        loaded = load_dump(target, engine, "dump %s %s" % (target, engine))
        if not loaded:
            continue
        d, rc, err = loaded
        if rc != 0:
            report("dump %s %s" % (target, engine),
                   ["exit %s" % rc] + err[:5], "")
        seen = set()
        chains = chains_for(target)
        for t in d["threads"]:
            r = role(t["name"], t["tid"] == d["pid"], chains)
            if chains is NULL_CORE_CHAINS:
                r = "main" if t["tid"] == d["pid"] else "nullcall"
            if r is None:
                continue
            seen.add(r)
            names, errs = [], []
            for f in t["frames"]:
                n = f["function"]
                if n is None:
                    mod = f.get("module") or ""
                    if mod == "[vdso]" and f.get("signal_frame"):
                        pass
                    elif f["ip"] == "0x0" and (names[-1:] == ["SIGNAL"] or
                                               (not names and chains is NULL_CORE_CHAINS)):
                        pass      # the call through NULL
                    elif not re.search(r"/(libc\.so|ld-linux)", mod):
                        errs.append("unnamed frame %s in %s" % (f["ip"], mod or "no module"))
                names.append(n)
                if f.get("signal_frame"):
                    names.append("SIGNAL")
            errs += check_chain(names, chains[r], target in static,
                                t.get("stop"),
                                MAIN_ENTRY if r == "main" else THREAD_ENTRY)
            if t.get("error"):
                errs.append("error: %s" % t["error"])
            report("dump %s %s %s" % (target, engine, r), errs,
                   " ".join(n or "??" for n in names) +
                   " (%s)" % t.get("stop"))
        missing = set(chains) - seen
        if missing:
            report("dump %s %s" % (target, engine),
                   ["threads missing: %s" % sorted(missing)], "")

    def check_record(target, name, roles, absent):
        """The folded record `name` of target: each of roles has samples,
        in its chain; none of absent has any."""
        sec = secs.get(("record", name, ""))
        if not sec:
            report("record %s" % name, ["no output"], "")
            return
        rc, body, err = sec
        if rc != 0:
            report("record %s" % name, ["exit %s" % rc] + err[:5], "")
        summary = [e for e in err if "samples" in e]
        if summary:
            print("   record %s: %s" % (name, " / ".join(summary)[:300]))
        ticks = None
        for e in summary:
            m = re.search(r" (\d+) ticks at ", e)
            if m:
                ticks = int(m.group(1))
        per = {}
        chains = chains_for(target)
        for ln in body:
            if not ln.strip():
                continue
            stack, _, count = ln.rpartition(" ")
            frames = stack.split(";")
            m = re.match(r"^(.*)-(\d+)/(\d+)$", frames[0])
            if not m:
                report("record %s" % target, ["no thread root: %s" % ln], "")
                continue
            r = role(m.group(1), m.group(2) == m.group(3), chains)
            if r is None:
                continue
            names = list(reversed(frames[1:]))
            errs = []
            for k, n in enumerate(names):
                if n == "[[vdso]]" and k > 0 and names[k - 1] in ("on_usr1", "on_segv"):
                    continue      # the signal trampoline
                if n == "[unknown]" and k >= 2 and names[k - 2] == "on_segv" and \
                        names[k - 1] in ("[[vdso]]", "__kernel_rt_sigreturn"):
                    continue      # the call through NULL
                if n.startswith("[") and not re.match(r"^\[(libc\.so|ld-linux)", n):
                    errs.append("unnamed frame %s" % n)
            # Folded stacks keep no stop reason and mark no signal frame.
            want_chain = [n for n in chains[r] if n != "SIGNAL"]
            errs += check_chain(names, want_chain, target in static, None, MAIN_ENTRY if r == "main" else THREAD_ENTRY)
            per.setdefault(r, []).append((errs, ln))
        for r in sorted(chains):
            lines = per.get(r, [])
            if not lines:
                if r in roles:
                    report("record %s %s" % (name, r), ["no samples"], "")
                continue
            errs = [e for es, _ in lines for e in es]
            n = sum(int(ln.rpartition(" ")[2]) for _, ln in lines)
            if r in absent:
                errs.append("%d samples of a thread that sleeps" % n)
            # Wall-clock (--idle): every thread at every tick, the
            # sleeping ones from the stack their stop found them in
            # (reused while they do not run; on MIPS a stop that cut
            # nanosleep short read as running, and the sleeper, never
            # reused, had 9 of 259).
            if not absent and ticks and n < ticks // 2:
                errs.append("%d samples of %d ticks" % (n, ticks))
            report("record %s %s" % (name, r), sorted(set(errs)),
                   "%d stacks, %d samples: %s" % (len(lines), n, lines[0][1][:160]))

    for target in sorted(set(t for t, _ in want if not t.endswith("-core"))):
        check_record(target, target, set(chains_for(target)), set())
        if target in oncpu:
            check_record(target, target + "-oncpu", {"spin", "alloca", "signal"},
                         {"main", "sleeper"})
        tr = tracer.get(target)
        if tr != ("0", "S") and tr != ("0", "R"):
            report("record %s" % target,
                   ["after record: TracerPid %s, state %s" % tr if tr else "no @@tracer line"], "")

    for target, engine in deadlock:
        title = "dump %s %s deadlock" % (target, engine)
        loaded = load_dump(target, engine, title)
        if not loaded:
            continue
        d, rc, err = loaded
        errs = check_deadlock(d)
        if rc != 0:
            errs.append("exit %s" % rc)
        report(title, errs + (err[:5] if errs else []),
               " ".join("%s->%s" % (t["name"], (t.get("waits_for") or {}).get("symbol"))
                        for t in d["threads"]))

    def frames_of(spec):
        target, engine = spec.split(":")
        loaded = load_dump(target, engine, "dump %s" % spec)
        if not loaded:
            return None
        return {t["tid"]: [f["ip"] for f in t["frames"]] for t in loaded[0]["threads"]}

    for a, b in same:
        fa, fb = frames_of(a), frames_of(b)
        if fa is None or fb is None:
            continue
        errs = ["thread %s: %s %s, %s %s" % (tid, a, fa.get(tid), b, fb.get(tid))
                for tid in sorted(set(fa) | set(fb)) if fa.get(tid) != fb.get(tid)]
        report("dump %s = %s" % (a, b), errs,
               "%d threads, %d frames" % (len(fa), sum(len(v) for v in fa.values())))

    for spec, path in eu:
        got = frames_of(spec)
        if got is None:
            continue
        want, tid = {}, None
        for line in open(path):
            m = re.match(r"TID (\d+):", line)
            if m:
                tid = int(m.group(1))
                want[tid] = []
                continue
            m = re.match(r"#\d+\s+0x([0-9a-f]+)", line)
            if m and tid is not None:
                ip = "0x%x" % int(m.group(1), 16)
                if not want[tid] or want[tid][-1] != ip:
                    want[tid].append(ip)
        # eu-stack (0.188) stops after a frame at 0x0 (a call through
        # NULL): there, its frames must begin stackspy's, which goes on
        # (its chain is checked by name above).
        errs, more = [], 0
        for t in sorted(set(got) | set(want)):
            g, w = got.get(t) or [], want.get(t) or []
            if g == w:
                continue
            if w and w[0] == "0x0" and g[:len(w)] == w:
                more += len(g) - len(w)
                continue
            errs.append("thread %s: stackspy %s, eu-stack %s" % (t, g, w))
        report("dump %s = eu-stack" % spec, errs,
               "%d threads, %d frames as eu-stack's, %d more past its stop at 0x0" %
               (len(want), sum(len(v) for v in want.values()), more))

    # The failures again, last: a log shown cut in its middle (CI's
    # summary) still says which check failed and why.
    for f in failed:
        print(f)
    print("%d checks failed" % bad if bad else "all checks passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
