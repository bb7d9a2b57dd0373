#!/usr/bin/env python3
"""Rewrites `tracefold memreplay --raw` output (stdin) for comparing logs of
different processes: drops the header and the thread field, and prints each
reference's context, and a heap reference's region (its allocation context),
as its call path (call sites from the root, hex, '>'-separated), since every
process numbers its contexts in its own order.

usage: ctxpaths.py CONTEXTS.BIN       ids of that log
       ctxpaths.py --trace TRACE.TXT  ids of a folded trace: the call paths its
                                      text form keeps (module memctx<ID>), call
                                      sites as addresses of the recorded run
       ctxpaths.py --trace TRACE.TXT --relative
                                      call sites in a module as FILE+OFFSET"""
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    return list(struct.iter_unpack("<IIQ", data[24:]))


paths = {0: "root"}
if sys.argv[1] == "--trace":
    lines = [line.split() for line in open(sys.argv[2])]
    # A call site in a module is ID+OFFSET there: back to the address the
    # recorded run had, from the module's base (memmod<ID>).
    mods = {f[1][6:]: f for f in lines
            if len(f) == 5 and f[0] == "module" and f[1].startswith("memmod")}
    relative = sys.argv[3:] == ["--relative"]

    def site(frame):
        mod, plus, off = frame.partition("+")
        if not plus:
            return frame
        if relative:
            return mods[mod][4][len("path="):] + "+" + off
        return f"{int(mods[mod][2][len('base='):], 16) + int(off, 16):x}"

    for f in lines:
        if len(f) == 5 and f[0] == "module" and f[1][6:].isdigit() and f[1].startswith("memctx"):
            path = f[4][len("path="):]
            path = ">".join(site(x) for x in path.split(">")) if path[0] not in "?o" else path
            paths[int(f[1][6:])] = "root>" + path if path[0] not in "?o" else path
else:
    for cid, par, call in read(sys.argv[1]):
        paths[cid] = f"{paths[par]}>{call:x}"

for line in sys.stdin:
    if line.startswith("#"):
        continue
    f = line.split()
    f[6] = paths.get(int(f[6]), f[6])
    if f[7] == "heap":
        f[8] = paths.get(int(f[8]), f[8])
    print(" ".join(f[1:]))
