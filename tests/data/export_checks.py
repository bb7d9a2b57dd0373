#!/usr/bin/env python3
"""Checks of tracefold's exports, shared by tests/cli/*.sh and tests/mpi/*.sh.

  export_checks.py perfetto FILE.json EXPAND_DIR MESSAGES [recorded [TOLERANCE_NS]]
      EXPAND_DIR holds rank-R.txt from `tracefold expand TRACE -r R`.
      With `recorded`, the timeline must be a recorded one and causal:
      every message's receive completes after its send started (or at most
      TOLERANCE_NS before: the error bound of clocks corrected across hosts).
  export_checks.py otf2 OTF2_PRINT_OUTPUT EXPAND_DIR
  export_checks.py grid ROWS COLS MESSAGES BYTES CSV SVG [PNG]
      the matrix of a non-periodic ROWS x COLS stencil: exactly the
      neighbour pairs, each MESSAGES messages and BYTES bytes.
  export_checks.py screenshot FILE.png
      a rendered report: not blank, and the heatmap's darkest colour shows.

Exit status 0 when every check holds; a failed check raises (status 1).
"""
import json
import os
import re
import struct
import sys
import zlib
from decimal import Decimal

SEND_OPS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"}
ISEND_OPS = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"}
SENDRECV_OPS = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}
COLLECTIVES = {"MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
               "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
               "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
               "MPI_Scan", "MPI_Exscan"}
RECV_END_PREFIXES = ("MPI_Recv", "MPI_Irecv", "MPI_Wait", "MPI_Test", "MPI_Sendrecv")


def read_events(path):
    evs = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words or not (words[0].startswith("MPI_") or words[0] in ("compute", "enter", "exit")):
                continue
            fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
            evs.append((words[0], fields))
    return evs


def read_expansion(d):
    """(rank, thread) -> list of (op, fields) from `tracefold expand` output
    files: rank-R.txt for a rank (its first thread), rank-R-thread-T.txt
    (`expand -r R -t T`) for its other threads."""
    ranks = {}
    r = 0
    while os.path.exists(os.path.join(d, "rank-%d.txt" % r)):
        ranks[(r, 0)] = read_events(os.path.join(d, "rank-%d.txt" % r))
        t = 1
        while os.path.exists(os.path.join(d, "rank-%d-thread-%d.txt" % (r, t))):
            ranks[(r, t)] = read_events(os.path.join(d, "rank-%d-thread-%d.txt" % (r, t)))
            t += 1
        r += 1
    assert ranks, "no expansion files in " + d
    return ranks


def ns(v):
    return int(Decimal(str(v)) * 1000)


