#!/usr/bin/env python3
"""Counts the data accesses that `valgrind --tool=lackey --trace-mem=yes`
printed for instructions in [LO, HI).

usage: lackey_count.py LOG LO HI [--bytes]
  ->  "loads=L stores=S" (with --bytes: "... load_bytes=B store_bytes=B")
Lackey prints "I  addr,size" per instruction, then its data accesses as
" L addr,size", " S addr,size" or " M addr,size"; M (a load and a store of
the same bytes by one instruction, merged) counts as one load and one store."""
import sys

log, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inside = False
loads = stores = instrs = load_bytes = store_bytes = 0
with open(log) as f:
    for line in f:
        parts = line.split()
        if len(parts) != 2 or "," not in parts[1]:
            continue
        kind, where = parts
        addr_s, size_s = where.split(",", 1)
        addr = int(addr_s, 16)
        if kind == "I":
            inside = lo <= addr < hi
            instrs += 1
        elif inside and kind in ("L", "S", "M"):
            loads += kind in ("L", "M")
            stores += kind in ("S", "M")
            load_bytes += int(size_s) * (kind in ("L", "M"))
            store_bytes += int(size_s) * (kind in ("S", "M"))
if instrs == 0:
    sys.exit(f"{log}: no instruction lines (was --trace-mem=yes given?)")
if "--bytes" in sys.argv[4:]:
    print(f"loads={loads} stores={stores} load_bytes={load_bytes} store_bytes={store_bytes}")
else:
    print(f"loads={loads} stores={stores}")
