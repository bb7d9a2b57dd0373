#!/usr/bin/env bash
# `tracefold diagnose` and clocks: the imbalance program recorded with rank
# 1's timeline clock 5 s ahead and 20 ppm fast (TRACEFOLD_TEST_CLOCK_SKEW_NS,
# docs/recording.md) gives the same phases and the same diagnosis as the
# designed problem, and the constant-exit-gap check reports a residual
# gap of a few milliseconds at most (of the 5 s injected) once the
# recorder's offsets are applied: the exits of a synchronisation on a
# loaded machine are that far apart anyway. A run aborted before
# MPI_Finalize has no offset measured at the end: there the exit gaps
# estimate rank 1's drift (the fallback), and the diagnosis is the same,
# serial or parallel.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"
needs_yielding_waits 4

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
# An aborted run: no rank measures its offset at MPI_Finalize, so rank 1's
# drift (here 1 %, 10000 ppm) is left to the constant-exit-gap fallback,
# which must find it and correct it: without, its exits drift by 10 ms a
# second past the others' and no Allreduce reads as a synchronisation.
export TRACEFOLD_TEST_CLOCK_SKEW_NS=1:5000000000:10000
d="$WORK/aborted"
mkdir -p "$d"
CHECKS=$((CHECKS + 1))
limited "$d/out.txt" "$d/err.txt" "${PRIO[@]}" "$TF" record --timeline -o "$d/t.tf" -- \
  "$MPIRUN" -np 4 "$APPS/app_diag_problems" 20 aborted 20
DESIGNED=$(sed -n 's/^diag: aborted designed \([0-9.]*\)$/\1/p' "$d/out.txt")
if [[ $LRC -eq 0 || -z $DESIGNED ]]; then
  bad "aborted run: exit $LRC (expected the abort's), designed '$DESIGNED'"; show_run "$d/out.txt" "$d/err.txt"
elif ! "$TF" merge "$d/t.tf.partial" -o "$d/t.tf" 2>"$d/merge.txt" ||
  ! "$TF" diagnose "$d/t.tf" -o "$d/report.json" 2>"$d/diag.txt" ||
  ! "$TF" diagnose "$d/t.tf" >"$d/report.txt" 2>>"$d/diag.txt"; then
  bad "aborted run: merge or diagnose failed"; show_run "$d/merge.txt" "$d/diag.txt"
else
  ok "aborted run recorded, merged and diagnosed"
  JSON="$d/report.json" TEXT="$d/report.txt"
  expect load_imbalance --symptom MPI_Allreduce --cause-rank 3
  CHECKS=$((CHECKS + 1))
  phases=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(str(p["instances"]) for p in r["phases"]))' "$JSON")
  ppm=$(sed -n 's/.*corrected: rank 1 +\([0-9]*\) ppm.*/\1/p' "$TEXT")
  if [[ $phases == "20 1" && -n $ppm ]] && ((ppm > 8000 && ppm < 12000)); then
    ok "aborted run: rank 1's drift estimated at $ppm ppm (10000 injected), all 20 phases found"
  else
    bad "aborted run: phases '$phases' (expected '20 1'), rank 1's drift '$ppm' ppm (expected 8000-12000)"
    grep -A1 "end without" "$TEXT" >&2 || tail -n 6 "$TEXT" >&2
  fi
fi
# The same with samples: the parallel diagnosis corrects rank 1's samples
# by the drift rank 0 found, on the analysis rank that digests them (of 3
# analysis ranks, rank 1 is analysis rank 1's), and writes the serial report.
d="$WORK/aborted-sampled"
mkdir -p "$d"
CHECKS=$((CHECKS + 1))
limited "$d/out.txt" "$d/err.txt" "${PRIO[@]}" "$TF" record --sample 1ms -o "$d/t.tf" -- \
  "$MPIRUN" -np 4 "$APPS/app_diag_problems" 20 aborted 20
if [[ $LRC -eq 0 ]] || ! "$TF" merge "$d/t.tf.partial" -o "$d/t.tf" 2>"$d/merge.txt" ||
  ! "$TF" diagnose "$d/t.tf" -o "$d/report.json" 2>"$d/diag.txt" ||
  ! "$TF" diagnose "$d/t.tf" >"$d/report.txt" 2>>"$d/diag.txt"; then
  bad "sampled aborted run: exit $LRC (expected the abort's), or merge or diagnose failed"
  show_run "$d/err.txt" "$d/merge.txt" "$d/diag.txt"
else
  limited "$d/par.out" "$d/par.err" "$MPIRUN" -np 3 "$TF" diagnose "$d/t.tf" -o "$d/par.json"
  drift=$(grep -o "corrected: rank 1 +[0-9]* ppm" "$d/report.txt" || echo "no drift corrected")
  if [[ $LRC -ne 0 ]]; then
    bad "sampled aborted run: parallel diagnose exited $LRC"; show_run "$d/par.err"
  elif ! cmp -s "$d/report.json" "$d/par.json"; then
    bad "sampled aborted run ($drift): the report on 3 analysis ranks differs from the serial one"
    diff "$d/report.json" "$d/par.json" | head -20 >&2 || true
  else
    ok "sampled aborted run ($drift): 3 analysis ranks give the serial report"
  fi
fi
finish