def check_perfetto(path, expand_dir, messages, recorded=False, tolerance_ns=0):
    with open(path) as f:
        j = json.load(f)
    ranks = read_expansion(expand_dir)
    want_timeline = "recorded" if recorded else "synthesized from folded trace means"
    assert j["otherData"]["timeline"] == want_timeline, j["otherData"]
    evs = j["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {r: "rank %d" % r for r, t in ranks if t == 0}, names
    tracks = {(e["pid"], e["tid"]) for e in evs if e["ph"] == "M" and e["name"] == "thread_name"}
    assert tracks == set(ranks), "tracks %s, expected %s" % (sorted(tracks), sorted(ranks))
    # Slices by (rank, thread): one Perfetto track per thread.
    slices = {r: [] for r in ranks}
    for e in evs:
        if e["ph"] == "X":
            assert e["dur"] >= 0, e
            slices[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))
    for r, sl in slices.items():
        sl.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        # Proper nesting: a slice lies inside the open one or after it.
        stack = []
        for s in sl:
            while stack and stack[-1][1] <= s[0]:
                stack.pop()
            assert not stack or s[1] <= stack[-1][1], "rank %s: slices overlap partially: %s / %s" % (
                r, stack[-1][2], s[2])
            stack.append(s)
        calls = [s[2] for s in sl if s[2]["cat"] != "compute"]
        ops = [c["args"]["op"] for c in calls]
        want = [op for op, _ in ranks[r]]
        assert ops == want, "rank %s: slice ops differ from the expansion (%d vs %d)" % (r, len(ops), len(want))
        for c, (op, fields) in zip(calls, ranks[r]):
            assert c["name"].startswith(op + " [site "), c["name"]
            if op in COLLECTIVES:
                assert c["cat"] == "collective", c
                assert "bytes" in c["args"], c
                if "root" in fields:
                    assert str(c["args"]["root"]) == fields["root"], (c, fields)

    def enclosing(track, t):
        for s in slices[track]:
            if s[0] <= t <= s[1] and s[2]["cat"] != "compute":
                return s[2]
        return None

    starts = {}
    ends = {}
    for e in evs:
        if e["ph"] == "s":
            assert e["id"] not in starts, "duplicate flow start %s" % e["id"]
            starts[e["id"]] = e
        elif e["ph"] == "f":
            assert e["id"] not in ends, "duplicate flow end %s" % e["id"]
            assert e.get("bp") == "e", e
            ends[e["id"]] = e
    assert set(starts) == set(ends), "flow starts without ends: %s, ends without starts: %s" % (
        sorted(set(starts) - set(ends))[:5], sorted(set(ends) - set(starts))[:5])
    assert len(starts) == messages, "%d flows, expected %d" % (len(starts), messages)
    for i, s in starts.items():
        f = ends[i]
        assert f["pid"] == s["args"]["to"], (s, f)
        snd = enclosing((s["pid"], s["tid"]), ns(s["ts"]))
        rcv = enclosing((f["pid"], f["tid"]), ns(f["ts"]))
        assert snd and snd["args"]["op"] in SEND_OPS | ISEND_OPS | SENDRECV_OPS, (s, snd)
        assert rcv and rcv["args"]["op"].startswith(RECV_END_PREFIXES), (f, rcv)
        # A receive of a tag takes only that tag's messages (the flow can end
        # on another thread's track only if that thread received the tag).
        rtag = rcv["args"].get("rtag" if rcv["args"]["op"] in SENDRECV_OPS else "tag")
        if isinstance(rtag, int) and rtag >= 0:
            assert rtag == s["args"]["tag"], ("message of tag %s ends in a receive of tag %s" % (
                s["args"]["tag"], rtag), s, rcv)
        if recorded:
            # Real times on one clock: a receive cannot end before its send began.
            assert ns(rcv["ts"]) + ns(rcv["dur"]) + tolerance_ns >= ns(snd["ts"]), (
                "receive ends before its send", snd, rcv)
    print("perfetto ok: %d tracks, %d slices, %d flows" % (len(ranks), sum(len(v) for v in slices.values()),
                                                           len(starts)))


def check_otf2(print_out, expand_dir):
    ranks = read_expansion(expand_dir)
    got = {}
    with open(print_out) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[1].isdigit() and w[2].isdigit():
                key = (w[0], int(w[1]))
                got[key] = got.get(key, 0) + 1
    P = len([1 for r, t in ranks if t == 0])
    for (r, t), evs in ranks.items():
        loc = t * P + r  # thread t of rank r is OTF2 location t * P + r
        want = {"ENTER": len(evs), "LEAVE": len(evs), "MPI_SEND": 0, "MPI_ISEND": 0, "MPI_RECV": 0,
                "MPI_IRECV_REQUEST": 0, "MPI_IRECV": 0, "MPI_COLLECTIVE_BEGIN": 0, "MPI_COLLECTIVE_END": 0}
        for op, fields in evs:
            if op in SEND_OPS | SENDRECV_OPS and fields.get("peer") != "null":
                want["MPI_SEND"] += 1
            if op in ISEND_OPS and fields.get("peer") != "null":
                want["MPI_ISEND"] += 1
            if op == "MPI_Recv" and fields.get("peer") != "null":
                want["MPI_RECV"] += 1
            if op in SENDRECV_OPS and fields.get("rpeer") != "null":
                want["MPI_RECV"] += 1
            if op == "MPI_Irecv" and fields.get("peer") != "null":
                want["MPI_IRECV_REQUEST"] += 1
                want["MPI_IRECV"] += 1  # the test traces complete every Irecv
            if op in COLLECTIVES:
                want["MPI_COLLECTIVE_BEGIN"] += 1
                want["MPI_COLLECTIVE_END"] += 1
        for rec, n in want.items():
            assert got.get((rec, loc), 0) == n, "rank %d thread %d: %d %s records, expected %d" % (
                r, t, got.get((rec, loc), 0), rec, n)
    total = sum(got.values())
    print("otf2 ok: %d locations, %d records" % (len(ranks), total))


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        ctype = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(ctype + body) & 0xffffffff == crc, "bad CRC in %s" % ctype
        if ctype == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif ctype == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and colour in (2, 6) and interlace == 0, ihdr
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        prev = line
    return w, h, rows


