#!/usr/bin/env bash
# The extrapolation contract on real runs: record the 2-D stencils at a few
# rank counts, extrapolate to a count that is also recorded for real, and
# `tracefold diff` (call sites included) must say same on every rank; also
# extrapolating "between" the inputs, with uneven MPI_Dims_create grids, a
# 1-D ring, a replay of an extrapolated trace under mpirun, and the errors for too few inputs, a count that fits no grid and traces
# of different programs (nothing written then).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/extrap_lib.bash"

for v in periodic nonperiodic; do
  for n in 4 9 16 25 36; do rec "$v" "$n"; done
  same_as_real "$v: 4,9,16,25 -> 36" "x-$v-36.tf" "$v-36.tf" "$v-4.tf" "$v-9.tf" "$v-16.tf" "$v-25.tf"
  same_as_real "$v: 4,9,25,36 -> 16 (between)" "b-$v-16.tf" "$v-16.tf" "$v-4.tf" "$v-9.tf" "$v-25.tf" "$v-36.tf"
  same_as_real "$v: 4,16,25,36 -> 9 (between)" "b-$v-9.tf" "$v-9.tf" "$v-4.tf" "$v-16.tf" "$v-25.tf" "$v-36.tf"
  same_as_real "$v: 9,16,25 -> 4 (below)" "b-$v-4.tf" "$v-4.tf" "$v-9.tf" "$v-16.tf" "$v-25.tf"
  # 4, 9, 16: the in-between cells (edges, interior) are seen at 9 and 16
  # only; their peers come from coordinate offsets pooled over the cells.
  same_as_real "$v: 4,9,16 -> 36 (d+1 inputs)" "few-$v-36.tf" "$v-36.tf" "$v-4.tf" "$v-9.tf" "$v-16.tf"
  same_as_real "$v: 4,9,16 -> 25 (d+1 inputs)" "few-$v-25.tf" "$v-25.tf" "$v-4.tf" "$v-9.tf" "$v-16.tf"
  fails_with "$v: 50 ranks on square grids" "50 ranks do not fit the equal-sided grids" \
    "$v-4.tf" "$v-9.tf" "$v-16.tf" "$v-25.tf" --ranks 50 -o "fifty-$v.tf"
done
fails_with "a 2-D grid needs 3 rank counts" "needs traces of at least 3 rank counts" \
  periodic-9.tf periodic-16.tf --ranks 36 -o two.tf
fails_with "different programs" "does not match node .* the inputs are not traces of the same program" \
  periodic-4.tf nonperiodic-9.tf periodic-16.tf periodic-25.tf --ranks 36 -o mixed.tf
fails_with "same rank count twice" "both have 9 ranks" \
  periodic-9.tf periodic-9.tf periodic-16.tf --ranks 36 -o twice.tf
fails_with "--grid of the wrong size" "holds 24 ranks, not --ranks 36" \
  periodic-4.tf periodic-9.tf periodic-16.tf periodic-25.tf --ranks 36 --grid 4x6 -o g.tf

# Uneven grids from MPI_Dims_create (3x2, 4x3, 5x4, 6x5) to 7x6.
for n in 6 12 20 30 42; do rec nonperiodic "$n"; done
same_as_real "nonperiodic: 6,12,20,30 -> 42 (uneven grids)" x-uneven-42.tf nonperiodic-42.tf \
  nonperiodic-6.tf nonperiodic-12.tf nonperiodic-20.tf nonperiodic-30.tf
# 4 (2x2), 6 (3x2), 9 (3x3) -> 12 (4x3): the middle column is seen at 9
# only; its edge ranks' partners (south, west, east) are at no position of
# a part seen twice, and one input cannot show whether a partner is a step
# or a wrap.
# Refused (before, a trace was written in which rank 1 of 12 has peer 9
# where the real run has 0).
fails_with "nonperiodic: 4,6,9 -> 12 (middle column seen at 9 only)" \
  "ranks at x:mid y:(first|last): seen in one input only \(.* in nonperiodic-9.tf \(3x3\)\)" \
  nonperiodic-4.tf nonperiodic-6.tf nonperiodic-9.tf --ranks 12 -o np-12.tf

# A 1-D ring: 3, 4, 5 -> 8 and, between, 3, 4, 8 -> 5.
for n in 3 4 5 8; do rec ring "$n" ring; done
same_as_real "ring: 3,4,5 -> 8" x-ring-8.tf ring-8.tf ring-3.tf ring-4.tf ring-5.tf
same_as_real "ring: 3,4,8 -> 5 (between)" x-ring-5.tf ring-5.tf ring-3.tf ring-4.tf ring-8.tf

# The extrapolated 36-rank trace replays under mpirun, and recording that
# replay gives its calls back.
replays_back "periodic stencil" x-periodic-36.tf

# The extrapolated trace is an ordinary trace: print and stats read it, and
# --explain names the grids and the models.
CHECKS=$((CHECKS + 1))
if "$TF" print x-periodic-36.tf > print.txt && grep -q "^trace of 36 ranks" print.txt &&
  "$TF" stats x-periodic-36.tf > stats.txt && grep -q "MPI_Isend" stats.txt; then
  ok "print and stats read the extrapolated trace"
else
  bad "print/stats of the extrapolated trace failed"
fi
CHECKS=$((CHECKS + 1))
"$TF" extrapolate periodic-4.tf periodic-9.tf periodic-16.tf periodic-25.tf --ranks 1024 \
  -o big.tf --explain > explain.txt 2> explain.err || bad "extrapolate to 1024 failed: $(cat explain.err)"
if grep -q "^input periodic-25.tf: 25 ranks, grid 5x5 (wraps around in x,y)" explain.txt &&
  grep -q "^target: 1024 ranks, grid 32x32" explain.txt &&
  grep -Eq "field peer: .*<x:-1 \+ S1 y:0>" explain.txt && grep -q "time pred=" explain.txt &&
  "$TF" expand big.tf -r 1023 > r1023.txt && grep -q "MPI_Isend .*peer=992" r1023.txt; then
  ok "--explain and a 1024-rank target (rank 1023 sends east to 992 across the wrap)"
else
  bad "--explain output or the 1024-rank trace is not as expected"
  head -n 20 explain.txt >&2
fi
# Progress (TRACEFOLD_PROGRESS=1): one line per tenth of the nodes, up to
# 100%, and the same output; without it (stderr is a file) no such line.
CHECKS=$((CHECKS + 1))
TRACEFOLD_PROGRESS=1 "$TF" extrapolate periodic-4.tf periodic-9.tf periodic-16.tf periodic-25.tf \
  --ranks 1024 -o big2.tf 2> progress.err || bad "extrapolate with progress failed"
if grep -Eq "^tracefold: extrapolating to 1024 ranks: node ([0-9]+)/\1 \(100%\)$" progress.err &&
  ! grep -q "extrapolating to" explain.err && cmp -s big.tf big2.tf; then
  ok "extrapolate progress to 100%, none when not asked, same output"
else
  bad "extrapolate progress: $(grep extrapolating progress.err | tail -n 2)"
fi
finish
