#!/usr/bin/env python3
"""jsonq.py: assertions on `stackspy dump --format json` output, for tests/*.test.

Each subcommand exits 0 when the check holds, 1 with a message on stderr
(and the relevant part of the dump) when it does not, 99 on a usage error.

  validate FILE PID                 the contract's shape: keys, types, sorted
                                    tids, ips as hex, the tids of /proc/PID/task
  validate-core FILE PID            the same for a core's dump: no /proc (PID
                                    is the dead process's, maybe another's now)
  get FILE EXPR                     print EXPR evaluated with d = the document
  gets FILE PID|core|- EXPR...      validate FILE against PID (core: with
                                    validate-core against the pid it says; -:
                                    not), then get each EXPR, one line each (in
                                    one run: a python start costs 60 ms)
  chain FILE THREAD [--own BASENAME]... [--subseq] [--top-foreign]
        [--stop TEXT] -- FUNC...
                                    the functions of the frames of THREAD (a
                                    name or a tid) whose module is one of the
                                    --own ones, innermost first, are exactly
                                    FUNC... (an ordered subsequence of them with
                                    --subseq); --top-foreign: frame #0 is in
                                    none of them (the libc system call wrapper)
  ips FILE                          "TID IP IP ..." per thread, physical frames
  bare-names FILE                   every function name is bare: no parameter
                                    list, no symbol version (@GLIBC_2.34)
  gdb-compare FILE GDBOUT           every thread's ips equal gdb's (lines
                                    "GDBTHREAD TID PC PC ...")
  text-compare FILE TEXT            the text dump TEXT shows the same threads,
                                    names, states, ips and functions as FILE
"""
import json
import os
import re
import sys

HEX = re.compile(r'^0x[0-9a-f]+$')


def die(msg, code=1):
    sys.stderr.write('jsonq: %s\n' % msg)
    sys.exit(code)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die('%s: not a JSON document: %s' % (path, e))


def describe(thread):
    lines = ['thread %s "%s" state %s error %s stop %s' % (
        thread.get('tid'), thread.get('name'), thread.get('state'),
        thread.get('error'), thread.get('stop'))]
    for i, fr in enumerate(thread.get('frames') or []):
        lines.append('  #%-3d %s %s+%s (%s)%s%s' % (
            i, fr.get('ip'), fr.get('function'), fr.get('offset'),
            fr.get('module'), ' [inlined]' if fr.get('inlined') else '',
            ' how=%s' % fr.get('how')))
    return '\n'.join(lines)


def find_thread(doc, key):
    threads = doc.get('threads') or []
    for t in threads:
        if str(t.get('tid')) == key or t.get('name') == key:
            return t
    die('no thread %r among %s' % (
        key, ['%s/%s' % (t.get('tid'), t.get('name')) for t in threads]))


def physical(frames):
    return [f for f in frames if not f.get('inlined')]


def cmd_validate_core(args):
    cmd_validate(args, live=False)


