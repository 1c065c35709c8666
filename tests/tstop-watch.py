#!/usr/bin/env python3
"""tests/tstop-watch.py PID SECONDS: how long, at most, any thread of PID
stayed in tracing stop ('t' in /proc/PID/task/TID/stat) without a break,
in milliseconds, over SECONDS (polled every 2 ms).  Prints "max_t_ms N"."""
import os
import sys
import time


def state(path):
    try:
        with open(path) as f:
            line = f.read()
    except OSError:
        return None
    return line[line.rfind(")") + 2:][:1]


def main():
    pid, secs = int(sys.argv[1]), float(sys.argv[2])
    since, longest = {}, 0.0
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            tids = os.listdir("/proc/%d/task" % pid)
        except OSError:
            break
        now = time.monotonic()
        for tid in tids:
            if state("/proc/%d/task/%s/stat" % (pid, tid)) == "t":
                since.setdefault(tid, now)
                longest = max(longest, now - since[tid])
            else:
                since.pop(tid, None)
        time.sleep(0.002)
    print("max_t_ms %d" % int(longest * 1000))


main()
