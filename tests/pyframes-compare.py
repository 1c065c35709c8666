#!/usr/bin/env python3
"""pyframes-compare.py: stackspy's Python frames against gdb's py-bt.

usage: pyframes-compare.py [--min RATIO] [--beside] [--quiet] DUMP GDBOUT
       pyframes-compare.py --fake-json GDBOUT [--perturb KIND]
       pyframes-compare.py --selftest GDBOUT

DUMP is `stackspy dump PID --format json`; GDBOUT the output of
`gdb -p PID -batch -ex 'thread apply all py-bt'` (python3.11-dbg's gdb
script and python3.11's debug info), taken of the same process in the same
state (SIGSTOP it around both).  Threads are matched by tid (gdb's "(LWP
TID)"); in each, the Python frames, innermost first, are aligned (by
function and file, so that a frame missing on one side costs one row, not
all those after it) and compared: gdb prints co_name, stackspy co_qualname,
compared by its last dotted component ("outer.<locals>.inner" is "inner",
"gen.<locals>.<lambda>" is "<lambda>"); the file exactly (co_filename);
the line.  gdb's lines that are no Python code frame ("<built-in method
...>", "Waiting for the GIL", "Garbage-collecting", the source lines) are
skipped; a frame gdb could not read ("(unable to read python frame
information)") is a frame of gdb's that nothing equals.

Prints a table per thread, "equal N of M python frames" per thread and in
total (M: the rows of the alignment: pairs, and frames of one side only;
the frames of a thread only one side has count too).

The placement, in DUMP: the Python frames that one run of the interpreter
(one _PyEval_EvalFrameDefault) ran take that native frame's place, so the
native frame right after (older than) a run of Python frames is not
_PyEval_EvalFrameDefault, and none is left anywhere.  With --beside
(stackspy --python=beside: the interpreter's frames kept beside the
Python ones) instead: the native frame right after a run is
_PyEval_EvalFrameDefault, and every _PyEval_EvalFrameDefault is right
after a run.  Also the contract of a Python frame: "lang" "python",
"function" a name, "file" a string, "line" an integer, "how" "python",
"kernel" false, "ip" the code object's address and "offset" the
instruction's in its bytecode (0x... strings).

Exit status: 0 when equal/M >= RATIO (--min, default 0.99) and the
placement and contract hold; 1 otherwise; 2 when an input cannot be read
(not JSON, no "threads"; gdb output without a thread, py-bt not defined,
or no Python frame in any thread: gdb did not find python3.11's debug
info or its gdb script).

--fake-json GDBOUT prints a dump as stackspy will make it from gdb's
output (native frames made up around the Python ones), --perturb KIND
broken on purpose: line (one line off by one), drop (one frame left out),
qualname (co_qualname-like names, still equal), eval-left (a native
_PyEval_EvalFrameDefault after every run), eval-kept (one left before
each thread's last frame), beside (as eval-left, for --beside),
thread-gone (the thread with the most Python frames left out), contract
(its first Python frame with an ip, a line as a string, how "cfi").  With
gdb's `thread apply all bt` and `thread apply all py-bt-full` in GDBOUT
too (the same session, before or after py-bt), the native frames are
bt's, each _PyEval_EvalFrameDefault replaced by the Python frames that
py-bt-full gives it: the dump expected of stackspy.  --selftest GDBOUT
runs this script on those and on broken input, and checks each exit
status and count.
"""
import argparse
import difflib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

EVAL = '_PyEval_EvalFrameDefault'

THREAD_HEAD = re.compile(r'^Thread (\d+) \((.*)\):$')
LWP = re.compile(r'\((?:LWP|process) (\d+)\)|^(?:LWP|process) (\d+)\b')
THREAD_NAME = re.compile(r'"(.*)"$')
FILE_LINE = re.compile(r'^  File "(.*)", line (\d+|\?), in (.*)$')
UNREADABLE = ('(unable to read python frame information)',
              '(frame information optimized out)')
