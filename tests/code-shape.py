#!/usr/bin/env python3
"""tests/code-shape.py - two rules of the source's shape (issue 35), read
from the C files of the given folders:

  - no function longer than MAX_LINES lines, from the first line of its
    declarator to its closing brace (tests and generated code aside);
  - a live process and a core file differ only in unwind/'s target
    operations: no file of unwind/ but the two implementations
    (target-open.c, core-target.c) and the core reader (core-file.c)
    reads a target's pid or its core (`->pid`, `->core`).

The project's style puts a function's braces in column 0 (STYLE.md), so
a function is a line "{" after its declarator and ends at the next "}"
in column 0.  Prints each breach with file:line; exit 1 when there is
one, 2 when a folder cannot be read.

usage: code-shape.py TOPDIR FOLDER...
"""
import os
import re
import sys

MAX_LINES = 120
# Generated files, not written by hand.
GENERATED = re.compile(r'\.pb-c\.[ch]$')
TARGET_OWNERS = {'target-open.c', 'core-target.c', 'core-file.c'}
TARGET_FIELD = re.compile(r'->\s*(pid|core)\b')


def declarator_start(lines, brace):
    """The first line of the declarator that ends before lines[brace]."""
    i = brace
    while i > 0:
        prev = lines[i - 1].rstrip()
        if (not prev or prev.endswith(';') or prev.endswith('}')
                or prev.endswith('*/') or prev.startswith('#')):
            break
        i -= 1
    return i


def long_functions(path, lines):
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == '{':
            start = declarator_start(lines, i)
            end = i + 1
            while end < len(lines) and not lines[end].startswith('}'):
                end += 1
            if end == len(lines):
                break
            n = end - start + 1
            if n > MAX_LINES:
                name = re.findall(r'(\w+)\s*\(', ' '.join(lines[start:i]))
                out.append('%s:%d: %s is %d lines (at most %d)'
                           % (path, start + 1, name[0] if name else '?', n, MAX_LINES))
            i = end
        i += 1
    return out


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text,
                  flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def target_tests(path, text):
    out = []
    for n, line in enumerate(strip_comments(text).split('\n'), 1):
        if re.search(r'\b(t|ut|target)\s*->\s*(pid|core)\b', line):
            out.append('%s:%d: reads a target\'s %s (live or core is a '
                       'target_ops question): %s'
                       % (path, n, TARGET_FIELD.search(line).group(1), line.strip()))
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__.split('\n\n')[-1].strip(), file=sys.stderr)
        return 2
    top = argv[1]
    breaches = []
    nfiles = 0
    for folder in argv[2:]:
        d = os.path.join(top, folder)
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            print('code-shape.py: %s: %s' % (d, e.strerror), file=sys.stderr)
            return 2
        for name in names:
            if not name.endswith('.c') or GENERATED.search(name):
                continue
            rel = os.path.join(folder, name)
            with open(os.path.join(d, name), encoding='utf-8', errors='replace') as f:
                text = f.read()
            nfiles += 1
            breaches += long_functions(rel, text.split('\n'))
            if folder.rstrip('/') == 'unwind' and name not in TARGET_OWNERS:
                breaches += target_tests(rel, text)
    for b in breaches:
        print(b)
    print('%d files, %d breach(es)' % (nfiles, len(breaches)))
    return 1 if breaches else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
