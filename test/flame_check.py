#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a TopDown flame graph topdown plot drew, as rsvg-convert rendered it.

usage: flame_check.py IMAGE.png FLAME.svg REPORT.jsonl NAME=CATEGORY...

- at the top centre of every frame segment the SVG declares (ids f<n>-<i>,
  at least 2 px wide) the image has that segment's colour;
- each frame is as wide, relative to the root frames, as its path's
  inclusive slots in the report (within a pixel), and its coloured
  segments as its self slots' level-1 shares of that width;
- for each NAME=CATEGORY: the function's all-threads row has CATEGORY as
  its largest self share, and its frame (a callee of main) has its
  widest coloured segment in CATEGORY's colour: report and picture point
  at that function for that reason.
"""
import json
import os
import re
import sys

# png_check.py's PNG decoder and SVG reader (that script runs its own
# checks when run, so its definitions are taken without its last line)
_src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "png_check.py")
_ns = {"__name__": "png_check"}
exec(compile(open(_src).read().rsplit("\nmain()", 1)[0], _src, "exec"), _ns)
L1, decode_png, pixel, rects = (_ns[k] for k in ("L1", "decode_png", "pixel",
                                                 "rects"))


def fail(msg):
    print("flame_check: FAIL: " + msg)
    sys.exit(1)

WIDTH = 1200.0


def frames(svg):
    """frame id -> (path, [x, y, w, h] of its whole rect)."""
    out = {}
    for m in re.finditer(r'<g id="(f\d+)"><title>([^\n<]+)\n.*?</title>'
                         r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"'
                         r' height="([\d.]+)"', svg, re.S):
        out[m.group(1)] = (m.group(2), [float(m.group(i)) for i in range(3, 7)])
    return out


def main():
    png, svg_path, report = sys.argv[1:4]
    img = decode_png(png)
    svg = open(svg_path).read()
    segs = rects(svg)
    seen = 0
    for sid, ((x, y, w, h), colour) in segs.items():
        if not re.match(r"f\d+-\d$", sid) or w < 2:
            continue
        got = pixel(img, int(x + w / 2), int(y + 2))  # above the label
        if max(abs(a - b) for a, b in zip(got, colour)) > 8:
            fail("%s: colour %s at its centre, SVG says %s" % (sid, got, colour))
        seen += 1
    if seen < 4:
        fail("only %d frame segments drawn" % seen)
    rows = [json.loads(l) for l in open(report) if l.startswith("{")]
    paths = {r["name"]: r for r in rows if r["kind"] == "path"}
    total = sum(r["slots"] for n, r in paths.items() if ";" not in n)
    fr = frames(svg)
    if len(fr) != len(paths):
        fail("%d frames for %d paths" % (len(fr), len(paths)))
    for fid, (path, (x, y, w, h)) in fr.items():
        row = paths[path]
        want = row["slots"] / total * WIDTH
        if abs(w - want) > 1:
            fail("%s: %.1f px wide, its slots say %.1f" % (path, w, want))
        # its own part: self slots, split in the self shares
        own = w * min(1, row["self_slots"] / row["slots"]) if row["slots"] else 0
        for i, c in enumerate(L1):
            sw = segs.get("%s-%d" % (fid, i), ([0, 0, 0, 0], 0))[0][2]
            if abs(sw - own * row["self_" + c]) > 0.5:
                fail("%s: %s segment %.2f px, self share says %.2f"
                     % (path, c, sw, own * row["self_" + c]))
    for arg in sys.argv[4:]:
        name, cat = arg.split("=")
        row = [r for r in rows if r["kind"] == "function" and
               r["name"] == name and r["thread"] == "all"][0]
        top = max(L1, key=lambda c: row["self_" + c])
        if top != cat:
            fail("%s: largest self share %s, want %s" % (name, top, cat))
        fid = [f for f, (p, _) in fr.items() if p == "main;" + name][0]
        widest = max(range(4), key=lambda i: segs.get("%s-%d" % (fid, i),
                                                      ([0, 0, 0, 0], 0))[0][2])
        if L1[widest] != cat:
            fail("%s: widest segment %s, want %s" % (name, L1[widest], cat))
    print("flame_check: %d segments, %d frames in place" % (seen, len(fr)))


main()
