#!/usr/bin/env bash
# Extrapolation of programs that communicate on communicators other than
# the world, with the MPI_Cart_create grid cross-checked:
#  - app_grid_comms: a periodic MPI_Cart_create grid, its rows by
#    MPI_Comm_split (color = row, key = column), its columns by
#    MPI_Cart_sub, a MPI_Comm_dup of the rows; a ring shift and an
#    Allreduce on the rows, a Bcast on the columns, a Reduce to the row's
#    last rank on the duplicate. 4, 9, 16 -> 25 and 4, 9, 25 -> 16 must
#    `tracefold diff` same as the real runs, call sites included; --explain
#    names MPI_Cart_create as the source of each size; a recorded grid
#    that contradicts the communication (dims rewritten to 1x9) is refused.
#  - app_mg_vcycle: a V-cycle whose every call is on its Cartesian
#    communicator (the world under another id): 4, 9, 16 -> 25.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=3
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 9 16 25; do rec gc "$n" grid_comms; done
same_as_real "grid_comms: 4,9,16 -> 25" x-gc-25.tf gc-25.tf gc-4.tf gc-9.tf gc-16.tf
same_as_real "grid_comms: 4,9,25 -> 16 (between)" b-gc-16.tf gc-16.tf gc-4.tf gc-9.tf gc-25.tf

# A recorded grid that contradicts the communication: the 9-rank run's
# MPI_Cart_create dims rewritten from 3x3 to 1x9 (in the text form of its
# trace). The error names the file, the node, the field and both grids.
CHECKS=$((CHECKS + 1))
if "$TF" convert gc-9.tf --text -o gc-9.txt > /dev/null 2>&1 &&
  grep -q '^  field list dims 2 3\*2 @ \*$' gc-9.txt; then
  sed 's/^  field list dims 2 3\*2 @ \*$/  field list dims 2 1 9 @ */' gc-9.txt > gc-9-dims19.tf
  ok "grid_comms: the 9-rank run's dims rewritten to 1x9"
else
  bad "grid_comms: the text form of gc-9.tf has no 'field list dims 2 3*2 @ *' line"
fi
fails_with "grid_comms: recorded dims 1x9 against 3x3 endpoints" \
  "^tracefold: error: gc-9-dims19.tf: node [0-9]+ \(MPI_Cart_create at [^()]*(\([^)]*\)[^()]*)*\), field dims: MPI_Cart_create's grid 9 does not explain the [0-9]+ endpoint patterns, which fit 3x3" \
  gc-4.tf gc-9-dims19.tf gc-16.tf --ranks 25 -o bad-gc-25.tf

CHECKS=$((CHECKS + 1))
"$TF" extrapolate gc-4.tf gc-9.tf gc-16.tf --ranks 25 -o e.tf --explain > gc-explain.txt 2>&1 || true
rm -f e.tf
# The halo exchange on the grid communicator shows the grid: the recorded
# dims and the endpoints agree.
want_x='^input gc-16.tf: .*sizes: x=4 \(MPI_Cart_create dims\[1\], the endpoints agree; periods\[1\]=1\), y=4 \(MPI_Cart_create dims\[0\]'
if grep -Eq "$want_x" gc-explain.txt &&
  grep -Eq '^communicator [0-9]+: groups along x$' gc-explain.txt &&
  grep -Eq '^communicator [0-9]+: groups along y$' gc-explain.txt &&
  grep -Eq 'field color: <0 \+ \[1\]\*y>' gc-explain.txt &&
  grep -Eq 'field key: <0 \+ \[1\]\*x>' gc-explain.txt; then
  ok "grid_comms: --explain names MPI_Cart_create's dims, the rows and columns, color = y, key = x"
else
  bad "grid_comms: --explain lacks the sources or shapes: $(grep -E '^(input|communicator)|color|key' gc-explain.txt)"
fi

# The communicator table at 25 ranks equals the real run's: the grid, five
# rows of five (twice: the split and its duplicate), five columns.
CHECKS=$((CHECKS + 1))
"$TF" convert x-gc-25.tf --text -o - 2>&1 | grep '^comm' > x-comms.txt || true
"$TF" convert gc-25.tf --text -o - 2>&1 | grep '^comm' > real-comms.txt || true
rows=$(grep -cE '^comm [0-9]+ members <1 (0|5|10|15|20) 5 1>$' x-comms.txt || true)
cols=$(grep -cE '^comm [0-9]+ members <1 [0-4] 5 5>$' x-comms.txt || true)
if [[ $rows == 10 && $cols == 5 ]] && cmp -s x-comms.txt real-comms.txt; then
  ok "grid_comms: communicator table as in the real run ($rows row groups, $cols column groups)"
else
  bad "grid_comms: communicator table: $rows row and $cols column groups; diff: $(diff x-comms.txt real-comms.txt | head -5)"
fi

STEPS=1  # V-cycles: one is enough, and 25 ranks of it take seconds
for n in 4 9 16 25; do rec mg "$n" mg_vcycle; done
same_as_real "mg_vcycle: 4,9,16 -> 25" x-mg-25.tf mg-25.tf mg-4.tf mg-9.tf mg-16.tf
finish
