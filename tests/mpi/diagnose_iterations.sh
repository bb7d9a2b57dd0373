#!/usr/bin/env bash
# Temporal context trees (docs/diagnose.md): `bursts` imbalances only
# iterations 3-7 of its 10-step loop (examples/diagnose/diag_problems.c).
# The diagnosis names those iterations of the loop for the symptom (the
# MPI_Allreduce) and the cause (work_a, from samples), and the JSON report
# holds rank 0's tree: the loop, its 10 iterations, work_a inside them.
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
finish
