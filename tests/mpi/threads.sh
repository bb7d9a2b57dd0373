#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE: two threads per rank call MPI at the same time. The
# recorder serializes them, so the trace must still be a faithful record of
# the calls in the order the recorder saw them (the raw log), the program's
# output must not change, and nothing may crash.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
"$MPIRUN" -np 2 "$APPS/app_threads" 200 > plain.txt
"$TF" record -o t.tf --raw-log raw -- "$MPIRUN" -np 2 "$APPS/app_threads" 200 > traced.txt 2> err.txt
cmp plain.txt traced.txt
if grep -q "not provided" plain.txt; then
  echo "this MPI does not provide MPI_THREAD_MULTIPLE: only the unchanged output was checked"
  exit 0
fi
"$TF" diff raw t.tf
# 2 threads x 200 steps x (Sendrecv + Barrier) per rank, plus the main thread's calls.
calls=$(grep -c "^MPI_Sendrecv " raw/rank-0.txt)
[[ $calls -eq 400 ]] || { echo "FAIL: $calls Sendrecv events on rank 0, expected 400" >&2; exit 1; }
if grep -q "tracing is off" err.txt; then cat err.txt >&2; exit 1; fi
