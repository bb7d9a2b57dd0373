#!/usr/bin/env bash
# tracefold patterns counts a pattern's occurrences also as iterations of
# the folded trace's loop they run in, with its trip counts: stencil2d
# (periodic, 4 ranks) recorded with 5 and with 7 steps reports its step as
# 5 and 7 iterations of one loop of that many trips, whatever its repeat's
# own occurrences; mg_vcycle with 3 cycles reports its V-cycle halo as 3
# iterations, and its coarse solve, a whole loop of 3 reductions run once a
# cycle, as 3 iterations of the cycle loop too.
source "$2/tests/apps/patterns_lib.bash"

for steps in 5 7; do
  shapes stencil2d_periodic 4 "$steps"
  mv stencil2d_periodic-4.txt "st-$steps.txt"
  [[ $(grep -c "^  #1 in main: .*, $steps loop iterations (trips $steps)\$" "st-$steps.txt") -eq 2 ]] ||
    fail "stencil2d with $steps steps: the step should be $steps iterations of one loop on both groups"
done

shapes mg_vcycle 4 3
[[ $(grep -c '^  #[0-9] in give: 72 events, 3 times (at event [0-9 ]*), 3 loop iterations (trips 3)$' \
  mg_vcycle-4.txt) -eq 4 ]] || fail "mg_vcycle: give() should be 3 iterations of the cycle loop"
[[ $(grep -c '^  #3 in coarse_solve: 3 events, 3 times (at event [0-9 ]*), 3 loop iterations (trips 3)$' \
  mg_vcycle-4.txt) -eq 2 ]] || fail "mg_vcycle: the coarse solve should be 3 iterations of the cycle loop"
"$TF" patterns --json mg_vcycle-4.tf > mg.json || fail "--json"
python3 - mg.json <<'PY' || fail "--json: loop_trips"
import json, sys
doc = json.load(open(sys.argv[1]))
pats = [p for g in doc["groups"] for p in g["patterns"] if p["context"] == "coarse_solve"]
assert pats and all(p["loop_trips"] == [{"trips": 3, "entries": 1}] and p["iterations"] == 3
                    for p in pats), pats
PY
echo "ok"
