#!/usr/bin/env bash
# Records the stencil-type programs (2D periodic/non-periodic, 3D, C++,
# Sweep3D-like wavefront) under mpirun and checks every trace expands to
# exactly the raw logs.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

check_lossless stencil2d_periodic 4 60 '^stencil2d periodic: 4 ranks \(2x2\), 60 steps, checksum'
check_lossless stencil2d_periodic 6 40 '^stencil2d periodic: 6 ranks \(3x2\), 40 steps, checksum'
check_lossless stencil2d_nonperiodic 6 40 '^stencil2d nonperiodic: 6 ranks \(3x2\), 40 steps, checksum'
check_lossless stencil2d_nonperiodic 9 30 '^stencil2d nonperiodic: 9 ranks \(3x3\), 30 steps, checksum'
check_lossless stencil3d 8 20 '^stencil3d: 8 ranks \(2x2x2\), 20 steps, checksum'
check_lossless stencil3d 3 20 '^stencil3d: 3 ranks \(3x1x1\), 20 steps, checksum'
check_lossless stencil_cxx 4 40 '^stencil_cxx: 4 ranks, 40 steps, checksum'
check_lossless sweep3d 4 6 '^sweep3d: 4 ranks \(2x2\), 6 iterations, checksum'
check_lossless sweep3d 6 6 '^sweep3d: 6 ranks \(3x2\), 6 iterations, checksum'
finish
