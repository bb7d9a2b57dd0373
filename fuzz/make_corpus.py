#!/usr/bin/env python3
"""Writes the hand-made inputs of fuzz/corpus/: the reproducers of issue 18
and small valid samples (the rest of the corpus is copied from tests/data
and examples/, or is a fuzzer finding). Run from anywhere; needs `zstd`."""
import os
import struct
import subprocess

ROOT = os.path.dirname(os.path.abspath(__file__))
C = os.path.join(ROOT, "corpus")


def put(target, name, data):
    os.makedirs(os.path.join(C, target), exist_ok=True)
    with open(os.path.join(C, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def zstd(raw):
    return subprocess.run(["zstd", "-q", "-c", "-3"], input=raw, capture_output=True,
                          check=True).stdout


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return ((v << 1) ^ (v >> 63)) & 0xFFFFFFFFFFFFFFFF


def timeline(base=1000, records=((4, 10, 5), (60, 3, 7)), trailer=True, raw_size=None,
             start=(0, 0), end=(0, 0), world=2, rank=0):
    head = b"TFTL" + bytes([1]) + struct.pack("<iiqqq", rank, world, base, *start)
    raw = b"".join(varint(op) + varint(zigzag(gap)) + varint(zigzag(dur))
                   for op, gap, dur in records)
    packed = zstd(raw)
    block = struct.pack("<III", len(packed), raw_size if raw_size is not None else len(raw),
                        len(records)) + packed
    tail = struct.pack("<Iqqqq", 0xFFFFFFFF, *end, len(records), 0) if trailer else b""
    return head + block + tail


def timeline3(records=((4, 0, 10, 5), (60, 2, 3, 7), (61, 1, -2, 2)), numbers=(0, 2, 1),
              base=1000, start=(-50, 100, 7), end=(-40, 900000, 9), world=2, rank=0):
    """Version 3: a thread per record, the trace's thread numbers in the trailer."""
    head = b"TFTL" + bytes([3]) + struct.pack("<iiqqqq", rank, world, base, *start)
    raw = b"".join(varint(op) + varint(thread) + varint(zigzag(gap)) + varint(zigzag(dur))
                   for op, thread, gap, dur in records)
    packed = zstd(raw)
    block = struct.pack("<III", len(packed), len(raw), len(records)) + packed
    tail = struct.pack("<Iqqqqq", 0xFFFFFFFF, *end, len(records), 0)
    tail += struct.pack("<I", len(numbers)) + b"".join(struct.pack("<i", n) for n in numbers)
    return head + block + tail


def samples3(records=((0, 0, 1000, 0, 0), (0, 1, 1000, 1, 1), (1, 1, 1, None, None),
                      (0, 2, 1000, 2, 0), (1, 2, 2, None, None), (0, 3, 1000, 2, 0)),
             numbers=(0, 2, 1), rank=0, world=2, period=1000000):
    """Version 3 samples without frames: (0, thread, dt, event delta, in MPI) samples and
    (1, sampler thread, stream) thread records; the trace's thread numbers in the trailer."""
    head = b"TFSM" + bytes([3]) + struct.pack("<iiqB", rank, world, period, 0)
    raw, taken = b"", 0
    for kind, a, b, c, d in records:
        if kind == 0:
            raw += varint(2) + varint(zigzag(b)) + varint(0) + varint(a) + varint(zigzag(c))
            raw += varint(0) + bytes([d])
            taken += 1
        else:
            raw += varint(4) + varint(a) + varint(b)
    # The reader wants the frame to say its size: zstd says it for stdin only when told.
    packed = subprocess.run(["zstd", "-q", "-c", "-3", "--stream-size=%d" % len(raw)], input=raw,
                            capture_output=True, check=True).stdout
    block = struct.pack("<III", len(packed), len(raw), len(records)) + packed
    tail = struct.pack("<IQQqq", 0xFFFFFFFF, taken, 0, 1500, 9000)
    tail += struct.pack("<I", len(numbers)) + b"".join(struct.pack("<i", n) for n in numbers)
    return head + block + tail


# Timelines: valid, no trailer, a block claiming 4 GiB, a base time near
# INT64_MAX (delta sum overflow), clock offsets that overflow to_global.
put("timeline", "valid", timeline(start=(-50, 100), end=(-40, 900000)))
put("timeline", "valid-no-trailer", timeline(trailer=False))
put("timeline", "block-4gib", timeline(raw_size=0xFFFFFFFF, trailer=False))
put("timeline", "base-overflow", timeline(base=2**63 - 8))
put("timeline", "to-global-overflow", timeline(start=(2**62, 0), end=(-2**62, 1)))
put("timeline", "world-huge", timeline(world=2**31 - 1))
put("timeline", "valid-threads", timeline3())
put("samples", "valid-threads", samples3())

# Raw logs: the size that allocated 7.8 GB.
put("rawlog", "size-2e9", "rank 0 size 2000000000\nsite 0 app+0x10\nMPI_Init site=0\n")
put("rawlog", "duplicate-field",
    "rank 0 size 2\nsite 0 app+0x10\nMPI_Send site=0 count=1 count=2 peer=1 tag=0\n")
put("rawlog", "missing-peer", "rank 0 size 2\nsite 0 app+0x10\nMPI_Send site=0 count=1 tag=0\n")
put("rawlog", "non-utf8-site", b"rank 0 size 2\nsite 0 a\xffp+0x10\nMPI_Barrier site=0\n")

HEAD = "tracefold-trace 2\nworld {w}\nlossy -\nsites 1\nsite 0 {site}\ncomms 0\nnodes {n}\n"


def trace(body, world=2, nodes=1, site="app+0x10"):
    return HEAD.format(w=world, n=nodes, site=site) + body + "end\n"


GATHERV = ("node 0 MPI_Gatherv site=0 ranks=*\n  count 1 @ *\n"
           "  field count 4 @ *\n  field root 0 @ *\n")
put("trace_text", "world-1e7", trace("node 0 MPI_Barrier site=0 ranks=*\n  count 3 @ *\n",
                                     world=10000000))
put("trace_text", "gatherv-valid", trace(GATHERV))
put("trace_text", "gatherv-no-count", trace(GATHERV.replace("  field count 4 @ *\n", "")))
put("trace_text", "count-twice",
    trace("node 0 MPI_Barrier site=0 ranks=*\n  count 1 @ *\n  count 2 @ *\n"))
put("trace_text", "loop-iters-twice",
    trace("node 0 MPI_Barrier site=0 ranks=*\n  loop 0 members 1 @ *\n  loop 0 iters 3 @ *\n"
          "  loop 0 iters 4 @ *\n  count 1*3 @ *\n"))
put("trace_text", "site-non-ascii",
    trace("node 0 MPI_Barrier site=0 ranks=*\n  count 1 @ *\n", site="ap\u00e9+0x10"))
put("trace_text", "site-invalid-utf8",
    trace("node 0 MPI_Barrier site=0 ranks=*\n  count 1 @ *\n", site="ap\udcff+0x10")
    .encode("utf-8", "surrogateescape"))
put("merge", "two-partials",
    trace(GATHERV).replace("ranks=*", "ranks=<0 0>").replace("@ *", "@ <0 0>") + "--8<--\n" +
    trace(GATHERV).replace("ranks=*", "ranks=<0 1>").replace("@ *", "@ <0 1>"))
put("merge", "world-mismatch",
    trace(GATHERV).replace("ranks=*", "ranks=<0 0>").replace("@ *", "@ <0 0>") + "--8<--\n" +
    trace(GATHERV, world=3).replace("ranks=*", "ranks=<0 2>").replace("@ *", "@ <0 2>"))
