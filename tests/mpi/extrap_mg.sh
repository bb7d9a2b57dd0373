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
#  - The same idle levels exchanging through comm3_ex, a copy of the
#    exchange at call sites of its own (as NPB MG's coarse levels do), are
#    refused without a filter; with --lcs the coarse exchanges that not
#    every rank makes go, their Irecv and Isend together with the Waitall
#    that completes them, and 4, 8, 16 -> 32 must `diff` same as the real
#    32-rank run of the program that skips those exchanges (MODE + 4).
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
replays_back "mg3d" x-mgw-32.tf

# 3-D, 2 points a rank, 3 levels: the third level has one point per two
# ranks along each dimension, so at 16 ranks (x=2, y=2, z=4) ranks 0 and 8
# exchange over z at distance 8 while rank 4, in the same part of the grid
# (x:first y:first z:mid), idles: the refusal counts both ranks' calls at
# the node where the extra partner shows, and names the level: the ranks
# making rank 8's calls there are those whose coordinates are multiples of
# 2 along every dimension.
for n in 8 16 32; do rec mgi "$n" mg3d 0 0 2 3; done
fails_with "mg3d: idle ranks on a coarse level" \
  "mgi-16.tf: no row-major grid .* explains the [0-9]+ communication patterns of the 16 ranks; on the 4x2x2 grid MPI_Dims_create makes, ranks 4 and 8 lie in the same part \(x:first y:first z:mid\) but talk to different partners .*rank 8 meets [0-9]+ at node [0-9]+ \(MPI_I(recv|send) at [^()]*(\([^)]*\)[^()]*)*\), [0-9]+ calls on rank 8 against [0-9]+ on rank 4 \(rank 4 idles for the other [0-9]+\)\. The ranks making rank 8's [0-9]+ calls there are only the first rank along x and only the first rank along y and every 2nd rank along z \(coordinates multiples of x 2, y 2, z 2: ranks 0 8, 2 of 16\), a coarse level on which the others idle: .* record with enough points a rank that every rank keeps one on every level, give the level's exchanges call sites of their own and drop them with --lcs \(lossy\), or write a plugin" \
  mgi-8.tf mgi-16.tf mgi-32.tf --ranks 64 -o mgi-64.tf

for n in 4 8 16; do rec mgx "$n" mg3d 0 2 2 3 2; done
rec mgn 32 mg3d 0 4 2 3 2
# The program is 2-D: the refusal shows its 4x4 grid (a 4x2x2 one has
# smaller parts, but splits the program's rows over two dimensions), and
# the level's ranks (every 2nd along x and y), which alone reach comm3_ex:
# --lcs is the remedy.
fails_with "mg3d: coarse exchanges at call sites of their own, no filter" \
  "mgx-16.tf: no row-major grid .* on the 4x4 grid MPI_Dims_create makes, ranks 1 and 2 lie in the same part \(x:mid y:first\).* 4 calls on rank 2 against 0 on rank 1 .* are every 2nd rank along x and every 2nd rank along y \(coordinates multiples of x 2, y 2: ranks 0 2 8 10, 4 of 16\), .* drop the level's calls, which have call sites of their own, with --lcs \(lossy\)" \
  mgx-4.tf mgx-8.tf mgx-16.tf --ranks 32 --no-plugins -o mgx-32.tf
CHECKS=$((CHECKS + 1))
if "$TF" extrapolate mgx-4.tf mgx-8.tf mgx-16.tf --ranks 32 --lcs -o lx-32.tf > lcs.out 2> lcs.err &&
  d=$("$TF" diff lx-32.tf mgn-32.tf 2>&1) && [[ $d == "same: 32 ranks" ]]; then
  ok "mg3d --lcs: 4,8,16 -> 32 without the coarse exchanges: $d"
else
  bad "mg3d --lcs: $(cat lcs.err) ${d:-}"
fi
# At 8 ranks (4 rows of 2) ranks 0 and 4 exchange along y on the third
# level (one point per two ranks; along x a single active rank): 2
# directions x (Irecv, Isend, Waitall) x 2 entries a cycle x 2 cycles = 24
# calls each.
CHECKS=$((CHECKS + 1))
want="tracefold: weighted LCS: mgx-8.tf: dropped 48 of 1616 events (2.97 %); per rank: 0:24 1:0 2:0 3:0 4:24 5:0 6:0 7:0"
if grep -qxF "$want" lcs.err; then
  ok "mg3d --lcs: $want"
else
  bad "mg3d --lcs: expected '$want' in: $(cat lcs.err)"
fi
finish