def check_grid(rows, cols, messages, nbytes, csv_path, svg_path, png_path=None):
    n = rows * cols
    want = set()
    for s in range(n):
        for r in range(n):
            if abs(s // cols - r // cols) + abs(s % cols - r % cols) == 1:
                want.add((s, r))
    got = {}
    with open(csv_path) as f:
        assert f.readline().strip() == "sender,receiver,messages,bytes"
        for line in f:
            s, r, m, b = map(int, line.strip().split(","))
            got[(s, r)] = (m, b)
    assert set(got) == want, "CSV pairs differ: extra %s, missing %s" % (
        sorted(set(got) - want)[:8], sorted(want - set(got))[:8])
    for k, v in got.items():
        assert v == (messages, nbytes), "pair %s: %s, expected %s" % (k, v, (messages, nbytes))
    with open(svg_path) as f:
        svg = f.read()
    cells = {(int(a), int(b)) for a, b in re.findall(r'class="cell" data-sender="(\d+)" data-receiver="(\d+)"', svg)}
    assert cells == want, "SVG cells differ from the expected pattern"
    for needle in ("sender rank", "receiver rank", "linearGradient", 'class="legend"'):
        assert needle in svg, "SVG lacks " + needle
    if png_path:
        w, h, px = read_png(png_path)
        cell = (w - 1) // n
        assert cell >= 1 and w == h, (w, h)
        for s in range(n):
            for r in range(n):
                c = px[s * cell + cell // 2][r * cell + cell // 2]
                filled = c != (255, 255, 255)
                assert filled == ((s, r) in want), "PNG cell %d->%d is %s" % (s, r, c)
    print("grid ok: %dx%d, %d pairs" % (rows, cols, len(want)))


def check_screenshot(path):
    w, h, px = read_png(path)
    colours = {}
    for row in px[::2]:
        for c in row[::2]:
            colours[c] = colours.get(c, 0) + 1
    total = sum(colours.values())
    white = colours.get((255, 255, 255), 0)
    assert len(colours) >= 10, "screenshot has only %d colours" % len(colours)
    assert white < 0.98 * total, "screenshot is almost blank (%.1f%% white)" % (100.0 * white / total)
    # The heatmap's darkest cells (#800026) and the bar chart's blue (#4e79a7).
    for c in ((128, 0, 38), (78, 121, 167)):
        assert colours.get(c, 0) >= 20, "colour %s not on the screenshot" % (c,)
    print("screenshot ok: %dx%d, %d colours, %.1f%% white" % (w, h, len(colours), 100.0 * white / total))


def main():
    cmd = sys.argv[1]
    a = sys.argv[2:]
    if cmd == "perfetto":
        check_perfetto(a[0], a[1], int(a[2]), len(a) > 3 and a[3] == "recorded",
                       int(a[4]) if len(a) > 4 else 0)
    elif cmd == "otf2":
        check_otf2(a[0], a[1])
    elif cmd == "grid":
        check_grid(int(a[0]), int(a[1]), int(a[2]), int(a[3]), a[4], a[5], a[6] if len(a) > 6 else None)
    elif cmd == "screenshot":
        check_screenshot(a[0])
    else:
        sys.exit("unknown check " + cmd)


if __name__ == "__main__":
    main()
