#!/usr/bin/env python3
"""Reads tracefold-mem raw streams (layout: src/memtrace/raw_format.h) for the tests.

usage: rawcount.py FILE [LO HI]
Prints key=value words: thread (from the header), records, loads, stores,
and, for records whose instruction address is in [LO, HI): in_loads,
in_stores, in_load_bytes, in_store_bytes, in_sizes (distinct sizes), in_store_span (distinct store
addresses, and whether they are one run of consecutive 8-byte words),
min_iaddr, max_iaddr over all records. Exits 1 on a malformed file."""
import struct
import sys

HEADER = struct.Struct("<8sIIII")
# The first 24 bytes of a version-2 record; the normalised address is skipped.
RECORD = struct.Struct("<QQIHBB24x")


def main():
    path = sys.argv[1]
    lo = int(sys.argv[2]) if len(sys.argv) > 3 else 0
    hi = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    data = open(path, "rb").read()
    if len(data) < HEADER.size:
        sys.exit(f"{path}: shorter than the header")
    magic, version, rsize, thread, _pid = HEADER.unpack_from(data, 0)
    if magic != b"TFMRAW\0\0" or version != 2 or rsize != RECORD.size:
        sys.exit(f"{path}: bad header {magic!r} v{version} record {rsize}")
    body = len(data) - HEADER.size
    if body % RECORD.size:
        sys.exit(f"{path}: {body % RECORD.size} trailing bytes after the last record")
    n = loads = stores = in_loads = in_stores = in_load_bytes = in_store_bytes = 0
    sizes = set()
    store_addrs = set()
    min_i, max_i = None, 0
    for iaddr, daddr, _ctx, size, _idx, flags in RECORD.iter_unpack(data[HEADER.size:]):
        n += 1
        is_store = flags & 1
        stores += is_store
        loads += not is_store
        min_i = iaddr if min_i is None else min(min_i, iaddr)
        max_i = max(max_i, iaddr)
        if lo <= iaddr < hi:
            sizes.add(size)
            if is_store:
                in_stores += 1
                in_store_bytes += size
                store_addrs.add(daddr)
            else:
                in_loads += 1
                in_load_bytes += size
    run = bool(store_addrs) and max(store_addrs) - min(store_addrs) == 8 * (len(store_addrs) - 1)
    print(f"thread={thread} records={n} loads={loads} stores={stores} in_loads={in_loads} "
          f"in_stores={in_stores} in_load_bytes={in_load_bytes} in_store_bytes={in_store_bytes} "
          f"in_sizes={','.join(map(str, sorted(sizes))) or '-'} "
          f"in_distinct_stores={len(store_addrs)} in_store_run={int(run)} "
          f"min_iaddr={min_i or 0} max_iaddr={max_i}")


main()
