#!/usr/bin/env bash
# Critical path and delay costs (`tracefold analyze`): in a 4-rank chain
# (tests/apps/waits_inject.c `chain`) where rank 2 alone computes 5 ms more
# per step, rank 3 waits (Late Sender), the delay cost of that waiting lands
# on rank 2's computation, and the critical path runs through it.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"

if inject chain 4; then
  expect severity late_sender 3 MPI_Recv
  expect delay 2 "computation before MPI_Send"
  expect critical 2 "computation before MPI_Send"
  if grep -q "^delay costs" "$TEXT" && grep -q "^critical path" "$TEXT"; then
    ok "text report has the critical path and delay costs"
  else
    bad "text report misses critical path or delay costs"; cat "$TEXT" >&2
  fi
fi
finish
