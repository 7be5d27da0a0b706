#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a picture topdown plot drew, as a real renderer rendered it.

usage: png_check.py IMAGE.png PICTURE.svg REPORT.jsonl

- IMAGE.png (rsvg-convert's rendering of PICTURE.svg) decodes (PNG spec:
  zlib-compressed scanlines with per-line filters 0-4), has the SVG's size,
  and is not trivial;
- at the top centre of every bar segment the SVG declares (ids r<n>-<category>,
  i<g>-<k>-<category>) the image has that segment's colour: the renderer
  drew the bars where the SVG says;
- the first region bar's level-1 segments have the widths of the report's
  fractions (its first "all" row, else its first region row): the picture
  says what the report says;
- an emulated report (pmu column "emulated:...") has the red EMULATED banner.
Only the standard library: no image package needed.
"""
import json
import re
import struct
import sys
import zlib

L1 = ["retiring", "bad_speculation", "frontend_bound", "backend_bound"]


def fail(msg):
    print("png_check: FAIL: " + msg)
    sys.exit(1)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(path + ": not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = hdr
    if depth != 8 or colour not in (2, 6) or interlace:
        fail("unexpected PNG format depth %d colour %d" % (depth, colour))
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            line[x] = (line[x] + (0, a, b, (a + b) // 2, paeth(a, b, c))[f]) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def pixel(img, x, y):
    width, height, bpp, rows = img
    return tuple(rows[y][x * bpp:x * bpp + 3])


def rects(svg):
    out = {}
    for m in re.finditer(r'<rect id="([^"]+)" x="([\d.]+)" y="([\d.]+)" '
                         r'width="([\d.]+)" height="([\d.]+)" fill="#([0-9a-f]{6})"', svg):
        out[m.group(1)] = ([float(m.group(i)) for i in range(2, 6)],
                           tuple(int(m.group(6)[i:i + 2], 16) for i in (0, 2, 4)))
    return out


def first_region(report):
    rows = [json.loads(l) for l in open(report) if l.startswith("{")]
    regions = [r for r in rows if r["kind"] == "region"]
    if not regions:
        fail(report + ": no region rows")
    name = regions[0]["name"]
    alls = [r for r in regions if r["name"] == name and r.get("thread") == "all"]
    return (alls or regions)[0], any(r.get("pmu", "").startswith("emulated") for r in rows)


def main():
    png, svg_path, report = sys.argv[1:4]
    img = decode_png(png)
    svg = open(svg_path).read()
    w, h = (int(v) for v in re.search(r'<svg [^>]*width="(\d+)" height="(\d+)"', svg).groups())
    if (img[0], img[1]) != (w, h) or w < 400 or h < 200:
        fail("image %dx%d, SVG %dx%d" % (img[0], img[1], w, h))
    bars = {k: v for k, v in rects(svg).items() if re.match(r"(r\d+|i\d+-\d+)-", k)}
    checked = 0
    for key, ((x, y, bw, bh), rgb) in bars.items():
        if bw < 4 or bh < 4 or key.endswith("unsplit"):
            continue
        # above the white percentage a wide bar carries at its centre
        got = pixel(img, int(x + bw / 2), int(y + 2))
        if max(abs(g - e) for g, e in zip(got, rgb)) > 3:
            fail("%s: colour %s at its top centre, SVG says %s" % (key, got, rgb))
        checked += 1
    if checked < 8:
        fail("only %d bar segments to check" % checked)
    row, emulated = first_region(report)
    total = sum(row[k] for k in L1)
    widths = [bars.get("r0-" + k, ((0, 0, 0, 0), None))[0][2] for k in L1]
    for k, width in zip(L1, widths):
        want = row[k] / total * sum(widths)
        if abs(width - want) > 0.6:
            fail("r0-%s is %.2f px wide, the report's %.4f gives %.2f" % (k, width, row[k], want))
    if emulated:
        if "emulated-banner" not in svg or "EMULATED PMU" not in svg:
            fail("emulated report without the EMULATED banner")
        (x, y, bw, bh), rgb = rects(svg)["emulated-banner"]
        if pixel(img, int(x + 4), int(y + 4)) != rgb:
            fail("the EMULATED banner is not drawn")
    print("png_check: %dx%d image, %d bar segments in their colours, "
          "first bar matches the report%s" % (w, h, checked, ", EMULATED" if emulated else ""))


main()
