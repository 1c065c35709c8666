#!/usr/bin/env python3
"""make-seeds.py OUTDIR [CORE]: write the seed corpus of fuzz-core.

Synthetic cores (a few hundred bytes each): x86-64, MIPS o32 little and
big endian; with NT_FILE, and without it but with an auxv whose AT_PHDR
points at an in-core ELF header with PT_DYNAMIC -> DT_DEBUG -> r_debug ->
link_map.  With CORE (a real core of this host), also its notes alone
(every PT_LOAD emptied), which keeps every note a real kernel or gdb
writes."""
import os
import struct
import sys


def note(e, name, ntype, desc):
    n = name.encode() + b'\0'
    pad = lambda b: b + b'\0' * (-len(b) % 4)
    return struct.pack(e + 'III', len(n), len(desc), ntype) + pad(n) + pad(desc)


def core(machine, b64, big, nt_file=True):
    e = '>' if big else '<'
    W = 'Q' if b64 else 'I'
    w = 8 if b64 else 4
    stack, code, exe = 0x7ff000, 0x400000, 0x400000
    # prstatus: pid at 32/24, pr_reg at 112/72, regs 216 (27 words) / 180 (45)
    nregs = 27 if b64 else 45
    regs = [0] * nregs
    if b64:   # x86-64 user_regs_struct: rbp 4, rip 16, rsp 19
        regs[4], regs[16], regs[19] = stack + 0x100, code + 0x80, stack + 0x80
    else:     # MIPS o32: gpr at 6.., sp = 6+29, ra = 6+31, epc 40
        regs[6 + 29], regs[6 + 31], regs[40] = stack + 0x80, code + 0x90, code + 0x80
    hdr_len = 112 if b64 else 72
    pr = bytearray(hdr_len)
    struct.pack_into(e + 'h', pr, 12, 11)
    struct.pack_into(e + 'i', pr, 32 if b64 else 24, 1234)
    pr += struct.pack(e + W * nregs, *regs) + b'\0' * (8 if b64 else 4)
    ps = bytearray(136 if b64 else 128)
    ps[1] = ord('S')
    fname = len(ps) - 96
    struct.pack_into(e + 'i', ps, fname - 16, 1234)
    ps[fname:fname + 4] = b'core'
    auxv = struct.pack(e + W * 10, 3, exe + (64 if b64 else 52), 5, 2, 9, code + 0x80, 31, stack + 0x800, 0, 0)
    notes = note(e, 'CORE', 1, bytes(pr)) + note(e, 'CORE', 3, bytes(ps)) + note(e, 'CORE', 6, auxv)
    if nt_file:
        names = b'/usr/lib/x86_64-linux-gnu/libc.so.6\0/bin/true\0'
        nf = struct.pack(e + W * 2, 2, 4096)
        nf += struct.pack(e + W * 6, code, code + 0x1000, 0, 0x500000, 0x501000, 1)
        notes += note(e, 'CORE', 0x46494c45, nf + names)
    # memory: an ELF header + phdrs (PT_PHDR, PT_LOAD, PT_DYNAMIC) at exe,
    # .dynamic with DT_DEBUG -> r_debug -> one link_map; a stack page with
    # a frame chain.
    ehsz, phsz = (64, 56) if b64 else (52, 32)
    img = bytearray(0x400)
    img[0:4] = b'\x7fELF'
    img[4], img[5], img[6] = (2 if b64 else 1), (2 if big else 1), 1
    struct.pack_into(e + 'HH', img, 16, 3, machine)
    if b64:
        struct.pack_into(e + 'QQ', img, 32, ehsz, 0)
        struct.pack_into(e + 'HHHH', img, 52, ehsz, phsz, 3, 64)
    else:
        struct.pack_into(e + 'II', img, 28, ehsz, 0)
        struct.pack_into(e + 'HHHH', img, 40, ehsz, phsz, 3, 40)

    def ph(i, t, off, va, sz, fl):
        o = ehsz + i * phsz
        if b64:
            struct.pack_into(e + 'IIQQQQQQ', img, o, t, fl, off, va, va, sz, sz, 8)
        else:
            struct.pack_into(e + 'IIIIIIII', img, o, t, off, va, va, sz, sz, fl, 4)
    ph(0, 6, ehsz, ehsz, 3 * phsz, 4)
    ph(1, 1, 0, 0, 0x1000, 5)
    ph(2, 2, 0x200, 0x200, 4 * w, 6)
    struct.pack_into(e + W * 4, img, 0x200, 21, exe + 0x300, 0, 0)      # DT_DEBUG
    struct.pack_into(e + W * 2, img, 0x300, 1, exe + 0x340)             # r_debug
    struct.pack_into(e + W * 5, img, 0x340, 0x1000, exe + 0x380, 0, 0, 0)  # link_map
    img[0x380:0x380 + 10] = b'/bin/true\0'
    st = bytearray(0x1000)
    struct.pack_into(e + W * 2, st, 0x100, stack + 0x200, code + 0x88)
    struct.pack_into(e + W * 2, st, 0x200, 0, 0)
    st[0x800:0x80a] = b'/bin/true\0'
    # headers: ELF header, 3 phdrs (PT_NOTE, 2 PT_LOAD), then data
    nph = 3
    data_off = ehsz + nph * phsz
    notes_off = data_off
    img_off = notes_off + len(notes)
    st_off = img_off + len(img)
    out = bytearray(ehsz)
    out[0:4] = b'\x7fELF'
    out[4], out[5], out[6] = (2 if b64 else 1), (2 if big else 1), 1
    struct.pack_into(e + 'HH', out, 16, 4, machine)
    if b64:
        struct.pack_into(e + 'QQ', out, 32, ehsz, 0)
        struct.pack_into(e + 'HHHH', out, 52, ehsz, phsz, nph, 64)
    else:
        struct.pack_into(e + 'II', out, 28, ehsz, 0)
        struct.pack_into(e + 'HHHH', out, 40, ehsz, phsz, nph, 40)
    for t, off, va, fsz, msz, fl in ((4, notes_off, 0, len(notes), 0, 0),
                                    (1, img_off, exe, len(img), 0x1000, 5),
                                    (1, st_off, stack, len(st), 0x1000, 6)):
        if b64:
            out += struct.pack(e + 'IIQQQQQQ', t, fl, off, va, 0, fsz, msz, 4096)
        else:
            out += struct.pack(e + 'IIIIIIII', t, off, va, 0, fsz, msz, fl, 4096)
    return bytes(out + notes + img + st)


