#!/usr/bin/env bash
# Issue 30, the 3-D multigrid (app_mg3d) at the counts this machine records
# quickly: MPI_Dims_create keeps a side of 2 along x up to 32 ranks
# (2x2x2, 4x2x2, 4x4x2), so no input up to 32 ranks shows how a coarse
# level with idle ranks behaves along x at the 4 ranks 64 has there. The
# per-level model refuses, and each refusal names the count that would
# decide:
#  - weak scaling (2 points a rank, 3 levels): the third level has one busy
#    rank along x and y at 16 ranks, so its exchanges there are in no input;
#    the smallest count with two busy ranks along both is 64 (4x4x4);
#  - strong scaling (a fixed 4^3 grid, 2 levels): the coarse level keeps all
#    of x's 2 ranks busy at 16 and 32, which a fixed stride 1 and a fixed
#    point count 2 explain alike, parting at 4 ranks along x; 8 ranks,
#    where no rank idles yet, has fewer idle levels than the others.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 8 16 32; do rec mgw "$n" mg3d 0 0 2 3; done
for n in 8 16 32; do rec mgs "$n" mg3d 0 1 4 2; done

fails_with "mg3d 3-D weak: one busy rank along x and y at 16" \
  "the per-level model does not explain it either: mgw-16.tf: a coarse level has one busy rank along x and y \(4x2x2\), so its exchanges along them are missing there: .*\(at least 4 along x, 4 along y; the smallest count with such a grid is 64 ranks \(4x4x4\)\)" \
  mgw-8.tf mgw-16.tf mgw-32.tf --ranks 64 --no-plugins -o mgw-x64.tf
fails_with "mg3d 3-D strong: x's stride law is in no input" \
  "coarse level 1, stride along x: stride 1 \(2 busy\) in every input, all of one side: .*part at 4; give an input with another side along it \(the smallest count with more ranks along x than every input is 64 ranks \(4x4x4\)\)" \
  mgs-16.tf mgs-32.tf --ranks 64 --no-plugins -o mgs-x64.tf
fails_with "mg3d 3-D strong: no idle rank at 8" \
  "mgs-8.tf has 0 coarse level\(s\) with idle ranks, mgs-32.tf has 1: .*under strong scaling" \
  mgs-8.tf mgs-16.tf mgs-32.tf --ranks 64 --no-plugins -o mgs-y64.tf
finish
