#!/usr/bin/env bash
# Issue 30: a multipartition ADI solver (app_adi_mp, q*q ranks, q cells
# each on the diagonal, line solves of q stages in x, y and z). Every
# sweep makes q-1 exchanges (a trip count following sqrt(P), S1 - 1 on the
# q x q grid), with the x and y successors and the diagonal z successor,
# all wrapping around. At 4 ranks every rank reaches every other, so its
# peers alone fit a ring of 4 as well as 2x2: the other inputs' 2-D decides.
# Strong scaling (a 60^3 cube: faces of 5*(60/q)^2 values, 18000/(S1*S2))
# and weak scaling (cells of side 4) at 4, 9, 16 -> 25 and 4, 9, 25 -> 16
# (and strong 4, 16, 25 -> 9) must `tracefold diff` same as the real runs;
# the extrapolated 25-rank trace must replay under mpirun, and their time
# blocks must hold one sample a call, as the real runs' do, block by block
# where the blocks are alike. A cube that does not divide (N = 62: cells
# of 21 and 20 points, so ranks of one part send different sizes) is
# refused with the node, the ranks and their values.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 9 16 25; do
  rec adi "$n" adi_mp
  rec adiw "$n" adi_mp 0 -4
done
same_as_real "adi_mp strong: 4,9,16 -> 25" x-adi-25.tf adi-25.tf adi-4.tf adi-9.tf adi-16.tf
same_as_real "adi_mp strong: 4,9,25 -> 16 (between)" b-adi-16.tf adi-16.tf \
  adi-4.tf adi-9.tf adi-25.tf
same_as_real "adi_mp weak: 4,9,16 -> 25" x-adiw-25.tf adiw-25.tf adiw-4.tf adiw-9.tf adiw-16.tf
# The sample counts of the time blocks are fitted block by block, and
# the fits missed the calls (4,9,16 -> 25: 173 and 188 samples at stage
# nodes making 200 calls); the blocks are then given the node's calls.
same_samples "adi_mp strong: 4,9,16 -> 25" x-adi-25.tf adi-25.tf
same_samples "adi_mp strong: 4,9,25 -> 16 (between)" b-adi-16.tf adi-16.tf
# Block by block where the extrapolation's blocks follow the same calls as
# the real run's. Which blocks a recording keeps apart depends on the
# times it measured; tests/cli/extrap_samples.sh checks a block absent
# from the 4-rank input on recorded traces that keep it apart.
same_as_real "adi_mp strong: 4,16,25 -> 9 (between)" c-adi-9.tf adi-9.tf \
  adi-4.tf adi-16.tf adi-25.tf
same_block_samples "adi_mp strong: 4,16,25 -> 9 (between)" c-adi-9.tf adi-9.tf

CHECKS=$((CHECKS + 1))
"$TF" extrapolate adi-4.tf adi-9.tf adi-16.tf --ranks 25 -o e.tf --explain > adi-explain.txt 2>&1 ||
  true
rm -f e.tf
if grep -q '^input adi-4.tf: 4 ranks, grid 2x2, .*(the peers also fit 4, 1-D; taken 2-D like the other inputs)' \
  adi-explain.txt &&
  grep -q 'field count: \[18000/(S1\*S2)\]\*\[-2 + 2\*S1 (from x:first y:first)\] @ x:mid y:first' \
    adi-explain.txt; then
  # 2 steps of S1 - 1 exchanges: the middle parts, seen at 3x3 and 4x4
  # only, take the law of the corners, seen at all three sizes.
  ok "adi_mp: --explain takes 2x2 from the other inputs, faces 18000/(S1*S2), 2*(S1 - 1) exchanges"
else
  bad "adi_mp: --explain: $(grep -E '^input adi-4|field count' adi-explain.txt | head -6)"
fi

# The extrapolated 25-rank trace replays under mpirun, and recording the
# replay gives the same calls back.
replays_back "adi_mp" x-adi-25.tf

# A cube of 62: at q = 3 the slabs are 21, 21, 20 points thick, so ranks in
# one part of the grid send faces of different sizes.
for n in 4 9 16; do rec adir "$n" adi_mp 0 62; done
fails_with "adi_mp: N=62 (uneven cells)" \
  "adir-16.tf: node [0-9]+ \(MPI_[A-Za-z]+ at .*\), field count: ranks [0-9]+ and [0-9]+ lie in the same part of the 4x4 grid \(x:mid y:first\) but have '[^']+' and '[^']+': .*record sizes that divide evenly" \
  adir-4.tf adir-9.tf adir-16.tf --ranks 25 -o adir-25.tf
finish
