#!/usr/bin/env bash
# Strong scaling on non-square grids: app_strong2d splits a fixed 720x360
# periodic domain over the MPI_Dims_create grid (rows x columns), so its
# north/south messages carry 720/columns values and its west/east ones
# 360/rows. Recorded at 4, 6, 9 (3x3), 12 (4x3), 16 (4x4) and 20 (5x4) ranks:
# 9,12,16 -> 20 and 9,16,20 -> 12 (between) must `tracefold diff` same as
# the real runs, and --explain must show a law per dimension (720/S1 and
# 360/S2), not one of the product of the sizes.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=3
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 6 9 12 16 20; do rec st "$n" strong2d; done
same_as_real "strong2d: 9,12,16 -> 20 (5x4)" x-st-20.tf st-20.tf st-9.tf st-12.tf st-16.tf
same_as_real "strong2d: 9,16,20 -> 12 (4x3, between)" b-st-12.tf st-12.tf st-9.tf st-16.tf st-20.tf
# 4 (2x2), 6 (3x2), 9 (3x3) -> 12 (4x3): the middle column exists at 9
# only, and the first and last columns' middle rows at 6 and 9 (3 rows
# both). Their west/east messages (360/rows: 120 there) must take the law
# the corners show, 360/S2, and come out as 90 at 12, as the real run
# sends; a constant 120 was written before.
same_as_real "strong2d: 4,6,9 -> 12 (parts seen at one size)" p-st-12.tf st-12.tf \
  st-4.tf st-6.tf st-9.tf
CHECKS=$((CHECKS + 1))
"$TF" extrapolate st-4.tf st-6.tf st-9.tf --ranks 12 -o e.tf --explain > st-parts.txt 2>&1 || true
rm -f e.tf
if grep -qE 'field count: .*\[360/S2 \(from x:(first|last) y:(first|last)\)\]' st-parts.txt; then
  ok "strong2d: --explain says the middle parts took 360/S2 from a corner"
else
  bad "strong2d: --explain does not show the borrowed law: $(grep 'field count' st-parts.txt | head -6)"
fi

CHECKS=$((CHECKS + 1))
"$TF" extrapolate st-9.tf st-12.tf st-16.tf --ranks 20 -o e.tf --explain > st-explain.txt 2>&1 || true
rm -f e.tf
# The Isend/Irecv counts over the four directions (north, south, west,
# east): 720/columns twice, then 360/rows twice.
laws=$(grep -cE 'field count: .*\[720/S1\] \[720/S1\] \[360/S2\] \[360/S2\]' st-explain.txt || true)
if [[ $laws -ge 2 ]]; then
  ok "strong2d: --explain shows count = 720/S1, 720/S1, 360/S2, 360/S2 ($laws nodes)"
else
  bad "strong2d: --explain lacks the per-dimension laws: $(grep 'field count' st-explain.txt | head -4)"
fi

# The real 20-rank run (5 rows x 4 columns) sends 180 (720/4) and 72
# (360/5) values.
CHECKS=$((CHECKS + 1))
got=$("$TF" expand x-st-20.tf -r 7 2>&1 | grep '^MPI_Isend' | head -4 | grep -o 'count=[0-9]*' | tr '\n' ' ')
if [[ $got == "count=180 count=180 count=72 count=72 " ]]; then
  ok "strong2d: rank 7 of the extrapolation sends 180, 180, 72, 72 values"
else
  bad "strong2d: rank 7 sends: $got"
fi
finish
