#!/usr/bin/env python3
"""tests/layering.py LIB.a...: the files of each library call each other
one way only.  From the library's own symbol table (nm): file A uses file
B when A's object has B's global symbol undefined; a circle is a set of
files each reached from every other.  Prints each circle with the names
that tie it and exits 1 when there is one."""
import collections
import subprocess
import sys


def nm_entries(lib):
    """(member, fields) of each line of `nm -A LIB`: fields is
    [value, type, name] for a defined symbol, [type, name] for another
    (tests/prefix.py reads the archives this way too)."""
    out = subprocess.run(['nm', '-A', lib], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        head, _, rest = line.rpartition(': ')
        if not head:
            head, _, rest = line.rpartition(':')
        yield head.rsplit(':', 1)[-1].rsplit('/', 1)[-1], rest.split()


def members(lib):
    """{member: (defined, undefined)} of one archive."""
    m = collections.defaultdict(lambda: (set(), set()))
    for obj, f in nm_entries(lib):
        if len(f) == 3 and f[1] in 'TDBRCG':
            m[obj][0].add(f[2])
        elif len(f) == 2 and f[0] == 'U':
            m[obj][1].add(f[1])
    return m


def circles(m):
    owner = {s: o for o, (d, _) in m.items() for s in d}
    g = {o: collections.defaultdict(list) for o in m}
    for o, (_, u) in m.items():
        for s in u:
            if s in owner and owner[s] != o:
                g[o][owner[s]].append(s)
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return g, found


def main():
    bad = 0
    for lib in sys.argv[1:]:
        m = members(lib)
        if not m:
            print(f'{lib}: no object files')
            sys.exit(2)
        g, found = circles(m)
        print(f'{lib}: {len(m)} files, {len(found)} circle(s)')
        for comp in found:
            bad = 1
            print('  circle: ' + ' '.join(comp))
            for a in comp:
                for b in sorted(g[a]):
                    if b in comp:
                        print(f'    {a} -> {b}: {" ".join(sorted(g[a][b])[:5])}')
    sys.exit(bad)


if __name__ == '__main__':
    main()
