#!/usr/bin/env python3
"""pprof-traces.py: the output of `go tool pprof -sample_index=samples
-traces` (standard input) as folded lines, sorted bytewise: each sample's
labels thread_name, pid and tid as the root frame comm-PID/TID that
stackspy's --threads writes, then its frames root first, then its count.
Equal stacks are summed. Exit 1 if a sample has no count or no frames."""
import sys

stacks = {}
labels = {}
frames = []
count = None


def flush():
    global frames, count, labels
    if count is not None:
        if not frames:
            sys.exit("a sample without frames")
        root = []
        if "thread_name" in labels:
            root = ["%s-%s/%s" % (labels["thread_name"], labels.get("pid", "?"),
                                  labels.get("tid", "?"))]
        key = ";".join(root + frames[::-1])
        stacks[key] = stacks.get(key, 0) + count
    labels, frames, count = {}, [], None


started = False
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("-----------+"):
        flush()
        started = True
        continue
    if not started or not line.strip():
        continue
    parts = line.split(None, 1)
    if count is None and not parts[0].isdigit():
        # Labels ("key:  value") come before the count line.
        if ":" not in line:
            sys.exit("neither a label nor a count: " + line)
        k, v = line.split(":", 1)
        labels[k.strip()] = v.strip()
    elif count is None:
        count = int(parts[0])
        frames.append(parts[1].strip())
    else:
        frames.append(line.strip())
flush()
for k in sorted(stacks, key=lambda s: s.encode()):
    print("%s %d" % (k, stacks[k]))
