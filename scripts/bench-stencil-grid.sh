#!/usr/bin/env bash
# Recorder overhead on the 2D and 3D stencils as the problem grows: for each
# local block edge (the programs' third argument), the step count is
# calibrated so an untraced run takes about TARGET seconds, then
# scripts/bench-stencil-overhead.sh runs untraced and traced alternately
# (ROUNDS each, ABBA order) and its paired ratios are collected into one
# table: overhead per whole run and per time step (fixed costs -- launcher,
# preload, merge at finalize -- taken out with 10-step runs).
#
# The smallest edges are the test programs as the suite runs them (a few us
# of work per step: pure MPI-call overhead); the larger ones are what a
# stencil code does per rank with a real local block (tens to hundreds of
# us of Jacobi sweeps per step). At 16 ranks a 2-core machine is 8x
# oversubscribed, so each step's wall time is about 8 ranks' work.
#
# Settings (environment): BUILD_DIR=build, NP=16, ROUNDS=5, TARGET=2 (seconds),
#   EDGES_2D="24 64 128 256", EDGES_3D="10 16 24 32".
# Takes about 15 minutes with the defaults on an idle 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
NP="${NP:-16}"
ROUNDS="${ROUNDS:-5}"
TARGET="${TARGET:-2}"
EDGES_2D="${EDGES_2D:-24 64 128 256}"
EDGES_3D="${EDGES_3D:-10 16 24 32}"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

wall() {  # wall seconds of one untraced run: app steps edge
  local t0 t1
  t0=$(date +%s%N)
  mpirun -np "$NP" "$BUILD_DIR/tests/apps/app_$1" "$2" 0 "$3" >/dev/null
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000))"
}

rows=()
for spec in "stencil2d_nonperiodic:$EDGES_2D" "stencil3d:$EDGES_3D"; do
  app=${spec%%:*}
  for edge in ${spec#*:}; do
    # Calibrate: the per-step time from a 10-step run and runs of growing
    # length, until the steps take at least a quarter of TARGET -- shorter
    # runs are mostly launcher time, whose jitter would swamp the estimate.
    short=$(wall "$app" 10 "$edge"); n=1000
    while :; do
      long=$(wall "$app" "$n" "$edge")
      if ((long - short >= TARGET * 250000 || n >= 100000000)); then break; fi
      n=$((n * 4))
    done
    per_step_ns=$(((long - short) * 1000 / (n - 10))); ((per_step_ns > 0)) || per_step_ns=1
    per_step=$(((per_step_ns + 500) / 1000))
    steps=$((TARGET * 1000000000 / per_step_ns)); ((steps >= 100)) || steps=100
    echo "bench-stencil-grid: $app edge $edge: ~$per_step us/step untraced at $NP ranks -> $steps steps" >&2
    log="$out/$app-$edge.txt"
    EDGE=$edge WORK=0 NPS=$NP APPS=$app ROUNDS=$ROUNDS BUILD_DIR=$BUILD_DIR \
      env "STEPS_${app}_${NP}=$steps" scripts/bench-stencil-overhead.sh >"$log" 2>"$out/err.txt"
    # Whole-run line (steps == $steps) and the fixed/per-step line of the inner table.
    run=$(awk -v np="$NP" -v a="$app" -v s="$steps" '$1==np && $2==a && $3==s && /rounds$/' "$log" | head -n 1)
    per=$(awk -v np="$NP" -v a="$app" -v s="$steps" '$1==np && $2==a && $3==s && NF==7' "$log" | head -n 1)
    anomalies=$(grep -c '^---' "$log" || true)
    # run: ... overhead paired [min-max] ...; per: ranks app steps fixed untr traced ratio
    rows+=("$(printf '%-22s %5s %7s %9s %7s %14s %11s %11s %10s %9s %4s' "$app" "$edge" "$steps" \
      "$(awk '{print $9}' <<<"$run")" "$(awk '{print $10}' <<<"$run")" "$(awk '{print $11}' <<<"$run")" \
      "$(awk '{print $5}' <<<"$per")" "$(awk '{print $6}' <<<"$per")" "$(awk '{print $7}' <<<"$per")" \
      "$(awk '{print $4}' <<<"$per")" "$anomalies")")
  done
done

echo
echo "=== Stencil overhead vs local block size, $NP ranks, $ROUNDS alternating rounds ==="
printf '%-22s %5s %7s %9s %7s %14s %11s %11s %10s %9s %4s\n' program edge steps overhead paired \
  "[min-max]" "untr us/st" "trac us/st" "per-step x" "fixed s" anom
printf '%s\n' "${rows[@]}"
echo "overhead: median traced / median untraced - 1 over whole runs; paired: traced/untraced of the"
echo "two back-to-back runs of a round (median and range); us/st: wall time per step with the 10-step"
echo "runs' time taken out (fixed: traced - untraced at 10 steps); anom: runs that failed, printed a"
echo "different result or wrote unexpected stderr (see scripts/bench-stencil-overhead.sh)"
