#!/usr/bin/env python3
"""Prints the normalised addresses of a tracefold-mem raw stream (version 2,
layout: src/memtrace/raw_format.h), one access a line, for the tests.

usage: normalised.py FILE [LO HI] [--no-owner] [--contexts=CONTEXTS.BIN]
Each line: iaddr index size L|S kind region ordinal owner offset, for the
records whose instruction address is in [LO, HI) (all without a range).
--no-owner prints the owner as '-' (to compare two threads' streams);
--contexts prints a heap block's allocation context as its call path
(call sites from the root, hex, '>'-separated) instead of its id, which
depends on the order in which the threads first took each path."""
import struct
import sys

KINDS = ["other", "static", "stack", "heap"]
args = [a for a in sys.argv[1:] if a != "--no-owner" and not a.startswith("--contexts=")]
no_owner = "--no-owner" in sys.argv
paths = {0: "root"}
for a in sys.argv[1:]:
    if a.startswith("--contexts="):
        cdata = open(a[len("--contexts="):], "rb").read()
        parent, site = {}, {}
        for cid, par, call in struct.iter_unpack("<IIQ", cdata[24:]):
            parent[cid], site[cid] = par, call
        for cid in parent:
            chain, c = [], cid
            while c:
                chain.append(f"{site[c]:x}")
                c = parent[c]
            paths[cid] = ">".join(reversed(chain))
path = args[0]
lo = int(args[1]) if len(args) > 2 else 0
hi = int(args[2]) if len(args) > 2 else 1 << 64
data = open(path, "rb").read()
magic, version, rsize, _thread, _pid = struct.unpack_from("<8sIIII", data, 0)
if magic != b"TFMRAW\0\0" or version != 2 or rsize != 48 or (len(data) - 24) % 48:
    sys.exit(f"{path}: not a version-2 raw stream")
out = []
for iaddr, _daddr, _ctx, size, idx, flags, region, ordinal, owner, _r, offset in struct.iter_unpack(
        "<QQIHBBIIIIq", data[24:]):
    if lo <= iaddr < hi:
        kind = KINDS[(flags >> 1) & 3]
        if kind == "heap" and len(paths) > 1:
            region = paths[region]
        out.append(f"{iaddr:x} {idx} {size} {'S' if flags & 1 else 'L'} {kind} {region} {ordinal} "
                   f"{'-' if no_owner else owner} {offset}")
sys.stdout.write("\n".join(out) + ("\n" if out else ""))
