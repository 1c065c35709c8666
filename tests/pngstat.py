#!/usr/bin/env python3
"""pngstat.py PNG: facts about a screenshot, for the browser tests.

Prints one line, "width=W height=H colours=N warm=N highlight=N":
distinct colours, pixels in the flamegraph's warm palette (red high, blue
low: frames, not the pale background or text), and pixels of the search
highlight (#e600e6). A small PNG decoder on zlib (8-bit RGB/RGBA, not
interlaced: what Chromium writes), so the tests need no ImageMagick.
Exit status 0, or 99 when the file is not a PNG it can read.
"""
import struct
import sys
import zlib


def decode(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError("unsupported PNG: depth %d colour type %d "
                         "interlace %d" % (depth, ctype, interlace))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xff
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xff
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xff
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    try:
        width, height, bpp, rows = decode(sys.argv[1])
    except (OSError, ValueError, TypeError, zlib.error, struct.error) as e:
        print("pngstat.py: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 99
    colours, warm, highlight = set(), 0, 0
    for line in rows:
        for i in range(0, len(line), bpp):
            r, g, b = line[i], line[i + 1], line[i + 2]
            colours.add((r, g, b))
            if r >= 200 and b <= 60 and r - b > 150:
                warm += 1
            if (r, g, b) == (230, 0, 230):
                highlight += 1
    print("width=%d height=%d colours=%d warm=%d highlight=%d"
          % (width, height, len(colours), warm, highlight))
    return 0


if __name__ == "__main__":
    sys.exit(main())
