#!/usr/bin/env python3
"""Accesses per call-path context, for the tracefold-mem tests.

usage: contexts.py RAW CONTEXTS BINARY LO HI
For the records of the raw stream RAW whose instruction address is in
[LO, HI), prints one line per context, in order of first appearance:
  ctx=ID loads=L stores=S path=F1>F2>...
where the path lists the functions of BINARY holding the call sites from the
root down (sites outside BINARY, e.g. in libc, are left out). Layouts:
src/memtrace/raw_format.h. Exits 1 on a malformed file or an unknown id."""
import struct
import subprocess
import sys

raw, ctxs, binary, lo, hi = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

data = open(ctxs, "rb").read()
magic, version, rsize, count, _ = struct.unpack_from("<8sIIII", data, 0)
if magic != b"TFMCTX\0\0" or version != 1 or rsize != 16 or len(data) != 24 + 16 * count:
    sys.exit(f"{ctxs}: bad header or length ({magic!r} v{version} {rsize} x {count}, {len(data)} bytes)")
parent = {0: None}
site = {}
for i, (cid, par, call) in enumerate(struct.iter_unpack("<IIQ", data[24:])):
    if cid != i + 1 or par >= cid:
        sys.exit(f"{ctxs}: record {i} has id {cid}, parent {par}")
    parent[cid] = par
    site[cid] = call

funcs = []
for line in subprocess.run(["nm", "-S", binary], capture_output=True, text=True, check=True).stdout.splitlines():
    f = line.split()
    if len(f) == 4 and f[2] in "tT":
        start = int(f[0], 16)
        funcs.append((start, start + int(f[1], 16), f[3]))


def name(addr):
    return next((n for s, e, n in funcs if s <= addr < e), None)


def path(cid):
    names = []
    while cid:
        n = name(site[cid])
        if n:
            names.append(n)
        cid = parent[cid]
    return ">".join(reversed(names))


counts = {}
body = open(raw, "rb").read()[24:]
for iaddr, _daddr, ctx, _size, _idx, flags in struct.iter_unpack("<QQIHBB24x", body):
    if lo <= iaddr < hi:
        if ctx not in parent:
            sys.exit(f"{raw}: context {ctx} not in {ctxs}")
        c = counts.setdefault(ctx, [0, 0])
        c[flags & 1] += 1
for cid, (loads, stores) in counts.items():
    print(f"ctx={cid} loads={loads} stores={stores} path={path(cid)}")
