#!/usr/bin/env python3
"""py-core-edit.py: damage the CPython 3.11 state inside a core file, for
tests/python-hostile.test.

  py-core-edit.py CORE EXE OUT KIND    OUT = CORE with the interpreter's
                                       memory damaged one way (KIND below)
  py-core-edit.py CORE EXE OUT -       the same for every KIND a line of
                                       stdin names, one after the other, in
                                       one run: prints "kind KIND" for each
                                       KIND, then "ready"; then for each line
                                       KIND of stdin makes OUT CORE damaged
                                       that way (OUT is copied once, then only
                                       the bytes of the last KIND are put
                                       back) and prints "damaged KIND"; exits
                                       at "quit" or end of file
  py-core-edit.py kinds                list the KINDs

EXE is the python3.11 the core was made from (its _PyRuntime and type
symbols are read with readelf).  The walk is the one stackspy makes
(3.11's layout): _PyRuntime -> interpreters.head -> threads.head ->
tstate.cframe -> current_frame -> previous.  Only ELFCLASS64
little-endian cores.  Exit 2 when the core holds no thread with a frame.
"""
import mmap
import os
import shutil
import struct
import subprocess
import sys

KINDS = {
    'frame-cycle': "the oldest frame's previous points back at the innermost",
    'code-garbage': "every frame's code object pointer moved into the runtime's data",
    'name-huge': "every code object's co_qualname and co_filename say 2**62 characters",
    'linetable-huge': "every code object's co_linetable says 2**62 bytes",
    'thread-loop': "the thread list loops: each state's next is the first",
    'frame-wild': "the innermost frame's previous is a wild pointer",
    'interp-loop': "interpreters.head points into itself (next = itself)",
}

# 3.11 (unwind/python.c layout_311)
RT_INTERP_HEAD, IN_NEXT, IN_THREADS = 40, 0, 16
TS_NEXT, TS_CFRAME, CF_CURRENT = 8, 56, 8
FR_CODE, FR_PREV = 32, 48
CO_FILENAME, CO_QUALNAME, CO_LINETABLE = 112, 128, 136
STR_LENGTH, BYTES_SIZE = 16, 16


def symbol(exe, name):
    out = subprocess.check_output(['readelf', '-W', '--dyn-syms', exe], text=True)
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[7] == name:
            return int(f[1], 16)
    sys.exit('py-core-edit: no symbol %s in %s' % (name, exe))


class Core:
    """The core, mapped read-only; put() records a patch that save()
    writes into a copy (a gcore of python3.11 is 160 MB: reading it into
    memory and writing it whole took 2 s a kind)."""
    def __init__(self, f):
        self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.patches = {}
        data = self.data
        phoff, = struct.unpack_from('<Q', data, 32)
        phentsize, phnum = struct.unpack_from('<HH', data, 54)
        self.loads = []
        for i in range(phnum):
            p = struct.unpack_from('<IIQQQQQQ', data, phoff + i * phentsize)
            if p[0] == 1 and p[5]:
                self.loads.append((p[3], p[5], p[2]))   # vaddr, filesz, offset

    def off(self, addr, n=8):
        for vaddr, filesz, offset in self.loads:
            if vaddr <= addr and addr + n <= vaddr + filesz:
                return offset + addr - vaddr
        return None

    def u64(self, addr):
        o = self.off(addr)
        if o is None:
            return None
        if o in self.patches:
            return struct.unpack('<Q', self.patches[o])[0]
        return struct.unpack_from('<Q', self.data, o)[0]

    def put(self, addr, value):
        o = self.off(addr)
        if o is None:
            sys.exit('py-core-edit: %#x is not in the core' % addr)
        self.patches[o] = struct.pack('<Q', value)

    def save(self, src, out):
        shutil.copyfile(src, out)
        with open(out, 'r+b') as f:
            for o, b in sorted(self.patches.items()):
                f.seek(o)
                f.write(b)

    def patch_in_place(self, out_fd, undo):
        """OUT, a copy of the core: the offsets in undo (the last kind's)
        get the core's bytes back, then this kind's patches go in."""
        for o in sorted(undo):
            os.pwrite(out_fd, self.data[o:o + 8], o)
        for o, b in sorted(self.patches.items()):
            os.pwrite(out_fd, b, o)


def walk(core, runtime):
    """[(tstate, [frames innermost first])] of the main interpreter."""
    interp = core.u64(runtime + RT_INTERP_HEAD)
    threads = []
    ts = core.u64(interp + IN_THREADS) if interp else None
    n = 0
    while ts and n < 100:
        frames = []
        cframe = core.u64(ts + TS_CFRAME)
        f = core.u64(cframe + CF_CURRENT) if cframe else None
        while f and len(frames) < 1000:
            frames.append(f)
            f = core.u64(f + FR_PREV)
        threads.append((ts, frames))
        ts = core.u64(ts + TS_NEXT)
        n += 1
    return interp, threads


def damage(core, runtime, kind):
    interp, threads = walk(core, runtime)
    withframes = [t for t in threads if t[1]]
    if not withframes:
        sys.exit(2)
    if kind == 'interp-loop':
        core.put(interp + IN_NEXT, interp)
        return
    if kind == 'thread-loop':
        for ts, _ in threads:
            core.put(ts + TS_NEXT, threads[0][0])
        return
    for _, frames in withframes:
        if kind == 'frame-cycle':
            core.put(frames[-1] + FR_PREV, frames[0])
        elif kind == 'frame-wild':
            core.put(frames[0] + FR_PREV, 0x4141414141414140)
        for f in frames:
            code = core.u64(f + FR_CODE)
            if kind == 'code-garbage':
                core.put(f + FR_CODE, runtime + 64)
            elif kind == 'name-huge':
                for field in (CO_QUALNAME, CO_FILENAME):
                    s = core.u64(code + field)
                    if s and core.off(s + STR_LENGTH):
                        core.put(s + STR_LENGTH, 1 << 62)
            elif kind == 'linetable-huge':
                b = core.u64(code + CO_LINETABLE)
                if b and core.off(b + BYTES_SIZE):
                    core.put(b + BYTES_SIZE, 1 << 62)


def serve(core_path, exe, out):
    """CORE EXE OUT -: one kind after the other, as stdin asks."""
    runtime = symbol(exe, '_PyRuntime')
    for k in KINDS:
        print('kind %s' % k)
    print('ready', flush=True)
    with open(core_path, 'rb') as f:
        core = Core(f)
        shutil.copyfile(core_path, out)
        fd = os.open(out, os.O_WRONLY)
        undo = set()
        for line in sys.stdin:
            kind = line.strip()
            if kind == 'quit':
                break
            if kind not in KINDS:
                sys.exit('py-core-edit: no kind %r' % kind)
            core.patches = {}
            damage(core, runtime, kind)
            core.patch_in_place(fd, undo)
            undo = set(core.patches)
            print('damaged %s' % kind, flush=True)
        os.close(fd)
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == 'kinds':
        for k, what in KINDS.items():
            print('%-16s %s' % (k, what))
        return 0
    if len(argv) != 5 or argv[4] not in KINDS and argv[4] != '-':
        sys.stderr.write(__doc__)
        return 64
    core_path, exe, out, kind = argv[1:]
    if kind == '-':
        return serve(core_path, exe, out)
    with open(core_path, 'rb') as f:
        core = Core(f)
        damage(core, symbol(exe, '_PyRuntime'), kind)
        core.save(core_path, out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
