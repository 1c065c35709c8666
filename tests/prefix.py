#!/usr/bin/env python3
"""tests/prefix.py LIB.a...: every function a library of ours exports (a T
symbol in its nm list) is named with a prefix of the library's folder
(issue 35), so that a name says where it is defined.  The folder is the
one that holds LIB.a.  Prints each name without an allowed prefix and
exits 1 when there is one; exits 2 when a library cannot be read.

Generated code is not held to it: collapse/libprofilepb.a (protoc-c's
output) is not given to this check."""
import collections
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layering  # noqa: E402  (nm_entries: the same reading of nm)

# The one table: folder -> the prefixes its exported functions may start
# with.  Every folder has its own name as a prefix.
ALLOWED = {
    'arch': ('arch_',),
    'base': ('base_',),
    'collapse': ('collapse_',),
    'ptrace': ('ptrace_',),
    'ui': ('ui_',),
    'unwind': ('unwind_',),
    'sampler': (
        # The folder's own: the commands (sampler.h, cmd-*.c), the options
        # (options.c), the lines on standard error (error.c), the signals,
        # the terminal feedback, the output files and --push.
        'sampler_',
        # The sampling loop behind record and top, one part that many files
        # share (profiler.h, profiler-internal.h): profiler.c, launch.c,
        # sample.c, frames.c, blocked.c, task-stat.c, stats.c, pprof-out.c.
        'profiler_',
        # Parts of the loop that each file owns (profiler-internal.h):
        'ticks_',     # ticks.c: the tick clock and the timer it arms
        'oncpu_',     # oncpu.c: whether a sample was on-CPU time
        'thread_',    # threads.c: the thread table and its census
        'unwinder_',  # unwinder.c: the unwinding thread and its queue
        # The dump command's files (dump-internal.h, output.h):
        # dump-live.c, dump-core.c, locks.c, waits.c, follow.c, output.c.
        'dump_',
    ),
}

# Names that keep a name given from outside the folder's rule, and why.
KEEP = {
    'sampler': {
        # STYLE.md (beside DESIGN.md) names the one family of printers,
        # after strace's error_prints.h.
        'error_msg': 'named in STYLE.md',
        'error_msg_and_die': 'named in STYLE.md',
        'error_msg_and_help': 'named in STYLE.md',
        'perror_msg': 'named in STYLE.md',
    },
}


def exported(lib):
    """{object: [name, ...]} of the functions LIB.a defines globally."""
    m = collections.defaultdict(list)
    for obj, f in layering.nm_entries(lib):
        if len(f) == 3 and f[1] == 'T':
            m[obj].append(f[2])
    return m


bad = 0
for lib in sys.argv[1:]:
    folder = os.path.basename(os.path.dirname(os.path.abspath(lib)))
    if folder not in ALLOWED:
        print(f'{lib}: folder {folder}/ has no line in ALLOWED (tests/prefix.py)')
        sys.exit(2)
    try:
        m = exported(lib)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f'{lib}: nm failed: {e}')
        sys.exit(2)
    if not m:
        print(f'{lib}: no exported function')
        sys.exit(2)
    prefixes = ALLOWED[folder]
    keep = KEEP.get(folder, {})
    wrong = [(o, s) for o in sorted(m) for s in sorted(m[o])
             if not s.startswith(prefixes) and s not in keep]
    total = sum(len(v) for v in m.values())
    print(f'{lib}: {total} exported functions, {len(wrong)} without '
          f'{"|".join(prefixes)}')
    for o, s in wrong:
        bad = 1
        print(f'  {o}: {s}')
sys.exit(bad)
