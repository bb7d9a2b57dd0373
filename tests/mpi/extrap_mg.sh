#!/usr/bin/env bash
# Issue 30, the multigrid case: app_mg3d runs a V-cycle over LEVELS levels
# with a six-direction halo exchange per schedule entry (one call site per
# direction) and an Allreduce per cycle, on MPI_Dims_create's grid of
# 2^k ranks.
#  - Every rank keeping a point on every level (2-D grid, 4 points a rank
#    and dimension, 3 levels: 4, 2, 1 points) is a periodic stencil whose
#    messages shrink level by level: weak and strong (a fixed 32x32x32
#    grid: faces 1024/S1, 1024/S2 at the finest level) 4, 8, 16 -> 32
#    must `tracefold diff` same as the real run, and the weak 32-rank
#    extrapolation must replay under mpirun.
#  - Coarse levels with fewer points than ranks along a dimension leave
#    ranks idle there and the others exchange with partners 2^l apart:
#    ranks of one part of the grid then talk to different partners, and
#    extrapolation refuses, naming two such ranks, their partners, the
#    node and the remedy.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 8 16 32; do
  rec mgw "$n" mg3d 0 0 4 3 2
  rec mgs "$n" mg3d 0 1 32 3 2
done
same_as_real "mg3d weak, 2-D, no idle level: 4,8,16 -> 32" x-mgw-32.tf mgw-32.tf \
  mgw-4.tf mgw-8.tf mgw-16.tf
same_as_real "mg3d strong, 2-D, no idle level: 4,8,16 -> 32" x-mgs-32.tf mgs-32.tf \
  mgs-4.tf mgs-8.tf mgs-16.tf

# The extrapolated 32-rank trace replays under mpirun, and recording the
# replay gives the same calls back.
CHECKS=$((CHECKS + 1))
limited replay.out replay.err "$TF" record -o replayed.tf -- \
  "${TRACEFOLD_MPIRUN:-mpirun}" -np 32 "$TF" replay x-mgw-32.tf
if [[ $LRC -ne 0 ]]; then
  bad "replay of the extrapolated 32-rank trace: exit $LRC"
  show_run replay.out replay.err
elif d=$("$TF" diff --ignore-callsites replayed.tf x-mgw-32.tf 2>&1); then
  ok "mg3d: replay of the extrapolated 32-rank trace, re-recorded: $d"
else
  bad "mg3d: replay of the extrapolated trace differs from it: $d"
fi

# 3-D, 2 points a rank, 3 levels: the third level has one point per two
# ranks along each dimension, so at 16 ranks (x=2, y=2, z=4) ranks 0 and 8
# exchange over z at distance 8 while rank 4, in the same part of the grid
# (x:first y:first z:mid), idles.
for n in 8 16 32; do rec mgi "$n" mg3d 0 0 2 3; done
fails_with "mg3d: idle ranks on a coarse level" \
  "mgi-16.tf: no row-major grid .* explains the [0-9]+ communication patterns of the 16 ranks; on the 4x2x2 grid MPI_Dims_create makes, ranks 4 and 8 lie in the same part \(x:first y:first z:mid\) but talk to different partners .*rank 8 meets [0-9]+ at node [0-9]+ \(MPI_I(recv|send) at .*\)\. .*record a configuration in which every rank of a part talks to the same partners" \
  mgi-8.tf mgi-16.tf mgi-32.tf --ranks 64 -o mgi-64.tf
finish
