#!/usr/bin/env python3
"""Rewrites `tracefold memreplay --raw` output (stdin) for comparing logs of
different processes: drops the header and the thread field, and prints each
reference's context, and a heap reference's region (its allocation context),
as its call path (call sites from the root, hex, '>'-separated), since every
process numbers its contexts in its own order.

usage: ctxpaths.py CONTEXTS.BIN            ids of that log
       ctxpaths.py CONTEXTS.BIN DIR...     ids of a trace folded from the logs
                                           DIR...: the first log's, a path new
                                           to the trace numbered after them in
                                           the order of its log's ids"""
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    return list(struct.iter_unpack("<IIQ", data[24:]))


paths = {0: "root"}
if len(sys.argv) > 2:
    known = {}
    for d in sys.argv[2:]:
        local = {0: "root"}
        for cid, par, call in read(d + "/contexts.bin"):
            local[cid] = f"{local[par]}>{call:x}"
            if local[cid] not in known:
                known[local[cid]] = len(known) + 1
                paths[known[local[cid]]] = local[cid]
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