NOTES = ('Waiting for the GIL', 'Garbage-collecting')
# py-bt-full: "#3 Frame 0x7f..., for file F, line 97, in spin (locals)",
# "#34 <built-in method sort of list object at remote 0x7f...>"
FULL_FRAME = re.compile(r'^#(\d+) Frame 0x[0-9a-f]+, for file (.*), '
                        r'line (\d+|\?), in (\S+) \(')
FULL_OTHER = re.compile(r'^#(\d+) ((?:<|\(|Waiting for the GIL|'
                        r'Garbage-collecting|PyCFunction).*)$')
# bt: "#4  0x0000000000535c91 in _PyEval_EvalFrame (...) at f.h:73",
# "#5  _PyEval_Vector (...)" (no address: #4 is inlined into it)
BT_FRAME = re.compile(r'^#(\d+) +(?:(0x[0-9a-f]+) in )?(\S+)')
INFERIOR = re.compile(r'^\[Inferior \d+ \(process (\d+)\) detached\]$')


class Unparseable(Exception):
    pass


# ---- gdb's py-bt -------------------------------------------------------------

def parse_gdb(text):
    """(pid or None, {tid: thread}) from `thread apply all py-bt`.  A
    thread: name, num (gdb's), frames (py-bt's Python code frames:
    function, file, line as a string; all None when gdb could not read
    it), items (py-bt's lines in order: ('py', frame), ('c', text) for a
    "<built-in ...>", ('note', text) for "Waiting for the GIL"), notes
    (gdb's errors and warnings in its block).  When the same gdb session
    also ran `thread apply all bt` and `thread apply all py-bt-full`
    (--fake-json uses them), native is bt's frames (index, address or
    None, function) and full py-bt-full's entries by gdb frame index."""
    threads = {}
    cur = None
    pid = None
    saw_traceback = False
    for raw in text.split('\n'):
        line = raw.rstrip('\r')
        if 'Undefined command: "py-bt' in line:
            raise Unparseable('gdb has no py-bt command (python3.11-dbg\'s '
                              'gdb script not loaded)')
        m = INFERIOR.match(line)
        if m:
            pid = int(m.group(1))
            cur = None
            continue
        m = THREAD_HEAD.match(line)
        if m:
            inner = m.group(2)
            lm = LWP.search(inner)
            if not lm:
                raise Unparseable('a thread header without a tid: %r' % line)
            tid = int(lm.group(1) or lm.group(2))
            nm = THREAD_NAME.search(inner)
            cur = threads.setdefault(tid, {
                'tid': tid, 'num': int(m.group(1)),
                'name': nm.group(1) if nm else None, 'pybt': False,
                'frames': [], 'items': [], 'notes': [], 'native': [],
                'full': {}})
            continue
        if cur is None:
            continue
        if line.startswith('Traceback (most recent call first):'):
            if cur['pybt']:
                raise Unparseable('thread %d: py-bt twice' % cur['tid'])
            cur['pybt'] = saw_traceback = True
            continue
        if line == 'Unable to locate python frame':
            continue
        m = FILE_LINE.match(line)
        if m:
            fr = {'function': m.group(3), 'file': m.group(1),
                  'line': m.group(2)}
            cur['frames'].append(fr)
            cur['items'].append(('py', fr))
            continue
        m = FULL_FRAME.match(line)
        if m:
            fr = {'function': m.group(4), 'file': m.group(2),
                  'line': m.group(3)}
            cur['full'].setdefault(int(m.group(1)), []).append(('py', fr))
            continue
        m = FULL_OTHER.match(line)
        if m:
            body = m.group(2)
            kind = 'py' if body in UNREADABLE else (
                'note' if body in NOTES else 'c')
            what = body if kind != 'py' else {
                'function': None, 'file': None, 'line': None,
                'unreadable': body}
            cur['full'].setdefault(int(m.group(1)), []).append((kind, what))
            continue
        m = BT_FRAME.match(line)
        if m:
            cur['native'].append((int(m.group(1)), m.group(2), m.group(3)))
            continue
        if line.startswith('    ') or line == '':
            continue                    # the source line of a frame
        body = line.strip()
        if body in UNREADABLE:
            fr = {'function': None, 'file': None, 'line': None,
                  'unreadable': body}
            cur['frames'].append(fr)
            cur['items'].append(('py', fr))
        elif line.startswith('  ') and (body.startswith('<') or
                                        body.startswith('PyCFunction')):
            cur['items'].append(('c', body))       # <built-in method ...>
        elif body in NOTES:
            cur['items'].append(('note', body))
        else:
            cur['notes'].append(body)             # gdb's errors, warnings
    if not threads:
        raise Unparseable('no "Thread N (... (LWP TID) ...):" line in gdb\'s '
                          'output')
    if not saw_traceback or not any(t['frames'] for t in threads.values()):
        raise Unparseable('gdb printed no Python frame in any thread '
                          '(python3.11\'s debug info or gdb script not '
                          'found, or not a CPython process)')
    return pid, threads


