#!/usr/bin/env bash
# Communicator creation that gives some ranks MPI_COMM_NULL: rank 0 splits
# with MPI_UNDEFINED, then all ranks split MPI_COMM_WORLD into halves and
# dup them (tests/apps/comm_null.c). Every creation is collective over its
# parent, so each created communicator needs one trace-wide id on all of
# its members, and the ids of different communicators must not collide.
# The run must finish (a failed merge at MPI_Finalize must not hang it),
# write a trace and be lossless.
TF=$1; SRC=$2; APPS=$3
RUN_TIMEOUT=30  # runs take about 1 s; a hang is still caught
source "$SRC/tests/apps/mpi_test_lib.bash"

t0=$SECONDS
record comm_null 4 10
if [[ $RC -eq 124 || $RC -eq 137 ]]; then
  bad "comm_null at 4 ranks: the run hung and was killed after $((SECONDS - t0)) s"
fi
if grep -q "merging the trace failed" "$DIR/err.txt"; then
  bad "comm_null at 4 ranks: $(grep -m1 'merging the trace failed' "$DIR/err.txt")"
fi
# The raw logs are complete even when the run hangs at MPI_Finalize: fold
# them offline to see whether the ids agree.
frc=0
"$TF" fold "$DIR/raw" -o "$WORK/folded.tf" >"$WORK/fold.txt" 2>&1 || frc=$?
if [[ $frc -ne 0 ]]; then
  bad "comm_null at 4 ranks: the raw logs do not fold: $(cat "$WORK/fold.txt")"
  grep -h -E '^comm |MPI_Comm_(split|dup) ' "$DIR"/raw/rank-0.txt "$DIR"/raw/rank-1.txt | cut -c1-100 >&2 || true
fi
if [[ $RC -eq 0 ]]; then
  check_lossless comm_null 4 10 '^comm_null: 4 ranks, 10 steps, checksum'
fi
finish
