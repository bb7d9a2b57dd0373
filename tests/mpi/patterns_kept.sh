#!/usr/bin/env bash
# tracefold patterns --truth on kept recordings whose timing once led the
# analysis astray (tests/data/patterns/, symbolized, so no binary is
# needed): the same bars as patterns_truth.sh, on a trace that no longer
# depends on the run.
#
# amg_like-16-mpich.tf: app_amg_like 2 at 16 ranks under MPICH. Its polls
# took messages in an order that changed from cycle to cycle, so ranks
# 0,4,8,12 repeat only pieces of their V-cycle, and the pieces of the
# coarse level (tags 102 and 103) were a global pattern of their own, an
# all-to-all on those ranks (precision 0.5). They run in the same loop
# iterations as the fine levels: one irregular neighbourhood.
source "$2/tests/apps/patterns_lib.bash"
TRUTH=$2/tests/mpi/patterns_truth
DATA=$2/tests/data/patterns

"$TF" patterns --truth "$TRUTH/amg_like-16.truth" "$DATA/amg_like-16-mpich.tf" > amg.txt ||
  fail "patterns --truth on amg_like-16-mpich.tf"
"$TF" patterns --json --truth "$TRUTH/amg_like-16.truth" "$DATA/amg_like-16-mpich.tf" > amg.json ||
  fail "patterns --json --truth on amg_like-16-mpich.tf"
sed -n '/^truth /,$p' amg.txt | cut -c1-200
python3 - amg.json <<'PY' || fail "amg_like-16-mpich: figures"
import json, sys
t = json.load(open(sys.argv[1]))["truth"]
want = {"precision": 0.9, "recall": 0.95}
for key, bar in want.items():
    if t[key] < bar - 1e-9:
        sys.exit(f"{key} is {t[key]}, expected >= {bar}")
for key in ("naming", "coverage"):
    if abs(t[key] - 1) > 1e-4:
        sys.exit(f"{key} is {t[key]}, expected 1")
PY
expect amg.txt '  vcycle = G1: ranks 0–15, overlap 100.0%, irregular neighbourhood, named'
if grep -q 'not expected' amg.txt; then fail "a pattern the truth does not expect: $(grep 'not expected' amg.txt)"; fi
echo "ok"