# ---- stackspy's dump ---------------------------------------------------------

def is_python(fr):
    return isinstance(fr, dict) and fr.get('lang') == 'python'


def parse_dump(text):
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise Unparseable('not a JSON document: %s' % e)
    if not isinstance(doc, dict) or not isinstance(doc.get('threads'), list):
        raise Unparseable('not a stackspy dump: no "threads" list')
    threads = {}
    for t in doc['threads']:
        if not isinstance(t, dict) or not isinstance(t.get('tid'), int) \
                or not isinstance(t.get('frames', []), list):
            raise Unparseable('a thread without an integer "tid" or a '
                              '"frames" list: %r' % (t,))
        if not all(isinstance(f, dict) for f in t.get('frames', [])):
            raise Unparseable('thread %d: a frame that is not an object'
                              % t['tid'])
        if t['tid'] in threads:
            raise Unparseable('thread %d twice in the dump' % t['tid'])
        threads[t['tid']] = t
    return doc, threads


def contract(frames):
    """The Python frames' breaches of the contract."""
    out = []
    for i, fr in enumerate(frames):
        if not is_python(fr):
            continue
        bad = []
        fn = fr.get('function')
        if not isinstance(fn, str) or not fn:
            bad.append('function %r' % (fn,))
        if not isinstance(fr.get('file'), str):
            bad.append('file %r' % (fr.get('file'),))
        ln = fr.get('line')
        if not isinstance(ln, int) or isinstance(ln, bool) or ln < 0:
            bad.append('line %r' % (ln,))
        if fr.get('how') != 'python':
            bad.append('how %r' % (fr.get('how'),))
        if fr.get('kernel') is not False:
            bad.append('kernel %r' % (fr.get('kernel'),))
        # ip: the code object's address; offset: the instruction's in
        # its bytecode (both 0x... strings, as a native frame's).
        for key in ('ip', 'offset'):
            v = fr.get(key, 'missing')
            if not isinstance(v, str) or not re.match(r'^0x[0-9a-f]+$', v):
                bad.append('%s %r' % (key, v))
        if bad:
            out.append('#%d: a Python frame with %s' % (i, ', '.join(bad)))
    return out


def runs(frames):
    """(first, last) index of each run of Python frames."""
    out, start = [], None
    for i, fr in enumerate(frames):
        if is_python(fr):
            if start is None:
                start = i
        elif start is not None:
            out.append((start, i - 1))
            start = None
    if start is not None:
        out.append((start, len(frames) - 1))
    return out