def cmd_validate(args, live=True):
    if len(args) != 2:
        die('usage: validate FILE PID', 99)
    doc = load(args[0])
    pid = int(args[1])
    errs = []

    def check(cond, what):
        if not cond:
            errs.append(what)

    check(isinstance(doc, dict), 'the document is an object')
    if errs:
        die('; '.join(errs))
    for key in ('pid', 'comm', 'engine', 'threads'):
        check(key in doc, 'top-level key %r' % key)
    check(doc.get('pid') == pid, 'pid is %d (got %r)' % (pid, doc.get('pid')))
    check(isinstance(doc.get('comm'), str), 'comm is a string')
    check(doc.get('engine') in ('auto', 'fp', 'cfi', 'mips'),
          'engine is auto|fp|cfi|mips (got %r)' % doc.get('engine'))
    threads = doc.get('threads')
    check(isinstance(threads, list) and threads, 'threads is a non-empty list')
    threads = threads if isinstance(threads, list) else []
    tids = [t.get('tid') for t in threads]
    check(tids == sorted(tids), 'threads sorted by tid (got %r)' % tids)
    try:
        want = sorted(int(t) for t in os.listdir('/proc/%d/task' % pid)) if live else None
    except OSError:
        want = None
    if want is not None:
        check(sorted(tids) == want,
              'the tids are those of /proc/%d/task: %r, got %r'
              % (pid, want, tids))
    for t in threads:
        tag = 'thread %r' % t.get('tid')
        for key in ('tid', 'name', 'state', 'error', 'frames'):
            check(key in t, '%s has key %r' % (tag, key))
        check(isinstance(t.get('tid'), int), '%s: tid is an integer' % tag)
        check(isinstance(t.get('name'), str), '%s: name is a string' % tag)
        check(isinstance(t.get('state'), str) and len(t.get('state')) == 1,
              '%s: state is one letter (got %r)' % (tag, t.get('state')))
        check(t.get('error') is None or isinstance(t.get('error'), str),
              '%s: error is null or a string' % tag)
        frames = t.get('frames')
        check(isinstance(frames, list), '%s: frames is a list' % tag)
        for i, fr in enumerate(frames if isinstance(frames, list) else []):
            ftag = '%s frame #%d' % (tag, i)
            for key in ('ip', 'function', 'offset', 'module', 'file', 'line',
                        'inlined', 'how'):
                check(key in fr, '%s has key %r' % (ftag, key))
            check(isinstance(fr.get('ip'), str) and HEX.match(fr['ip']),
                  '%s: ip is a 0x... string (got %r)' % (ftag, fr.get('ip')))
            fn = fr.get('function')
            check(fn is None or (isinstance(fn, str) and fn),
                  '%s: function is null or a name' % ftag)
            if fn is not None:
                off = fr.get('offset')
                check(isinstance(off, str) and HEX.match(off),
                      '%s: offset is a 0x... string (got %r)' % (ftag, off))
            mod = fr.get('module')
            check(mod is None or isinstance(mod, str),
                  '%s: module is null or a string' % ftag)
            check(isinstance(fr.get('inlined'), bool),
                  '%s: inlined is a boolean' % ftag)
    if errs:
        die('the dump breaks the JSON contract:\n  ' + '\n  '.join(errs))


def cmd_get(args):
    if len(args) != 2:
        die('usage: get FILE EXPR', 99)
    d = load(args[0])
    v = eval(args[1], {'d': d, 'len': len, 'sorted': sorted})
    print(v if isinstance(v, str) else json.dumps(v))


def cmd_gets(args):
    if len(args) < 2:
        die('usage: gets FILE PID|core|- EXPR...', 99)
    path, pid, exprs = args[0], args[1], args[2:]
    d = load(path)
    if pid == 'core':
        own = d.get('pid')
        cmd_validate_core([path, own if isinstance(own, str) else json.dumps(own)])
    elif pid != '-':
        cmd_validate([path, pid])
    for e in exprs:
        v = eval(e, {'d': d, 'len': len, 'sorted': sorted})
        v = v if isinstance(v, str) else json.dumps(v)
        if '\n' in v:
            die('gets: %r is more than one line: %r' % (e, v), 99)
        print(v)


def cmd_chain(args):
    own, subseq, top_foreign, stop = [], False, False, None
    if len(args) < 2:
        die('usage: chain FILE THREAD [options] -- FUNC...', 99)
    path, key, rest = args[0], args[1], args[2:]
    while rest and rest[0] != '--':
        opt = rest.pop(0)
        if opt == '--own':
            own.append(rest.pop(0))
        elif opt == '--subseq':
            subseq = True
        elif opt == '--top-foreign':
            top_foreign = True
        elif opt == '--stop':
            stop = rest.pop(0)
        else:
            die('chain: unknown option %r' % opt, 99)
    want = rest[1:]
    doc = load(path)
    t = find_thread(doc, key)
    frames = physical(t.get('frames') or [])

    def is_own(fr):
        return os.path.basename(fr.get('module') or '') in own

    got = [fr.get('function') or '??' for fr in frames if is_own(fr)]
    problems = []
    if t.get('error') is not None:
        problems.append('error is %r' % t.get('error'))
    if subseq:
        it = iter(got)
        if not all(any(g == w for g in it) for w in want):
            problems.append('%r is not an ordered subsequence of %r'
                            % (want, got))
    elif got != want:
        problems.append('own frames are %r, expected %r' % (got, want))
    if top_foreign and (not frames or is_own(frames[0])):
        problems.append('frame #0 is not outside %r (a libc system call)'
                        % own)
    if stop is not None and t.get('stop') != stop:
        problems.append('stop is %r, expected %r' % (t.get('stop'), stop))
    if problems:
        die('thread %s: %s\n%s' % (key, '; '.join(problems), describe(t)))


