#!/usr/bin/env python3
"""make-seeds.py OUTDIR [CORE]: write the seed corpus of fuzz-core.
make-seeds.py --cfi OUTDIR ELF...: write fuzz-cfi's (tests/fuzz/fuzz-cfi.c
gives the format): each file's .eh_frame_hdr and .eh_frame, and its
.debug_frame (decompressed), cut to 32 KiB, with a stack of 512 bytes.

Synthetic cores (a few hundred bytes each): x86-64, MIPS o32 little and
big endian; with NT_FILE, and without it but with an auxv whose AT_PHDR
points at an in-core ELF header with PT_DYNAMIC -> DT_DEBUG -> r_debug ->
link_map.  With CORE (a real core of this host), also its notes alone
(every PT_LOAD emptied), which keeps every note a real kernel or gdb
writes."""
import os
import struct
import sys
import zlib


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


def sections(path):
    """{name: (sh_addr, bytes)} of a little-endian ELF64 file."""
    d = open(path, 'rb').read()
    assert d[:4] == b'\x7fELF' and d[4] == 2 and d[5] == 1, path
    shoff, = struct.unpack_from('<Q', d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
    hdrs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    out = {}
    for name, typ, flags, addr, off, size, *_ in hdrs:
        n = d[strtab + name:d.index(b'\0', strtab + name)].decode()
        if typ == 8:            # SHT_NOBITS
            continue
        b = d[off:off + size]
        if flags & 0x800:       # SHF_COMPRESSED: Elf64_Chdr, zlib
            b = zlib.decompress(b[24:])
        out[n] = (addr, b)
    return out


def cfi_seed(flags, hdr, hdr_vaddr, sec, sec_vaddr, pc, cut=32768):
    if len(hdr) > 8 and hdr[2] == 0x03 and hdr[3] == 0x3b:
        # keep the table's entries that point into the cut section
        count, = struct.unpack_from('<I', hdr, 8)
        keep = [i for i in range(count)
                if hdr_vaddr + struct.unpack_from('<i', hdr, 12 + 8 * i + 4)[0] < sec_vaddr + cut]
        n = len(keep)
        hdr = hdr[:8] + struct.pack('<I', n) + hdr[12:12 + 8 * n]
    sec = sec[:cut]
    stack = bytes(range(256)) * 2
    return struct.pack('<BxxxIIIQQQ', flags, len(hdr), len(sec), 0, hdr_vaddr, sec_vaddr,
                       pc) + hdr + sec + stack


def hostile_eh():
    """An .eh_frame at 0x2000: a CIE, then FDEs over 0x1000.. whose rules
    are issue 32's attacks (division overflow, loops, deep stacks)."""
    cie_ins = bytes([0x0c, 7, 8, 0x90, 1])          # def_cfa rsp+8; rip at cfa-8
    cie = b'\0\0\0\0' + bytes([1]) + b'zR\0' + bytes([1, 0x78, 16, 1, 0]) + cie_ins
    cie += b'\0' * (-(len(cie) + 4) % 8)
    sec = struct.pack('<I', len(cie)) + cie
    attacks = [
        bytes([0x0f, 8, 0x30, 0x20, 0x31, 0x08, 63, 0x24, 0x16, 0x1b]),   # INT64_MIN / -1
        bytes([0x0f, 3, 0x2f, 0xfd, 0xff]),                               # skip -3
        bytes([0x16, 16, 4, 0x31, 0x28, 0xfc, 0xff]),                     # bra loop, rip
        bytes([0x0f, 3, 0x30, 0x15, 0xff]),                               # pick 255
        bytes([0x0a] * 12 + [0x0b] * 3),                                  # remember x12
        bytes([0x0b]),                                                    # restore alone
        bytes([0x0d, 0xff, 0xff, 0xff, 0xff, 0x0f]),                      # reg 0xffffffff
        bytes([0x2e] + [0x80] * 99 + [0x01]),                             # 100-byte LEB
        bytes([0x0f, 10, 0x0e, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0x06]),   # kernel deref
        bytes([0x10, 16, 2, 0x77, 0]),                                    # rip at [rsp]: self
    ]
    for i, ins in enumerate(attacks):
        body = struct.pack('<I', len(sec) + 4) + struct.pack('<QQ', 0x1000 + 0x100 * i, 0x100)
        body += b'\0' + ins
        body += b'\0' * (-(len(body) + 4) % 8)
        sec += struct.pack('<I', len(body)) + body
    return sec + b'\0\0\0\0'


def cfi_main(out, files):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'hostile'), 'wb') as f:
        seed = cfi_seed(0, b'', 0, hostile_eh(), 0x2000, 0x1010)
        # and issue 32's decoder input in the memory: 60 prefixes, add $imm32,%rsp
        f.write(seed[:-512] + b'\x66' * 60 + b'\x48\x81\xc4')
    for path in files:
        secs = sections(path)
        base = os.path.basename(path).replace('.', '-')
        if '.eh_frame' in secs:
            ha, hb = secs.get('.eh_frame_hdr', (0, b''))
            ea, eb = secs['.eh_frame']
            pc = secs['.text'][0] + 0x40 if '.text' in secs else 0
            with open(os.path.join(out, base + '-eh'), 'wb') as f:
                f.write(cfi_seed(0, hb, ha, eb, ea, pc))
        if '.debug_frame' in secs:
            da, db = secs['.debug_frame']
            pc = secs['.text'][0] + 0x40 if '.text' in secs else 0
            with open(os.path.join(out, base + '-debug'), 'wb') as f:
                f.write(cfi_seed(4, b'', 0, db, da, pc))


def main():
    if sys.argv[1] == '--cfi':
        cfi_main(sys.argv[2], sys.argv[3:])
        return
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
