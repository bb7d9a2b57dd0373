#!/usr/bin/env bash
# `tracefold diagnose` and clocks: the imbalance program recorded with rank
# 1's timeline clock 5 s ahead and 20 ppm fast (TRACEFOLD_TEST_CLOCK_SKEW_NS,
# docs/recording.md) gives the same phases and the same diagnosis as the
# designed problem, and the constant-exit-gap check reports a residual
# gap of a few milliseconds at most (of the 5 s injected) once the
# recorder's offsets are applied: the exits of a synchronisation on a
# loaded machine are that far apart anyway.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"

export TRACEFOLD_TEST_CLOCK_SKEW_NS=1:5000000000:20000
if TAG=skewed designed imbalance 4; then
  expect load_imbalance --symptom MPI_Allreduce --cause-rank 3
  CHECKS=$((CHECKS + 1))
  phases=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(str(p["instances"]) for p in r["phases"]))' "$JSON")
  if [[ $phases == "$STEPS 1" ]]; then
    ok "phases: $STEPS Allreduce-closed instances and the tail"
  else
    bad "phases: '$phases', expected '$STEPS 1'"
  fi
  CHECKS=$((CHECKS + 1))
  gap=$(sed -n 's/.*largest median gap to rank 0 is \(-\?[0-9]*\) us.*/\1/p' "$TEXT")
  if [[ -n $gap ]] && ((${gap#-} < 5000)); then
    ok "constant-exit-gap residual: $gap us"
  else
    bad "constant-exit-gap residual '$gap' us (expected under 5000)"; tail -n 4 "$TEXT" >&2
  fi
fi
finish
