#!/usr/bin/env bash
# `tracefold analyze` on point-to-point waits injected by sleeping
# (tests/apps/waits_inject.c): each pattern within 5 % of the injected total,
# on the right rank and call path.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"

if inject late_sender 2; then
  expect severity late_sender 1 MPI_Recv
  expect absent late_receiver
  expect absent wrong_order
fi
if inject late_sender_nb 2; then
  # Waited for in MPI_Waitall, attributed to the Irecv that posted it.
  expect severity late_sender 1 MPI_Irecv
fi
if inject late_receiver 2; then
  expect severity late_receiver 0 MPI_Ssend
fi
if inject wrong_order 2; then
  expect severity wrong_order 1 MPI_Recv
  expect severity late_sender 1 MPI_Recv
fi
finish