def placement(frames, beside):
    """(problems, notes) of where the Python frames sit."""
    problems, notes = [], []
    after = {}
    for a, b in runs(frames):
        after[b + 1] = (a, b)
        if b + 1 == len(frames):
            notes.append('the Python frames #%d..#%d end the stack (no '
                         'native caller after them)' % (a, b))
    if beside:
        # the interpreter's frame right after (older than) the frames it runs
        for a, b in runs(frames):
            if b + 1 < len(frames) and frames[b + 1].get('function') != EVAL:
                problems.append('#%d: the native frame older than the '
                                'Python frames #%d..#%d is %s, not %s '
                                '(--beside)' % (b + 1, a, b, frames[b + 1].get(
                                    'function'), EVAL))
        for i, fr in enumerate(frames):
            if not is_python(fr) and isinstance(fr, dict) and \
                    fr.get('function') == EVAL and i not in after:
                problems.append('#%d: a native %s frame after no Python '
                                'frame (--beside)' % (i, EVAL))
        return problems, notes
    for i, fr in enumerate(frames):
        if is_python(fr) or not isinstance(fr, dict) or \
                fr.get('function') != EVAL:
            continue
        if i in after:
            problems.append('#%d: the native frame older than the Python '
                            'frames #%d..#%d is %s: it was not replaced'
                            % ((i,) + after[i] + (EVAL,)))
        else:
            problems.append('#%d: a native %s frame is left' % (i, EVAL))
    return problems, notes


# ---- the comparison ----------------------------------------------------------

def short_name(qualname):
    """co_name from co_qualname: its last dotted component."""
    if not isinstance(qualname, str):
        return qualname
    return qualname.rsplit('.', 1)[-1]


def ours_key(fr):
    return (short_name(fr.get('function')), fr.get('file'))


def gdb_key(fr):
    return (fr['function'], fr['file'])


def same(s, g):
    if s is None or g is None or g['function'] is None:
        return False
    ln = s.get('line')
    ln = '?' if ln is None else str(ln)
    return ours_key(s) == gdb_key(g) and ln == g['line']


def align(ours, gdb):
    """Rows (stackspy frame or None, gdb frame or None, equal)."""
    sm = difflib.SequenceMatcher(None, [repr(ours_key(f)) for f in ours],
                                 [repr(gdb_key(f)) for f in gdb],
                                 autojunk=False)
    rows = []
    for op, a1, a2, b1, b2 in sm.get_opcodes():
        n = max(a2 - a1, b2 - b1)
        for k in range(n):
            s = ours[a1 + k] if a1 + k < a2 else None
            g = gdb[b1 + k] if b1 + k < b2 else None
            rows.append((s, g, same(s, g)))
    return rows


def show(fr, is_gdb, short):
    if fr is None:
        return '-'
    if is_gdb and fr['function'] is None:
        return fr.get('unreadable', '?')
    path = fr.get('file')
    if short and isinstance(path, str):
        path = path.rsplit('/', 1)[-1]
    return '%s %s:%s' % (fr.get('function'), path, fr.get('line'))


def table(rows, out):
    """A file by its base name where both sides have the same, else
    whole."""
    cells = []
    for i, (s, g, ok) in enumerate(rows):
        short = (s is not None and g is not None
                 and s.get('file') == g.get('file'))
        cells.append(('%3d' % i, '' if ok else '!', show(s, False, short),
                      show(g, True, short)))
    w = max([len('stackspy')] + [len(c[2]) for c in cells])
    out.write('  %3s %-1s %-*s  %s\n' % ('row', '', w, 'stackspy', 'gdb'))
    for c in cells:
        out.write('  %3s %-1s %-*s  %s\n' % (c[0], c[1], w, c[2], c[3]))


