#!/usr/bin/env bash
# Issue 30: an SSOR wavefront (app_ssor_wave) on NPB LU's process grid,
# 2^ceil(k/2) columns (fastest) by 2^floor(k/2) rows: 4 = 2x2, 8 = 4
# columns x 2 rows, 16 = 4x4, 32 = 8 columns x 4 rows. MPI_Dims_create
# would put 8 ranks in 2 columns of 4, so the target grid must come from
# the rule the inputs' grids follow (read from their peers), not from
# --grid. Weak scaling (6x6 points a rank) and strong scaling (a 64x64
# plane: faces of 5*64/columns and 5*64/rows values) are both recorded at
# 4, 8, 16 and 32 ranks; 4, 8, 16 -> 32 must `tracefold diff` same as the
# real run (32 ranks: the next power of two, as no count of 16 or fewer
# ranks lies beyond three inputs), and 4, 8, 32 -> 16 too; and a plane
# that does not divide evenly (below).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 8 16 32; do
  rec ssor "$n" ssor_wave
  rec ssorst "$n" ssor_wave 0 64 64
done
same_as_real "ssor_wave: 4,8,16 -> 32 (8x4, largest side fastest)" x-ssor-32.tf ssor-32.tf \
  ssor-4.tf ssor-8.tf ssor-16.tf
same_as_real "ssor_wave strong: 4,8,16 -> 32" x-ssorst-32.tf ssorst-32.tf \
  ssorst-4.tf ssorst-8.tf ssorst-16.tf
same_as_real "ssor_wave: 4,8,32 -> 16 (between)" b-ssor-16.tf ssor-16.tf \
  ssor-4.tf ssor-8.tf ssor-32.tf

CHECKS=$((CHECKS + 1))
"$TF" extrapolate ssorst-4.tf ssorst-8.tf ssorst-16.tf --ranks 32 -o e.tf --explain \
  > ssor-explain.txt 2>&1 || true
rm -f e.tf
if grep -q '^input ssorst-8.tf: 8 ranks, grid 2x4,' ssor-explain.txt &&
  grep -q '^target: 32 ranks, grid 4x8 (MPI_Dims_create.s sizes with the largest fastest' \
    ssor-explain.txt &&
  grep -q 'field count: .*\[320/S1\]' ssor-explain.txt &&
  grep -q 'field count: .*\[320/S2\]' ssor-explain.txt; then
  ok "ssor_wave: --explain reads 8 ranks as 4 columns x 2 rows, the target as 8x4, faces 320/S1, 320/S2"
else
  bad "ssor_wave: --explain: $(grep -E '^(input|target)|field count' ssor-explain.txt | head -8)"
fi

# The real 32-rank run has 8 columns: rank 9 (column 1, row 1) receives
# from west 8 and north 1 and sends east 10 and south 17.
CHECKS=$((CHECKS + 1))
# (expand to a file first: grep -m closing the pipe early would kill it
# with SIGPIPE, which pipefail turns into a failure)
"$TF" expand x-ssor-32.tf -r 9 > ssor-r9.txt 2>&1 || true
got=$(grep -m 4 -E '^MPI_(Recv|Send) ' ssor-r9.txt |
  grep -o 'peer=[0-9]*' | tr '\n' ' ')
if [[ $got == "peer=8 peer=1 peer=10 peer=17 " ]]; then
  ok "ssor_wave: rank 9 of the 32-rank extrapolation: west 8, north 1, east 10, south 17"
else
  bad "ssor_wave: rank 9's first peers: $got"
fi


# A 66x66 plane does not divide over 4 or 8 columns or rows: the first
# 66 mod S ranks along a dimension get one point more (17 17 16 16 at 4),
# so ranks of one part of the grid send different sizes. Fitted per rank
# as 5*(66 div S1) + 5*(x < 66 mod S1) (and the same in y for the other
# faces), it must extrapolate exactly: at 32 ranks (8 columns x 4 rows)
# rank 9 (column 1, row 1) has 9 columns and 17 rows of points.
for n in 4 8 16 32; do rec ssoru "$n" ssor_wave 0 66 66; done
same_as_real "ssor_wave uneven: 4,8,16 -> 32 (remainders)" x-ssoru-32.tf ssoru-32.tf \
  ssoru-4.tf ssoru-8.tf ssoru-16.tf
same_as_real "ssor_wave uneven: 4,8,32 -> 16 (between)" b-ssoru-16.tf ssoru-16.tf \
  ssoru-4.tf ssoru-8.tf ssoru-32.tf
CHECKS=$((CHECKS + 1))
"$TF" extrapolate ssoru-4.tf ssoru-8.tf ssoru-16.tf --ranks 32 -o e.tf --explain \
  > ssoru-explain.txt 2>&1 || true
rm -f e.tf
"$TF" expand x-ssoru-32.tf -r 9 > ssoru-r9.txt 2>&1 || true
got=$(grep -m 2 '^MPI_Recv ' ssoru-r9.txt | grep -o 'count=[0-9]*' | tr '\n' ' ')
if grep -q 'field count: by remainder .*\[5\*(66 div S1) + 5\*(x < 66 mod S1)\]' ssoru-explain.txt &&
  grep -q 'field count: by remainder .*\[5\*(66 div S2) + 5\*(y < 66 mod S2)\]' ssoru-explain.txt &&
  [[ $got == "count=85 count=45 " ]]; then
  ok "ssor_wave uneven: --explain prints the remainder laws; rank 9 at 32 receives 5*17 and 5*9 values"
else
  bad "ssor_wave uneven: rank 9 receives $got; --explain: $(grep 'remainder' ssoru-explain.txt | head -4)"
fi
finish
