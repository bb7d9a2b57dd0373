#!/usr/bin/env bash
# User statistics (seed 000, 5.2.5): with --stats bytes,minflt every node
# carries a histogram per statistic next to its timings, one sample per call,
# and the bytes statistic adds up to the bytes the events themselves move.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
"$TF" record --text -o ring.tf --raw-log raw --stats bytes,minflt -- "$MPIRUN" -np 2 "$APPS/app_ring" 25 > out.txt 2> err.txt
"$TF" diff raw ring.tf
python3 - ring.tf <<'PY'
import re, sys
text = open(sys.argv[1]).read()
stats = {"bytes": [0, 0], "minflt": [0, 0]}   # samples, sum
for m in re.finditer(r"^    stat (\w+) n=(\d+)(?: sum=(-?\d+))?", text, re.M):
    stats[m.group(1)][0] += int(m.group(2))
    stats[m.group(1)][1] += int(m.group(3) or 0)
comm = sum(int(n) for n in re.findall(r"^    comm n=(\d+)", text, re.M))
assert comm > 0, "no timings"
# MPI_Init is timed but measured before any statistic can start: 2 ranks.
for name, (samples, _) in stats.items():
    assert samples == comm - 2, f"{name}: {samples} samples for {comm} timed calls"
# ring: 25 steps x (Irecv + Isend) of one MPI_LONG, plus one Allreduce of one long, per rank
expected_bytes = 2 * (25 * 2 * 8 + 8)
assert stats["bytes"][1] == expected_bytes, f"bytes sum {stats['bytes'][1]} != {expected_bytes}"
print(f"ok: {comm} calls, bytes statistic sums to {expected_bytes}")
PY
"$TF" record -o bad.tf --stats nosuch -- "$MPIRUN" -np 2 "$APPS/app_ring" 5 > out2.txt 2> err2.txt
grep -q "unknown statistic 'nosuch'" err2.txt
cmp out.txt <("$MPIRUN" -np 2 "$APPS/app_ring" 25) || { grep -q "ring: 2 ranks, 25 steps" out.txt; }
