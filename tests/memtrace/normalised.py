#!/usr/bin/env python3
"""Prints the normalised addresses of a tracefold-mem raw stream (version 2,
layout: src/memtrace/raw_format.h), one access a line, for the tests.

usage: normalised.py FILE [LO HI] [--no-owner]
Each line: iaddr index size L|S kind region ordinal owner offset, for the
records whose instruction address is in [LO, HI) (all without a range).
--no-owner prints the owner as '-' (to compare two threads' streams)."""
import struct
import sys

KINDS = ["other", "static", "stack", "heap"]
args = [a for a in sys.argv[1:] if a != "--no-owner"]
no_owner = len(args) != len(sys.argv) - 1
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
        out.append(f"{iaddr:x} {idx} {size} {'S' if flags & 1 else 'L'} {kind} {region} {ordinal} "
                   f"{'-' if no_owner else owner} {offset}")
sys.stdout.write("\n".join(out) + ("\n" if out else ""))