def cmd_bare_names(args):
    if len(args) != 1:
        die('usage: bare-names FILE', 99)
    doc = load(args[0])
    bad = set()
    for t in doc.get('threads') or []:
        for fr in t.get('frames') or []:
            fn = fr.get('function')
            if fn is None:
                continue
            if '@' in fn:
                bad.add('%s (a symbol version)' % fn)
            stripped = fn.replace('(anonymous namespace)', '')
            stripped = stripped.replace('operator()', '')
            if '(' in stripped:
                bad.add('%s (a parameter list)' % fn)
    if bad:
        die('function names are not bare names:\n  '
            + '\n  '.join(sorted(bad)))


def ips_of(doc):
    return {t['tid']: [fr['ip'] for fr in physical(t.get('frames') or [])]
            for t in doc.get('threads') or []}


def cmd_ips(args):
    doc = load(args[0])
    for tid, ips in sorted(ips_of(doc).items()):
        print(tid, ' '.join(ips))


def norm(ip):
    return '0x%x' % int(ip, 16)


def cmd_gdb_compare(args):
    if len(args) != 2:
        die('usage: gdb-compare FILE GDBOUT', 99)
    doc = load(args[0])
    ours = {tid: [norm(ip) for ip in ips] for tid, ips in ips_of(doc).items()}
    gdb = {}
    with open(args[1]) as f:
        for line in f:
            w = line.split()
            if w and w[0] == 'GDBTHREAD':
                gdb[int(w[1])] = [norm(ip) for ip in w[2:]]
    if not gdb:
        die('gdb printed no thread (see %s)' % args[1], 99)
    problems = []
    if sorted(ours) != sorted(gdb):
        problems.append('threads differ: stackspy %r, gdb %r'
                        % (sorted(ours), sorted(gdb)))
    by_tid = {t['tid']: t for t in doc.get('threads') or []}
    for tid in sorted(set(ours) & set(gdb)):
        a, b = ours[tid], gdb[tid]
        if a == b:
            continue
        frames = physical(by_tid[tid].get('frames') or [])
        lines = ['thread %d (%s): stackspy %d frames, gdb %d frames'
                 % (tid, by_tid[tid].get('name'), len(a), len(b))]
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else '-'
            y = b[i] if i < len(b) else '-'
            fn = frames[i].get('function') if i < len(frames) else ''
            lines.append('  #%-3d %s %-18s %-18s %s'
                         % (i, ' ' if x == y else '!', x, y, fn))
        problems.append('\n'.join(lines))
    if problems:
        die('stackspy and gdb disagree (columns: stackspy, gdb):\n'
            + '\n'.join(problems))
    print('stackspy and gdb agree on %d threads, %d frames'
          % (len(gdb), sum(len(v) for v in gdb.values())))


TEXT_HEADER = re.compile(
    r'^Process (\d+) \((.*)\), (\d+) threads?, engine (\w+)$')
TEXT_THREAD = re.compile(r'^Thread (\d+) "(.*)" state (\S)$')
# A frame line may end with a note, e.g. " <signal handler called>".
TEXT_FRAME = re.compile(
    r'^  #(\d+) +(0x[0-9a-f]{16}) (?:(\S.*)\+(0x[0-9a-f]+)|\?\?) '
    r'\((.*)\)(?: <[^<>]+>)?$')
TEXT_ERROR = re.compile(r'^  error: (.+)$')


