#!/usr/bin/env bash
# Issue 30, a multigrid whose coarse levels leave ranks idle, extrapolated
# by the per-level rank-predicate model: app_mg3d on MPI_Dims_create's 2-D
# grid, 2 points a rank and dimension, 3 levels (2, 1, then one point per
# two ranks along each dimension). On the third level only the ranks at
# even coordinates work, and they exchange with the ones 2 apart, at the
# same call sites as the finer levels. 16 (4x4), 32 (8x4) and 64 (8x8)
# ranks keep at least two busy ranks along each dimension there, so every
# input shows the level's exchanges in both directions.
#  - 16, 32, 64 -> 128 must `tracefold diff` same as the real 128-rank run,
#    and replay under mpirun;
#  - the same inputs extrapolate to 1,024 and 16,384 ranks in seconds, the
#    level keeping a quarter of the ranks;
#  - with 8 ranks among the inputs (a single busy rank along x there) the
#    model says why it does not apply, after the stencil path's refusal.
TF=$1; SRC=$2; APPS=$3
RUN_TIMEOUT=${RUN_TIMEOUT:-240}  # 128-rank runs on two shared cores
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 8 16 32 64 128; do rec mgl "$n" mg3d 0 0 2 3 2; done
same_as_real "mg3d, idle coarse level: 16,32,64 -> 128" x-mgl-128.tf mgl-128.tf \
  mgl-16.tf mgl-32.tf mgl-64.tf
# The extrapolated 128-rank trace replays under mpirun, and recording the
# replay gives the same calls back.
replays_back "mg3d" x-mgl-128.tf

CHECKS=$((CHECKS + 1))
if grep -q "the coarsest level (the only idle one): busy ranks at coordinates multiples of x every 2 (fixed stride) -> 2, y every 2 (fixed stride) -> 2" \
  <("$TF" extrapolate mgl-16.tf mgl-32.tf mgl-64.tf --ranks 128 -o e-128.tf --explain 2>&1); then
  ok "mg3d: the level's stride laws are explained"
else
  bad "mg3d: --explain does not give the level's stride laws"
fi

for big in 1024 16384; do
  CHECKS=$((CHECKS + 1))
  start=$(date +%s.%N)
  if "$TF" extrapolate mgl-16.tf mgl-32.tf mgl-64.tf --ranks "$big" -o "x-$big.tf" \
    > "x-$big.out" 2>&1; then
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    # A quarter of the ranks make the level's calls: rank 2 of the first
    # row does, rank 1 does not.
    busy=$("$TF" expand -r 2 "x-$big.tf" | wc -l)
    idle=$("$TF" expand -r 1 "x-$big.tf" | wc -l)
    if (($(echo "$secs < 60" | bc))) && ((busy > idle)); then
      ok "mg3d: extrapolated to $big ranks in $secs s (rank 2: $busy calls, rank 1: $idle)"
    else
      bad "mg3d: $big ranks took $secs s, rank 2 makes $busy calls, rank 1 $idle"
    fi
  else
    bad "mg3d: extrapolation to $big ranks failed: $(cat "x-$big.out")"
  fi
done

fails_with "mg3d: a single busy rank along x in one input" \
  "mgl-16.tf: no row-major grid .*the per-level model does not explain it either: mgl-8.tf: a coarse level has one busy rank along x \(4x2\), so its exchanges along it are missing there" \
  mgl-8.tf mgl-16.tf mgl-32.tf --ranks 64 --no-plugins -o mgl-x64.tf
finish
