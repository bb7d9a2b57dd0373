#!/usr/bin/env bash
# The recorder queues events and folds them in batches (TRACEFOLD_FOLD_BATCH,
# 1024 by default), and the test programs mostly record fewer events than
# that per rank: elsewhere their queue is folded in one go when the trace is
# written. Here a batch of 7 events, which divides none of the programs'
# loops, puts batch ends all through the loops: traces must stay lossless,
# and the partial traces written after a crash or MPI_Abort must hold what
# was folded and what was still queued.
TF=$1; SRC=$2; APPS=$3
export TRACEFOLD_FOLD_BATCH=7
source "$SRC/tests/apps/mpi_test_lib.bash"

check_lossless stencil3d 8 20 '^stencil3d: 8 ranks \(2x2x2\), 20 steps, checksum'
check_lossless stencil2d_nonperiodic 6 40 '^stencil2d nonperiodic: 6 ranks \(3x2\), 40 steps, checksum'
check_lossless pop 4 30 '^pop: 4 ranks \(2x2\), 30 steps, [0-9]+ solver iterations, checksum'
check_lossless master_worker 5 60 '^master_worker: 5 ranks, 60 tasks \(40 small, 20 big\), checksum'

for part in crash_partial abort_partial threads; do
  CHECKS=$((CHECKS + 1))
  if bash "$SRC/tests/mpi/$part.sh" "$TF" "$SRC" "$APPS" >"$WORK/$part.txt" 2>&1; then
    ok "$part.sh passes with batches of $TRACEFOLD_FOLD_BATCH"
  else
    bad "$part.sh fails with batches of $TRACEFOLD_FOLD_BATCH"
    show_run "$WORK/$part.txt"
  fi
done
finish
