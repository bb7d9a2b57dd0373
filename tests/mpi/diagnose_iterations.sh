#!/usr/bin/env bash
# Temporal context trees (docs/diagnose.md): `bursts` imbalances only
# iterations 3-7 of its 10-step loop (examples/diagnose/diag_problems.c).
# The diagnosis names those iterations of the loop for the symptom (the
# MPI_Allreduce) and the cause (work_a, from samples), and the JSON report
# holds rank 0's tree: the loop, its 10 iterations, work_a inside them.
# The other diagnoses are placed too: `late_bursts` makes rank 0 a late
# sender in iterations 3-7 only (the waiting receive's and the late send's
# iterations), and `large`'s 16 MiB sends are in every iteration (placed by
# their bytes: their time varies with a loaded machine).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"
needs_yielding_waits 4

# 50 ms units: the imbalanced iterations stand well above a loaded
# machine's scheduling jitter in the others.
if UNIT_MS=50 designed bursts 4 --sample 1ms; then
  expect load_imbalance --symptom MPI_Allreduce --cause work_a --cause-rank 3 \
    --where "in iterations 3–7 of 10 of the loop starting at MPI_Allreduce at main"
  CHECKS=$((CHECKS + 1))
  if msg=$(python3 - "$JSON" <<'PY'
import json, sys
trees = json.load(open(sys.argv[1]))["context_trees"]
assert trees and trees[0]["rank"] == 0, [t["rank"] for t in trees]
nodes = trees[0]["nodes"]
loops = [i for i, n in enumerate(nodes) if n["label"].startswith("loop starting at MPI_Allreduce")]
assert len(loops) == 1, [n["label"] for n in nodes if n["parent"] == -1]
its = [n["label"] for n in nodes if n["parent"] == loops[0]]
assert its == ["iteration %d" % i for i in range(1, 11)], its
def in_iteration(n):
    while n["parent"] >= 0:
        n = nodes[n["parent"]]
        if n["label"].startswith("iteration"):
            return True
    return False
work = [n for n in nodes if n["label"].startswith("work_a")]
assert work and all(in_iteration(n) for n in work), work
print("rank 0's tree: the loop, %d iterations, work_a in %d nodes, %d nodes" % (len(its), len(work), len(nodes)))
PY
  ); then
    ok "$msg"
  else
    bad "context tree: $msg"
  fi
fi

# A loaded machine can stall rank 0 in one of steps 3-7 for longer than
# the others' waiting together: then that step alone holds the loss. So
# the named iterations must be some of 3-7, none of the others.
if UNIT_MS=50 designed late_bursts 2; then
  expect wait_for_partner --symptom MPI_Recv --cause "rank 0" --cause-rank 0
  CHECKS=$((CHECKS + 1))
  if msg=$(python3 - "$JSON" 2>&1 <<'PY'
import json, re, sys
d = [d for d in json.load(open(sys.argv[1]))["diagnoses"] if d["kind"] == "wait_for_partner"][0]
for what, place, call in [("symptom", d["symptom"], "MPI_Recv"), ("late send", d["causes"][0], "MPI_Send")]:
    w = place.get("where", "")
    m = re.fullmatch(r"in iterations? ([0-9–, ]+) of 10 of the loop starting at (MPI_\w+) .*", w)
    assert m and m.group(2) == call, f"{what}: '{w}'"
    its = set()
    for part in m.group(1).split(", "):
        a, _, b = part.partition("–")
        its |= set(range(int(a), int(b or a) + 1))
    assert its and its <= set(range(3, 8)), f"{what}: iterations {sorted(its)} in '{w}'"
print("wait for partner in iterations of 3-7: " + d["symptom"]["where"])
PY
  ); then
    ok "$msg"
  else
    bad "late_bursts: $msg"
  fi
fi
designed large 2 && expect large_transfer --symptom MPI_Send \
  --where "in all 10 iterations of the loop starting at MPI_Send at main"
finish
