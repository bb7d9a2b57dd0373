#!/usr/bin/env bash
# `mpirun -np K tracefold diagnose` (the parallel diagnosis,
# src/analysis/diagnose/parallel/) writes byte for byte the text and JSON
# reports of the serial `tracefold diagnose`, for K = 1 (which is the serial
# command), 2, 3 (shares of unequal size) and 4 analysis ranks, on runs of
# examples/diagnose/diag_problems.c with and without samples (imbalance,
# MPMD, wait for partner; 3, 4 and 6 recorded ranks) and of 4- and 6-rank
# halo exchanges; more analysis ranks than recorded ones are
# refused with both numbers.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"

# same_reports TAG K...: the serial reports of $WORK/TAG against the
# parallel ones on K analysis ranks.
same_reports() {
  local tag=$1 d="$WORK/$1" k
  shift
  for k in "$@"; do
    CHECKS=$((CHECKS + 1))
    limited "$d/par$k.txt" "$d/par$k-err.txt" "$MPIRUN" -np "$k" "$TF" diagnose "$d/t.tf"
    if [[ $LRC -ne 0 ]]; then
      bad "$tag: text diagnosis on $k analysis ranks exited $LRC"
      show_run "$d/par$k-err.txt"
      continue
    fi
    limited "$d/par$k-out.txt" "$d/par$k-json-err.txt" "$MPIRUN" -np "$k" "$TF" diagnose \
      "$d/t.tf" -o "$d/par$k.json"
    if [[ $LRC -ne 0 ]]; then
      bad "$tag: JSON diagnosis on $k analysis ranks exited $LRC"
      show_run "$d/par$k-json-err.txt"
      continue
    fi
    # K > 1 really ran the MPI program: it says on how many ranks.
    if ((k > 1)) && ! grep -q " on $k analysis ranks written to" "$d/par$k-json-err.txt"; then
      bad "$tag: -np $k did not run the parallel diagnosis"
      show_run "$d/par$k-json-err.txt"
    elif ! cmp -s "$TEXT" "$d/par$k.txt"; then
      bad "$tag: text report on $k analysis ranks differs from the serial one"
      diff "$TEXT" "$d/par$k.txt" | head -20 >&2 || true
    elif ! cmp -s "$JSON" "$d/par$k.json"; then
      bad "$tag: JSON report on $k analysis ranks differs from the serial one"
      diff "$JSON" "$d/par$k.json" | head -20 >&2 || true
    else
      ok "$tag: -np $k gives the serial reports ($(wc -l <"$TEXT") text lines, $(wc -c <"$JSON") JSON bytes)"
    fi
  done
}

designed imbalance 4 --sample 1ms && same_reports imbalance 1 2 3 4
designed mpmd 4 --sample 1ms && same_reports mpmd 2 4
TAG=calls designed imbalance 4 && same_reports calls 2 4
# Six recorded ranks: 4 analysis ranks take shares of 1, 2, 1 and 2, 3 take
# two each; a share cut in the wrong place digests a rank against another
# rank's events.
TAG=six designed imbalance 6 --sample 1ms && same_reports six 2 3 4
TAG=six_calls designed mpmd 6 && same_reports six_calls 3
# A halo exchange recorded on NP ranks without samples, diagnosed serially,
# then on each analysis rank count K given: the reports must be the same.
stencil_case() {
  local tag=$1 np=$2 d="$WORK/$1"
  shift 2
  mkdir -p "$d"
  CHECKS=$((CHECKS + 1))
  limited "$d/out.txt" "$d/err.txt" "$TF" record --timeline \
    -o "$d/t.tf" -- "$MPIRUN" -np "$np" "$APPS/app_stencil2d_nonperiodic" 300
  if [[ $LRC -ne 0 ]]; then
    bad "$tag: recording exited $LRC"
    show_run "$d/out.txt" "$d/err.txt"
  elif ! "$TF" diagnose "$d/t.tf" -o "$d/report.json" 2>"$d/diag-err.txt" ||
    ! "$TF" diagnose "$d/t.tf" >"$d/report.txt" 2>>"$d/diag-err.txt"; then
    bad "$tag: tracefold diagnose failed"
    show_run "$d/diag-err.txt"
  else
    ok "$tag: recorded and diagnosed"
    JSON="$d/report.json" TEXT="$d/report.txt" same_reports "$tag" "$@"
  fi
}
# 4 recorded ranks: thousands of matched messages (the clock repair and
# the wait states share one match made on rank 0's events).
stencil_case stencil 4 2 3
# 6 recorded ranks (a 3x2 grid): 4 analysis ranks hold shares of 1, 2, 1
# and 2 ranks, and each matches the messages its share receives, from
# sends routed to it by the other shares: a send routed to the wrong
# share, or lost, changes the wait states and the report.
stencil_case stencil6 6 4 5
# Wait for partner on 3 recorded ranks: 2 analysis ranks digest shares of
# 2 and 1, 3 one each.
if designed late 3 --sample 1ms; then
  same_reports late 2 3
  # Four analysis ranks for a recording of three: refused, with both numbers.
  CHECKS=$((CHECKS + 1))
  limited "$WORK/refused.txt" "$WORK/refused-err.txt" "$MPIRUN" -np 4 "$TF" diagnose \
    "$WORK/late/t.tf"
  if [[ $LRC -eq 0 || $LRC -eq 124 ]]; then
    bad "-np 4 on a 3-rank recording: exit $LRC, not refused"
  elif ! grep -q "analysis started with 4 ranks, the recording has 3" "$WORK/refused-err.txt"; then
    bad "-np 4 on a 3-rank recording: the refusal does not give both numbers"
    show_run "$WORK/refused-err.txt"
  else
    ok "-np 4 on a 3-rank recording refused: $(grep -m1 'analysis started' "$WORK/refused-err.txt")"
  fi
fi
finish
