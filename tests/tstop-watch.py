#!/usr/bin/env python3
"""tests/tstop-watch.py PID SECONDS [--winch]: how long, at most, any thread of PID
stayed in tracing stop ('t' in /proc/PID/task/TID/stat) without a break,
in milliseconds, over SECONDS (polled every 2 ms), or until SIGTERM (a test
ends the watch when the recording it watches has ended).  Prints
"max_t_ms N", after a first line "watching PID" once it watches.  With --winch it also sends PID a SIGWINCH every 20 ms (the
signals a stop must never hold back), from this one process: a shell loop
of kill and sleep cost a fork and an exec every 20 ms.
"""
import os
import signal
import sys
import time

ended = False


def on_term(signum, frame):
    global ended
    ended = True


def state(path):
    try:
        with open(path) as f:
            line = f.read()
    except OSError:
        return None
    return line[line.rfind(")") + 2:][:1]


def main():
    pid, secs = int(sys.argv[1]), float(sys.argv[2])
    winch = "--winch" in sys.argv[3:]
    since, longest = {}, 0.0
    end = time.monotonic() + secs
    next_winch = time.monotonic()
    signal.signal(signal.SIGTERM, on_term)
    print("watching %d" % pid, flush=True)
    while not ended and time.monotonic() < end:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            break
        now = time.monotonic()
        if winch and now >= next_winch:
            try:
                os.kill(pid, signal.SIGWINCH)
            except OSError:
                pass
            next_winch = now + 0.02
        for tid in tids:
            if state("/proc/%d/task/%s/stat" % (pid, tid)) == "t":
                since.setdefault(tid, now)
                longest = max(longest, now - since[tid])
            else:
                since.pop(tid, None)
        time.sleep(0.002)
    print("max_t_ms %d" % int(longest * 1000))


main()
