#!/usr/bin/env bash
# SimGrid simulation cost (issue 14): wall time and peak memory of
# `tracefold simulate` (action files + SMPI replay) as ranks grow, measured
# with /usr/bin/time -v (the peak is the largest process: SimGrid's
# smpimain).
#
#  1. Recorded traces: the 2-D periodic stencil (tests/apps) recorded for
#     real at 16 and 64 ranks (oversubscribed), STEPS steps.
#  2. Larger counts (RANKS_BIG, default "1024 4096"):
#     - extrapolated 2-D stencil traces when `tracefold extrapolate` exists
#       (from recordings at 4, 9 and 16 ranks; the target must be a square);
#     - otherwise the ring example's synthetic raw logs
#       (examples/ring-rawlog/generate.sh: a 1-D periodic stencil, STEPS
#       steps, Irecv/Isend/Waitall plus an Allreduce every 10th step),
#       folded with `tracefold fold`, so the simulator's scaling is measured
#       before extrapolation lands. The table says which source each row used.
#
# Settings (environment): BUILD_DIR=build, STEPS=50.
# Target (issue 14): 4,096 ranks of an extrapolated stencil in < 10 min, < 8 GiB.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
STEPS="${STEPS:-50}"
RANKS_BIG="${RANKS_BIG:-1024 4096}"
TF="$PWD/$BUILD_DIR/src/cli/tracefold"
APPS="$PWD/$BUILD_DIR/tests/apps"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

row() {  # row LABEL RANKS SOURCE TRACE
  local label=$1 ranks=$2 source=$3 trace=$4 d="$out/sim-$1"
  /usr/bin/time -v "$TF" simulate "$trace" -o "$d" > "$out/$label.txt" 2> "$out/$label.time" || {
    echo "simulate failed for $label:" >&2; tail -20 "$out/$label.time" >&2; return 0; }
  local wall rss pred acts
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/$label.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/$label.time")
  pred=$(sed -n 's/^predicted run time: //p' "$out/$label.txt")
  acts=$(sed -n 's/^actions: //p' "$out/$label.txt")
  printf '| %6d | %-34s | %9s | %8.1f | %14s | %s |\n' "$ranks" "$source" "$wall" \
    "$(awk -v k="$rss" 'BEGIN {print k / 1024}')" "$pred" "$acts"
  rm -rf "$d"
}

echo "| ranks | trace | wall (m:ss) | peak MiB | predicted | action files |"
echo "|------:|-------|------------:|---------:|----------:|--------------|"
for np in 16 64; do
  "$TF" record -o "$out/st$np.tf" -- mpirun -np "$np" "$APPS/app_stencil2d_periodic" "$STEPS" \
    > /dev/null 2>&1
  row "rec$np" "$np" "stencil2d recorded, $STEPS steps" "$out/st$np.tf"
done
have_extrap=0
"$TF" extrapolate --help > /dev/null 2>&1 && have_extrap=1
if ((have_extrap)); then
  for np in 4 9 16; do
    "$TF" record -o "$out/x$np.tf" -- mpirun -np "$np" "$APPS/app_stencil2d_periodic" "$STEPS" \
      > /dev/null 2>&1
  done
fi
for n in $RANKS_BIG; do
  if ((have_extrap)); then
    "$TF" extrapolate "$out/x4.tf" "$out/x9.tf" "$out/x16.tf" --ranks "$n" -o "$out/big$n.tf"
    row "big$n" "$n" "stencil2d extrapolated from 4/9/16" "$out/big$n.tf"
  else
    bash examples/ring-rawlog/generate.sh "$n" "$STEPS" "$out/raw$n" > /dev/null
    "$TF" fold "$out/raw$n" -o "$out/big$n.tf" > /dev/null
    rm -rf "$out/raw$n"
    row "big$n" "$n" "ring raw logs folded, $STEPS steps" "$out/big$n.tf"
  fi
done