def parse_text(path):
    with open(path) as f:
        lines = f.read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    if not lines:
        die('%s is empty' % path)
    m = TEXT_HEADER.match(lines[0])
    if not m:
        die('header line does not match %r: %r'
            % (TEXT_HEADER.pattern, lines[0]))
    head = {'pid': int(m.group(1)), 'comm': m.group(2),
            'count': int(m.group(3)), 'engine': m.group(4)}
    threads, cur, waits = [], None, False
    for n, line in enumerate(lines[1:], 2):
        if line == '':
            cur = None
            waits = False
            continue
        if cur is None and not threads and line.startswith(('deadlock: ', 'Python ')):
            continue      # the deadlocks and CPython's line come first
        if cur is None and not threads and line == 'Waits:':
            waits = True  # then what the blocked threads wait on
            continue
        if waits:
            if not line.startswith('  thread '):
                die('line %d: not a Waits line: %r' % (n, line))
            continue
        m = TEXT_THREAD.match(line)
        if m:
            if cur is not None:
                die('line %d: no blank line before a thread: %r' % (n, line))
            cur = {'tid': int(m.group(1)), 'name': m.group(2),
                   'state': m.group(3), 'frames': [], 'error': None}
            threads.append(cur)
            continue
        if cur is None:
            die('line %d: expected a Thread line or a blank: %r' % (n, line))
        m = TEXT_FRAME.match(line)
        if m:
            if int(m.group(1)) != len(cur['frames']):
                die('line %d: frame number %s, expected #%d'
                    % (n, m.group(1), len(cur['frames'])))
            cur['frames'].append({'ip': m.group(2), 'function': m.group(3),
                                  'offset': m.group(4),
                                  'where': m.group(5)})
            continue
        m = TEXT_ERROR.match(line)
        if m:
            cur['error'] = m.group(1)
            continue
        die('line %d: not a frame line %r: %r'
            % (n, TEXT_FRAME.pattern, line))
    return head, threads


def cmd_text_compare(args):
    if len(args) != 2:
        die('usage: text-compare FILE TEXT', 99)
    doc = load(args[0])
    head, threads = parse_text(args[1])
    problems = []
    if head['pid'] != doc['pid'] or head['comm'] != doc['comm']:
        problems.append('header %r vs json pid %r comm %r'
                        % (head, doc['pid'], doc['comm']))
    if head['count'] != len(doc['threads']):
        problems.append('header says %d threads, json has %d'
                        % (head['count'], len(doc['threads'])))
    jt = doc['threads']
    if [t['tid'] for t in threads] != [t['tid'] for t in jt]:
        problems.append('thread order: text %r, json %r'
                        % ([t['tid'] for t in threads],
                           [t['tid'] for t in jt]))
    for a, b in zip(threads, jt):
        tag = 'thread %d' % b['tid']
        if (a['name'], a['state']) != (b['name'], b['state']):
            problems.append('%s: text name/state %r, json %r' % (
                tag, (a['name'], a['state']), (b['name'], b['state'])))
        fa = a['frames']
        fb = b['frames']
        sa = [(int(f['ip'], 16), f['function']) for f in fa]
        sb = [(int(f['ip'], 16), f['function']) for f in fb]
        if sa != sb:
            problems.append('%s: text frames %r\n  json frames %r'
                            % (tag, sa, sb))
        for f, g in zip(fa, fb):
            if f['function'] is None:
                want = ('%s+%s' % (g['module'], g.get('module_offset'))
                        if g['module'] else '[unknown]')
                if g['module'] and not f['where'].startswith(g['module'] + '+0x'):
                    problems.append('%s: ?? frame shows %r, expected '
                                    '"module+0x..." for %r'
                                    % (tag, f['where'], g['module']))
                elif not g['module'] and f['where'] != '[unknown]':
                    problems.append('%s: ?? frame without module shows %r, '
                                    'expected %r' % (tag, f['where'], want))
            elif f['where'] != (g['module'] or '[unknown]'):
                problems.append('%s: frame %s module %r, json %r'
                                % (tag, f['ip'], f['where'], g['module']))
            elif f['offset'] and g['offset'] and \
                    int(f['offset'], 16) != int(g['offset'], 16):
                problems.append('%s: frame %s offset %s, json %s'
                                % (tag, f['ip'], f['offset'], g['offset']))
    if problems:
        die('text and json dumps disagree:\n' + '\n'.join(problems))


COMMANDS = {
    'validate': cmd_validate,
    'validate-core': cmd_validate_core,
    'get': cmd_get,
    'gets': cmd_gets,
    'chain': cmd_chain,
    'ips': cmd_ips,
    'bare-names': cmd_bare_names,
    'gdb-compare': cmd_gdb_compare,
    'text-compare': cmd_text_compare,
}

if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        die('usage: jsonq.py %s ...' % '|'.join(COMMANDS), 99)
    COMMANDS[sys.argv[1]](sys.argv[2:])
