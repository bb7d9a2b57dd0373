#!/usr/bin/env bash
# Issue 30, a multigrid on a grid with edges (Dirichlet boundaries) whose
# coarse levels leave ranks idle, extrapolated by the per-level model:
# app_mg3d with MODE 8 on MPI_Dims_create's 2-D grid, 2 points a rank and
# dimension, 3 levels. A neighbour beyond an edge is MPI_PROC_NULL, so the
# first and last busy ranks along a side have one partner fewer, and on
# the third level (busy ranks at even coordinates) the last busy one is
# the second-last rank of its row: which rank is at an edge depends on the
# level's stride.
#  - 16, 32, 64 -> 128 and 16, 32, 128 -> 64 must `tracefold diff` same as
#    the real runs, and the 64-rank extrapolation replays under mpirun;
#  - --explain says the grid has edges;
#  - with 8 ranks among the inputs (one busy rank along x on the third
#    level) the model says why it does not apply.
TF=$1; SRC=$2; APPS=$3
RUN_TIMEOUT=${RUN_TIMEOUT:-240}  # 128-rank runs on two shared cores
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 8 16 32 64 128; do rec mge "$n" mg3d 0 8 2 3 2; done
same_as_real "mg3d with edges, idle coarse level: 16,32,64 -> 128" x-mge-128.tf mge-128.tf \
  mge-16.tf mge-32.tf mge-64.tf
same_as_real "mg3d with edges, idle coarse level: 16,32,128 -> 64" x-mge-64.tf mge-64.tf \
  mge-16.tf mge-32.tf mge-128.tf

replays_back "mg3d with edges" x-mge-64.tf

CHECKS=$((CHECKS + 1))
# (grep reads all of it: a pipe cut short would fail under pipefail)
if grep -q "one class of ranks per number of busy levels (a grid with edges: MPI_PROC_NULL beyond them" \
  <("$TF" extrapolate mge-16.tf mge-32.tf mge-64.tf --ranks 128 -o e-128.tf --explain 2>&1); then
  ok "mg3d with edges: --explain names the grid with edges"
else
  bad "mg3d with edges: --explain does not name the grid with edges"
fi

fails_with "mg3d with edges: a single busy rank along x in one input" \
  "the per-level model does not explain it either: mge-8.tf: a coarse level has one busy rank along x \(4x2\)" \
  mge-8.tf mge-16.tf mge-32.tf --ranks 64 --no-plugins -o mge-x64.tf
finish
