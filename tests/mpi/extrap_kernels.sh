#!/usr/bin/env bash
# The extrapolation contract beyond the 2-D stencils: the 3-D periodic
# stencil (MPI_Dims_create grids 2x2x2, 3x2x2, 3x3x2, 3x3x3 -> 4x3x3, and
# between), the 2-D stencil under strong scaling (message sizes 720/S1),
# the FT-like all-to-all (3, 4, 5 -> 8, and between) and the wavefront
# sweep (4, 9, 16 -> 25, and between; 4, 6, 9 -> 12 refused). Each
# extrapolation must `tracefold diff` (call sites included) same as a real
# run at that count.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=6
source "$SRC/tests/mpi/extrap_lib.bash"

# The 3-D stencil at 8, 12, 18, 27 and 36 ranks (36: the largest this
# test records; 64 is in scripts/bench-extrap.sh).
for n in 8 12 18 27 36; do rec s3 "$n" stencil3d; done
same_as_real "stencil3d: 8,12,18,27 -> 36" x-s3-36.tf s3-36.tf s3-8.tf s3-12.tf s3-18.tf s3-27.tf
same_as_real "stencil3d: 8,12,27,36 -> 18 (between)" b-s3-18.tf s3-18.tf \
  s3-8.tf s3-12.tf s3-27.tf s3-36.tf
same_as_real "stencil3d: 12,18,27,36 -> 8 (below)" b-s3-8.tf s3-8.tf \
  s3-12.tf s3-18.tf s3-27.tf s3-36.tf
fails_with "stencil3d: a 3-D grid needs 4 rank counts" "a 3-D grid needs traces of at least 4" \
  s3-12.tf s3-18.tf s3-27.tf --ranks 36 -o three.tf

# Strong scaling: the 2-D periodic stencil on a 720x720 domain, so the
# halo messages hold 720/S1 values (360, 240, 180 at 4, 9, 16 ranks): the
# counts must come out as 144 at 25 ranks, exactly.
for n in 4 9 16 25; do rec strong "$n" stencil2d_periodic 0 0 720; done
same_as_real "strong scaling: 4,9,16 -> 25" x-strong-25.tf strong-25.tf \
  strong-4.tf strong-9.tf strong-16.tf
CHECKS=$((CHECKS + 1))
"$TF" expand x-strong-25.tf -r 12 > strong-r12.txt 2>&1 || true
"$TF" extrapolate strong-4.tf strong-9.tf strong-16.tf --ranks 25 -o e.tf --explain \
  > strong-explain.txt 2>&1 || true
if grep -q "MPI_Isend .*count=144 " strong-r12.txt &&
  grep -q "field count: \\[720/S1\\]\*" strong-explain.txt; then
  ok "strong scaling: message size 720/S1 (144 values at 5x5)"
else
  bad "strong scaling: the message size is not 720/S1"
fi

# The wavefront sweep: its merged node lists differ between rank counts
# (corner, edge and interior ranks skip different receives, and the merge
# joins them differently at each count), so it goes cell by cell.
for n in 4 6 9 16 25; do rec sw "$n" sweep3d; done
same_as_real "sweep3d: 4,9,16 -> 25" x-sw-25.tf sw-25.tf sw-4.tf sw-9.tf sw-16.tf
# 4 (2x2), 6 (3x2), 9 (3x3) -> 12: cell by cell, the middle column is read
# from the 9-rank run alone; refused (a trace with rank 1's peer 9 where
# the real 12-rank run has 0 was written before).
fails_with "sweep3d: 4,6,9 -> 12 (a cell one input has)" \
  "ranks at x:mid y:first: only sw-9.tf has ranks there, and cell by cell one input cannot" \
  sw-4.tf sw-6.tf sw-9.tf --ranks 12 -o sw-12.tf
same_as_real "sweep3d: 4,9,25 -> 16 (between)" b-sw-16.tf sw-16.tf sw-4.tf sw-9.tf sw-25.tf
CHECKS=$((CHECKS + 1))
if grep -q "extrapolating cell by cell" <("$TF" extrapolate sw-4.tf sw-9.tf sw-16.tf --ranks 25 \
  -o e.tf --explain 2>&1); then
  ok "sweep3d: --explain says it went cell by cell"
else
  bad "sweep3d: --explain does not say it went cell by cell"
fi

# FT-like: only collectives (an Alltoall and Allreduces), a 1-D "grid".
for n in 3 4 5 8; do rec ft "$n" ft; done
same_as_real "ft: 3,4,5 -> 8" x-ft-8.tf ft-8.tf ft-3.tf ft-4.tf ft-5.tf
same_as_real "ft: 3,4,8 -> 5 (between)" b-ft-5.tf ft-5.tf ft-3.tf ft-4.tf ft-8.tf
finish
