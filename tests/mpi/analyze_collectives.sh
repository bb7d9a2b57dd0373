#!/usr/bin/env bash
# `tracefold analyze` on collective waits injected by sleeping
# (tests/apps/waits_inject.c): Wait at Barrier, Wait at N x N, Late
# Broadcast, Early Reduce, and the same for nonblocking collectives (Ibarrier,
# Iallreduce, Ibcast completed by MPI_Wait), each within 5 % of the injected
# total on the waiting ranks and at the collective's call path.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"

inject barrier 3 && expect severity wait_barrier 0,2 MPI_Barrier
inject nxn 3 && expect severity wait_nxn 0,2 MPI_Allreduce
inject bcast 3 && expect severity late_broadcast 1,2 MPI_Bcast
inject reduce 2 && expect severity early_reduce 0 MPI_Reduce
# Nonblocking: the waiting is in MPI_Wait, attributed to the call that
# started the collective.
inject ibarrier 3 && expect severity wait_barrier 0,2 MPI_Ibarrier
inject iallreduce 3 && expect severity wait_nxn 0,2 MPI_Iallreduce
inject ibcast 3 && expect severity late_broadcast 1,2 MPI_Ibcast
finish