def compare(dump_text, gdb_text, min_ratio, beside, quiet, out):
    """The exit status; the report on OUT."""
    try:
        _, ours = parse_dump(dump_text)
        _, gdb = parse_gdb(gdb_text)
    except Unparseable as e:
        sys.stderr.write('pyframes-compare: %s\n' % e)
        return 2
    total_eq = total_m = 0
    failed = []
    for tid in sorted(set(ours) | set(gdb)):
        t, g = ours.get(tid), gdb.get(tid)
        frames = (t.get('frames') or []) if t else []
        py = [f for f in frames if is_python(f)]
        gf = g['frames'] if g else []
        name = (t or {}).get('name') or (g or {}).get('name')
        rows = align(py, gf)
        eq = sum(1 for r in rows if r[2])
        total_eq += eq
        total_m += len(rows)
        where = ''
        if not t:
            where = ' (not in the dump)'
        elif not g:
            where = ' (not in gdb\'s output)'
        out.write('thread %d "%s": equal %d of %d python frames%s\n'
                  % (tid, name, eq, len(rows), where))
        if rows and (not quiet or eq < len(rows)):
            table(rows, out)
        if g:
            for note in g['notes']:
                out.write('  gdb: %s\n' % note)
        if t:
            problems, notes = placement(frames, beside)
            problems += contract(frames)
            for n in notes:
                out.write('  note: %s\n' % n)
            if problems:
                failed.append(tid)
                out.write('  placement/contract: %d problem%s\n'
                          % (len(problems), '' if len(problems) == 1 else 's'))
                for p in problems:
                    out.write('    %s\n' % p)
                for i, fr in enumerate(frames):
                    out.write('    #%-3d %-6s %s%s\n' % (
                        i, fr.get('lang') or '?', fr.get('function'),
                        ' %s:%s' % (fr.get('file'), fr.get('line'))
                        if is_python(fr) else ''))
    ratio = float(total_eq) / total_m if total_m else 0.0
    out.write('total: equal %d of %d python frames (%.4f, at least %.4f '
              'wanted)\n' % (total_eq, total_m, ratio, min_ratio))
    out.write('placement and contract: %s\n' % (
        'ok' + (' (--beside)' if beside else '')
        if not failed else 'broken in thread%s %s' % (
            '' if len(failed) == 1 else 's',
            ' '.join(str(t) for t in failed))))
    if total_m == 0:
        out.write('pyframes-compare: no Python frame to compare\n')
        return 1
    return 0 if ratio >= min_ratio and not failed else 1


# ---- a dump made from gdb's output ---------------------------------------------

def native(function):
    return {'lang': 'c', 'ip': '0x1000', 'function': function,
            'offset': '0x10', 'module': '/usr/bin/python3.11', 'file': None,
            'line': None, 'inlined': False, 'how': 'cfi', 'kernel': False}


def python(fr, qualname):
    fn = fr['function']
    if qualname and fn is not None:
        fn = 'Fake.<locals>.' + fn
    ln = fr['line']
    return {'lang': 'python', 'ip': '0x2000', 'function': fn or '?',
            'offset': '0x0', 'module': None, 'file': fr['file'] or '?',
            'line': int(ln) if ln and ln.isdigit() else None,
            'inlined': False, 'how': 'python', 'kernel': False}


def frames_from_bt(g, qualname):
    """bt's frames, each _PyEval_EvalFrameDefault that py-bt-full gives
    Python frames replaced by them (those inlined into it kept before
    them, inlined as gdb shows them)."""
    frames = []
    nat = g['native']
    for k, (idx, addr, func) in enumerate(nat):
        entries = [w for kind, w in g['full'].get(idx, []) if kind == 'py']
        if func == EVAL and entries:
            frames += [python(w, qualname) for w in entries]
            continue
        fr = native(func)
        # no address on the next (older) frame: this one is inlined in it
        fr['inlined'] = k + 1 < len(nat) and nat[k + 1][1] is None
        frames.append(fr)
    return frames


def frames_from_pybt(g, qualname, main):
    """py-bt's lines, with native frames made up between them."""
    frames = []
    for kind, what in g['items']:
        if kind == 'py':
            frames.append(python(what, qualname))
        elif kind == 'c':
            frames.append(native('cfunction_call'))
        else:
            frames.append(native('take_gil' if 'GIL' in what
                                 else 'gc_collect_main'))
    if main:
        tail = ['pymain_run_python', 'Py_RunMain', 'main', '_start']
    else:
        tail = ['thread_run', 'start_thread', 'clone3']
    return frames + [native(f) for f in tail]


