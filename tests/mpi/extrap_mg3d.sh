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
# And the 2-D program under strong scaling (a fixed 16^3 grid, 4 levels of
# 16, 8, 4 and 2 points): each doubling of a side idles one more level
# along it (1 level at 8 and 16 ranks, 2 at 32), so a count above the
# inputs has ranks busy on fewer levels than any input shows, on a level
# every input keeps busy on every rank: the refusal says so and what would
# work; with 8 and 16 only, y's 4 rows in both leave the stride law open
# up to 32 ranks, the target itself.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

# refused WHAT NAME RANKS PATTERN COUNTS...: extrapolating NAME-N.tf for
# each N of COUNTS to RANKS ranks is refused, saying PATTERN.
refused() {
  local what=$1 name=$2 ranks=$3 pattern=$4 n inputs=()
  shift 4
  for n in "$@"; do inputs+=("$name-$n.tf"); done
  fails_with "$what" "$pattern" "${inputs[@]}" --ranks "$ranks" --no-plugins -o "$name-x$ranks.tf"
}

# NAME, then app_mg3d's MODE LOCAL LEVELS [DIMS] (CYCLES 2, WORK 0).
for variant in "mgw 0 2 3" "mgs 1 4 2" "mg2s 1 16 4 2"; do
  read -r name args <<< "$variant"
  # shellcheck disable=SC2086 # the arguments split on purpose
  for n in 8 16 32; do rec "$name" "$n" mg3d 0 $args; done
done

refused "mg3d 3-D weak: one busy rank along x and y at 16" mgw 64 \
  "the per-level model does not explain it either: mgw-16.tf: a coarse level has one busy rank along x and y \(4x2x2\), so its exchanges along them are missing there: .*\(at least 4 along x, 4 along y; the smallest count with such a grid is 64 ranks \(4x4x4\)\)" \
  8 16 32
refused "mg3d 3-D strong: x's stride law is in no input" mgs 64 \
  "the coarsest level \(the only idle one\), stride along x: stride 1 \(2 busy\) in every input, all of one side: .*part at 4; give an input with another side along it \(the smallest count with more ranks along x than every input is 64 ranks \(4x4x4\)\)" \
  16 32
refused "mg3d 3-D strong: no idle rank at 8" mgs 64 \
  "mgs-8.tf \(2x2x2\) has 0 coarse level\(s\) with idle ranks, mgs-32.tf \(4x4x2\) has 1: .*\(strong scaling\)" \
  8 16 32
refused "mg3d 2-D strong: a level idles beyond the inputs" mg2s 64 \
  "mg2s-8.tf \(4x2\) has 1 coarse level\(s\) with idle ranks, mg2s-32.tf \(8x4\) has 2: its finest such level keeps every 2nd of the 8 ranks along y busy, a level on which every rank of mg2s-8.tf works\. .*no trace of these counts says which of its ranks idle at a larger one\. .*record with enough points that every level keeps a point on every rank at the target .*or record the target count itself" \
  8 16 32
refused "mg3d 2-D strong: only the target decides y's stride" mg2s 32 \
  "the coarsest level \(the only idle one\), stride along y: stride 2 \(2 busy\) in every input, all of one side: .*\(the smallest count with more ranks along y than every input is 32 ranks \(8x4\)\); no count below the target decides it: record the target count itself, or record with enough points" \
  8 16
finish
