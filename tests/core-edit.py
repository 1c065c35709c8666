#!/usr/bin/env python3
"""core-edit.py: damage or reshape ELF core files for tests/core-*.test.

  strip-nt-file IN OUT     OUT = IN with its NT_FILE note renamed to an
                           unknown type, so that stackspy must find the
                           modules from the auxv and the r_debug link_map
  bad IN OUT KIND          OUT = IN damaged in one way (KIND below); prints
                           nothing, exits 0
  kinds                    list the KINDs

Only ELFCLASS64 little-endian cores (what this host writes).
"""
import struct
import sys

NT_FILE = 0x46494c45


def phdrs(data):
    phoff, = struct.unpack_from('<Q', data, 32)
    phentsize, phnum = struct.unpack_from('<HH', data, 54)
    for i in range(phnum):
        off = phoff + i * phentsize
        yield off, struct.unpack_from('<IIQQQQQQ', data, off)


def notes(data):
    """(offset of the note header, namesz, descsz, type) of every note."""
    for _, (ptype, _f, off, _v, _p, filesz, _m, _a) in phdrs(data):
        if ptype != 4:
            continue
        p, end = off, off + filesz
        while p + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from('<III', data, p)
            yield p, namesz, descsz, ntype
            p += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)


def strip_nt_file(data):
    n = 0
    for p, _ns, _ds, ntype in notes(data):
        if ntype == NT_FILE:
            struct.pack_into('<I', data, p + 8, 0x7fff0001)
            n += 1
    if n == 0:
        sys.exit('core-edit: no NT_FILE note')


def first_note(data, ntype):
    for p, ns, ds, t in notes(data):
        if t == ntype:
            return p, ns, ds
    sys.exit('core-edit: no note of type %#x' % ntype)


def bad(data, kind):
    """Return the damaged bytes."""
    phoff, = struct.unpack_from('<Q', data, 32)
    if kind == 'empty':
        return b''
    if kind == 'not-elf':
        return b'this is not an ELF file\n' * 10
    if kind == 'trunc-ehdr':
        return data[:40]
    if kind == 'trunc-phdrs':
        return data[:phoff + 20]
    if kind == 'trunc-notes':
        # Cut inside the first NT_PRSTATUS: no thread is complete.
        p, _ns, _ds = first_note(data, 1)
        return data[:p + 40]
    if kind == 'trunc-one-thread':
        # Cut right after the first NT_PRSTATUS: one complete thread.
        p, ns, ds = first_note(data, 1)
        return data[:p + 12 + ((ns + 3) & ~3) + ((ds + 3) & ~3)]
    if kind == 'trunc-half':
        return data[:len(data) // 2]
    if kind == 'not-core':
        struct.pack_into('<H', data, 16, 2)        # ET_EXEC
        return data
    if kind == 'bad-class':
        data[4] = 7
        return data
    if kind == 'phnum-huge':
        struct.pack_into('<H', data, 56, 0xfffe)
        return data
    if kind == 'phoff-huge':
        struct.pack_into('<Q', data, 32, 2**64 - 8)
        return data
    if kind == 'pn-xnum':                          # count in section 0, absent
        struct.pack_into('<H', data, 56, 0xffff)
        struct.pack_into('<Q', data, 40, 2**63)
        return data
    if kind == 'note-sizes':                       # every note claims 4 GiB
        for p, _ns, _ds, _t in list(notes(data)):
            struct.pack_into('<I', data, p + 4, 0xfffffff0)
        return data
    if kind == 'nt-file-count':                    # NT_FILE count 2^62
        p, ns, _ds = first_note(data, NT_FILE)
        struct.pack_into('<Q', data, p + 12 + ((ns + 3) & ~3), 2**62)
        return data
    if kind == 'nt-file-noname':                   # names without NUL
        p, ns, ds = first_note(data, NT_FILE)
        d = p + 12 + ((ns + 3) & ~3)
        count, = struct.unpack_from('<Q', data, d)
        names = d + 16 + count * 24
        for i in range(names, d + ds):
            data[i] = 0x41
        return data
    if kind == 'segs-overlap':                     # every PT_LOAD at one address
        for off, (ptype, *_rest) in list(phdrs(data)):
            if ptype == 1:
                struct.pack_into('<Q', data, off + 16, 0x400000)
                struct.pack_into('<Q', data, off + 40, 2**63)
        return data
    if kind == 'segs-offsets':                     # PT_LOAD data past the end
        for off, (ptype, *_rest) in list(phdrs(data)):
            if ptype == 1:
                struct.pack_into('<Q', data, off + 8, 2**63 + 5)
        return data
    if kind == 'auxv-loop':                        # no NT_FILE, auxv pointing
        strip_nt_file(data)                        # into the notes themselves
        p, ns, ds = first_note(data, 6)
        d = p + 12 + ((ns + 3) & ~3)
        for i in range(0, ds - 16, 16):
            struct.pack_into('<QQ', data, d + i, 3, 0x10)   # AT_PHDR
        return data
    sys.exit('core-edit: unknown kind %r' % kind)


KINDS = ('empty not-elf trunc-ehdr trunc-phdrs trunc-notes trunc-half '
         'trunc-one-thread not-core bad-class phnum-huge phoff-huge pn-xnum note-sizes '
         'nt-file-count nt-file-noname segs-overlap segs-offsets '
         'auxv-loop').split()


def main(argv):
    if len(argv) >= 1 and argv[0] == 'kinds':
        print(' '.join(KINDS))
        return
    if len(argv) < 3:
        sys.exit(__doc__)
    with open(argv[1], 'rb') as f:
        data = bytearray(f.read())
    if argv[0] == 'strip-nt-file':
        strip_nt_file(data)
    elif argv[0] == 'bad' and len(argv) == 4:
        data = bad(data, argv[3])
    else:
        sys.exit(__doc__)
    with open(argv[2], 'wb') as f:
        f.write(data)


if __name__ == '__main__':
    main(sys.argv[1:])