def fake_dump(gdb_text, perturb=None):
    """The dump stackspy should make, from gdb's output: from bt and
    py-bt-full when the session ran them, else from py-bt alone."""
    pid, gdb = parse_gdb(gdb_text)
    if pid is None:
        pid = min(gdb)
    deepest = max(gdb, key=lambda tid: (len(gdb[tid]['frames']), -tid))
    threads = []
    for tid in sorted(gdb):
        g = gdb[tid]
        if g['native'] and g['full']:
            frames = frames_from_bt(g, perturb == 'qualname')
        else:
            frames = frames_from_pybt(g, perturb == 'qualname', tid == pid)
        if perturb in ('eval-left', 'beside'):
            for a, b in reversed(runs(frames)):
                frames.insert(b + 1, native(EVAL))
        elif perturb == 'eval-kept' and len(frames) >= 2 and \
                not is_python(frames[-2]):
            frames.insert(len(frames) - 1, native(EVAL))
        if tid == deepest:
            pyidx = [i for i, f in enumerate(frames) if is_python(f)]
            if perturb == 'line' and pyidx:
                f = frames[pyidx[0]]
                f['line'] = (f['line'] or 0) + 1
            elif perturb == 'drop' and len(pyidx) > 2:
                del frames[pyidx[len(pyidx) // 2]]
            elif perturb == 'contract' and pyidx:
                frames[pyidx[0]].update(ip='0x1000', line=str(
                    frames[pyidx[0]]['line']), how='cfi')
            elif perturb == 'thread-gone':
                continue
        threads.append({'tid': tid, 'name': g['name'] or '', 'state': 'S',
                        'error': None, 'stop': 'end of stack',
                        'frames': frames})
    comm = gdb[pid]['name'] if pid in gdb else ''
    return {'pid': pid, 'comm': comm, 'engine': 'auto', 'threads': threads}


# ---- the self test -------------------------------------------------------------

def selftest(gdb_path):
    with open(gdb_path) as f:
        gdb_text = f.read()
    try:
        _, gdb = parse_gdb(gdb_text)
    except Unparseable as e:
        sys.stderr.write('pyframes-compare: %s: %s\n' % (gdb_path, e))
        return 2
    m = sum(len(t['frames']) for t in gdb.values())
    deep = max(len(t['frames']) for t in gdb.values())
    print('gdb\'s output: %d threads, %d python frames (at most %d in one)'
          % (len(gdb), m, deep))
    tmp = tempfile.mkdtemp(prefix='pyframes-compare.')
    me = os.path.abspath(__file__)
    # (perturbation or a file's text, options, exit status, total line)
    cases = [
        (None, ['--min', '1'], 0, 'equal %d of %d' % (m, m)),
        ('qualname', ['--min', '1'], 0, 'equal %d of %d' % (m, m)),
        ('line', ['--min', '1'], 1, 'equal %d of %d' % (m - 1, m)),
        ('line', ['--min', '0.5'], 0 if m >= 2 else 1,
         'equal %d of %d' % (m - 1, m)),
        ('drop', ['--min', '1'], 1, 'equal %d of %d' % (m - 1, m)),
        ('eval-left', ['--min', '0'], 1, 'equal %d of %d' % (m, m)),
        ('eval-kept', ['--min', '0'], 1, 'equal %d of %d' % (m, m)),
        ('eval-kept', ['--min', '0', '--beside'], 1,
         'equal %d of %d' % (m, m)),
        (None, ['--min', '0', '--beside'], 1, 'equal %d of %d' % (m, m)),
        ('thread-gone', ['--min', '0'], 0, 'equal %d of %d' % (m - deep, m)),
        ('thread-gone', ['--min', '1'], 1, 'equal %d of %d' % (m - deep, m)),
        ('contract', ['--min', '0'], 1, None),
        ('beside', ['--min', '1'], 1, 'equal %d of %d' % (m, m)),
        ('beside', ['--min', '1', '--beside'], 0, 'equal %d of %d' % (m, m)),
        ({'dump': '{"pid": 1, "threads": [', 'gdb': gdb_text}, [], 2, None),
        ({'dump': '{"pid": 1}', 'gdb': gdb_text}, [], 2, None),
        ({'gdb': ''}, [], 2, None),
        ({'gdb': 'Undefined command: "py-bt".  Try "help".\n'}, [], 2, None),
        ({'gdb': re.sub(r'(?m)^(  File |Traceback).*\n', '', gdb_text)},
         [], 2, None),
    ]
    if deep >= 2:
        # a Python frame of the deepest thread made into a native one:
        # one row less on stackspy's side, the run split in two
        cases.append(('lost', ['--min', '1'], 1, None))
    bad = 0
    for n, (what, opts, want_rc, want_line) in enumerate(cases):
        dump_path = os.path.join(tmp, 'dump%d.json' % n)
        gdb_file = os.path.join(tmp, 'gdb%d.out' % n)
        gdb_case = gdb_text
        label = what if isinstance(what, str) or what is None else 'broken'
        if isinstance(what, dict):
            gdb_case = what.get('gdb', gdb_text)
            dump = what.get('dump') or json.dumps(fake_dump(gdb_text))
        elif what == 'lost':
            d = fake_dump(gdb_text)
            t = max(d['threads'], key=lambda t: sum(map(is_python,
                                                        t['frames'])))
            i = [k for k, f in enumerate(t['frames']) if is_python(f)][1]
            t['frames'][i] = native('cfunction_call')
            dump = json.dumps(d)
        else:
            dump = json.dumps(fake_dump(gdb_text, what), indent=1)
        with open(dump_path, 'w') as f:
            f.write(dump)
        with open(gdb_file, 'w') as f:
            f.write(gdb_case)
        p = subprocess.run([sys.executable, me] + opts + [dump_path, gdb_file],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        total = [l for l in p.stdout.split('\n') if l.startswith('total:')]
        ok = p.returncode == want_rc and (
            want_line is None or (total and want_line + ' python' in total[0]))
        print('%-4s %-11s %-24s exit %d (want %d)  %s' % (
            'ok' if ok else 'BAD', label, ' '.join(opts), p.returncode,
            want_rc, total[0] if total else p.stdout.strip().split('\n')[-1]))
        if not ok:
            bad += 1
            sys.stdout.write(p.stdout)
    for n in range(len(cases)):
        for name in ('dump%d.json' % n, 'gdb%d.out' % n):
            try:
                os.unlink(os.path.join(tmp, name))
            except OSError:
                pass
    os.rmdir(tmp)
    print('selftest: %d of %d cases as expected' % (len(cases) - bad,
                                                     len(cases)))
    return 1 if bad else 0


def main(argv):
    ap = argparse.ArgumentParser(
        description='stackspy\'s Python frames against gdb\'s py-bt')
    ap.add_argument('--min', type=float, default=0.99, dest='min_ratio')
    ap.add_argument('--beside', action='store_true')
    ap.add_argument('--quiet', action='store_true',
                    help='tables only for threads with a difference')
    ap.add_argument('--selftest', metavar='GDBOUT')
    ap.add_argument('--fake-json', metavar='GDBOUT')
    ap.add_argument('--perturb', choices=('line', 'drop', 'qualname',
                                          'eval-left', 'eval-kept', 'beside',
                                          'thread-gone', 'contract'))
    ap.add_argument('files', nargs='*', metavar='DUMP GDBOUT')
    a = ap.parse_args(argv)
    try:
        if a.selftest:
            return selftest(a.selftest)
        if a.fake_json:
            with open(a.fake_json) as f:
                text = f.read()
            json.dump(fake_dump(text, a.perturb), sys.stdout, indent=1)
            sys.stdout.write('\n')
            return 0
        if len(a.files) != 2:
            ap.error('expected DUMP and GDBOUT')
        with open(a.files[0]) as f:
            dump_text = f.read()
        with open(a.files[1], errors='replace') as f:
            gdb_text = f.read()
    except Unparseable as e:
        sys.stderr.write('pyframes-compare: %s\n' % e)
        return 2
    except (OSError, UnicodeDecodeError) as e:
        sys.stderr.write('pyframes-compare: %s\n' % e)
        return 2
    return compare(dump_text, gdb_text, a.min_ratio, a.beside, a.quiet,
                   sys.stdout)


if __name__ == '__main__':
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main(sys.argv[1:]))
