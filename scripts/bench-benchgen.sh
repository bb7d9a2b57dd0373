#!/usr/bin/env bash
# Benchmark generation at scale (issue 15): time and C file size of
# `tracefold bench` for traces of 1,024 and 16,384 ranks, fixed-scale
# against --parametric, side by side in one run.
#   - the non-periodic 2-D stencil is recorded at 4, 9 and 16 ranks;
#   - `tracefold extrapolate` makes its traces at 256, 1,024 and 16,384;
#   - fixed-scale: `tracefold bench x-N.tf` for N = 1,024 and 16,384;
#   - parametric: `tracefold bench --parametric` from the three recorded
#     traces, and from the extrapolated 256, 1,024 and 16,384 (its models
#     are checked on every rank of every input: that cost grows with them).
# The parametric program of the recorded traces is then run at 36 ranks
# and its recorded trace diffed against the program's, as a sanity check;
# then two shapes too large for a test on two cores, each diffed against a
# real run: MPI_Dims_create's uneven 2-D grids (6, 12, 20 -> 30 ranks)
# and the 3-D stencil (8, 12, 18, 27 -> 36 ranks).
#
# Settings (environment): BUILD_DIR=build, STEPS=12.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
STEPS="${STEPS:-12}"
TF="$PWD/$BUILD_DIR/src/cli/tracefold"
APPS="$PWD/$BUILD_DIR/tests/apps"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
cd "$out"
APP=stencil2d_nonperiodic

for n in 4 9 16; do
  "$TF" record -o "r-$n.tf" -- mpirun -np "$n" "$APPS/app_$APP" "$STEPS" > "rec-$n.log" 2>&1 ||
    { echo "record at $n ranks failed" >&2; tail "rec-$n.log" >&2; exit 1; }
done
for n in 256 1024 16384; do
  "$TF" extrapolate r-4.tf r-9.tf r-16.tf --ranks "$n" -o "x-$n.tf" > /dev/null
done

# row WHAT OUT ARGS...: runs `tracefold bench ARGS -o OUT` under
# /usr/bin/time and prints wall time, peak memory and the file's size.
row() {
  local what=$1 c=$2
  shift 2
  /usr/bin/time -v "$TF" bench "$@" -o "$c" > /dev/null 2> "$c.time" ||
    { echo "$what failed:" >&2; cat "$c.time" >&2; return 0; }
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$c.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$c.time")
  printf '| %-44s | %8s | %7.1f | %9d | %6d |\n' "$what" "$wall" \
    "$(awk -v k="$rss" 'BEGIN {print k / 1024}')" "$(stat -c %s "$c")" "$(wc -l < "$c")"
}

echo "| generation                                   | wall     | MiB     | C bytes   | lines  |"
echo "|----------------------------------------------|----------|---------|-----------|--------|"
for n in 1024 16384; do
  row "fixed-scale, extrapolated $n ranks" "fixed-$n.c" "x-$n.tf"
done
row "--parametric, recorded 4, 9, 16 ranks" param-rec.c --parametric r-4.tf r-9.tf r-16.tf
row "--parametric, extrapolated 256, 1024, 16384" param-x.c --parametric x-256.tf x-1024.tf x-16384.tf
for c in fixed-1024.c fixed-16384.c param-rec.c param-x.c; do
  mpicc -std=c11 -O1 -Wall -Wextra -Werror "$c" -o "${c%.c}" || echo "$c does not compile" >&2
done
if cmp -s <(sed 1,3d param-rec.c) <(sed 1,3d param-x.c); then
  echo "the two parametric programs are the same below their header"
fi
"$TF" record -o b-36.tf -- mpirun -np 36 ./param-rec > b-36.log 2>&1
"$TF" record -o r-36.tf -- mpirun -np 36 "$APPS/app_$APP" "$STEPS" > r-36.log 2>&1
echo "parametric program at 36 ranks vs the program: $("$TF" diff --ignore-callsites r-36.tf b-36.tf 2>&1 | head -n 3)"

# other_shape WHAT APP RUN_AT INPUT_COUNTS...
other_shape() {
  local what=$1 app=$2 at=$3 n ins=()
  shift 3
  for n in "$@" "$at"; do
    "$TF" record -o "$app-$n.tf" -- mpirun -np "$n" "$APPS/app_$app" "$STEPS" > "rec-$app-$n.log" 2>&1
  done
  for n in "$@"; do ins+=("$app-$n.tf"); done
  "$TF" bench --parametric "${ins[@]}" -o "p-$app.c" 2> /dev/null
  mpicc -std=c11 -O1 -Wall -Wextra -Werror "p-$app.c" -o "p-$app"
  "$TF" record -o "pb-$app-$at.tf" -- mpirun -np "$at" "./p-$app" > "pb-$app.log" 2>&1
  echo "$what: $("$TF" diff --ignore-callsites "$app-$at.tf" "pb-$app-$at.tf" 2>&1 | head -n 3)"
}
other_shape "uneven 2-D grids, 6, 12, 20 -> 30 ranks" stencil2d_nonperiodic 30 6 12 20
other_shape "3-D stencil, 8, 12, 18, 27 -> 36 ranks" stencil3d 36 8 12 18 27