def notes_only(path):
    """The core's headers and notes, moved right after the headers, with
    every PT_LOAD emptied."""
    with open(path, 'rb') as f:
        d = bytearray(f.read())
    phoff, = struct.unpack_from('<Q', d, 32)
    phentsize, phnum = struct.unpack_from('<HH', d, 54)
    out = bytearray(d[:phoff + phentsize * phnum])
    for i in range(phnum):
        o = phoff + i * phentsize
        t, _fl, off, _va, _pa, fsz = struct.unpack_from('<IIQQQQ', d, o)
        if t == 4:
            struct.pack_into('<Q', out, o + 8, len(out))
            out += d[off:off + fsz]
        elif t == 1:
            struct.pack_into('<Q', out, o + 8, 0)
            struct.pack_into('<Q', out, o + 32, 0)
    return bytes(out)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, args in (('x86_64-ntfile', (62, True, False, True)),
                       ('x86_64-linkmap', (62, True, False, False)),
                       ('mipsel-ntfile', (8, False, False, True)),
                       ('mipsel-linkmap', (8, False, False, False)),
                       ('mipsbe-ntfile', (8, False, True, True)),
                       ('mipsbe-linkmap', (8, False, True, False))):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(core(*args))
    if len(sys.argv) > 2:
        with open(os.path.join(out, 'gcore-notes'), 'wb') as f:
            f.write(notes_only(sys.argv[2]))


main()
