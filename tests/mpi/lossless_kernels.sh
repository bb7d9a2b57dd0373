#!/usr/bin/env bash
# Records the NPB/POP-like kernels (CG with power-of-two Sendrecv partners,
# FT with Alltoall, LU with MPI_ANY_SOURCE receives, the irregular POP-like
# time step, a master-worker farm with ANY_SOURCE/ANY_TAG) and checks every
# trace expands to exactly the raw logs.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

check_lossless cg 2 6 '^cg: 2 ranks \(1x2\), 6 steps, checksum'
check_lossless cg 8 6 '^cg: 8 ranks \(2x4\), 6 steps, checksum'
check_lossless ft 4 20 '^ft: 4 ranks, 20 steps, checksum'
check_lossless ft 7 10 '^ft: 7 ranks, 10 steps, checksum'
check_lossless lu 4 8 '^lu: 4 ranks \(2x2\), 8 iterations, checksum'
check_lossless lu 6 8 '^lu: 6 ranks \(3x2\), 8 iterations, checksum'
check_lossless pop 6 40 '^pop: 6 ranks \(3x2\), 40 steps, [0-9]+ solver iterations, checksum'
check_lossless pop 4 30 '^pop: 4 ranks \(2x2\), 30 steps, [0-9]+ solver iterations, checksum'
check_lossless master_worker 5 60 '^master_worker: 5 ranks, 60 tasks \(40 small, 20 big\), checksum'
check_lossless master_worker 2 10 '^master_worker: 2 ranks, 10 tasks'
finish
