#!/usr/bin/env bash
# Throughput of `tracefold analyze` (serial) next to the run it analyses:
# records app_stencil2d_nonperiodic with --timeline at NP ranks for STEPS
# steps, then times the analysis. Prints, on one line per run, the run's
# own wall time (tracefold record's launch to exit), the analysis's wall
# time and CPU time (user + system, which a loaded machine does not
# inflate), the ratio of analysis to run wall time and events per second
# per analysed rank (by CPU time). The target is an analysis shorter than
# the run (ratio < 1).
#   BUILD_DIR=build NP=4 STEPS="2000 8000" scripts/bench-analyze.sh
# The parallel analysis (mpirun) is not built yet, so only serial is measured.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
NP="${NP:-4}"
STEPS="${STEPS:-2000 8000}"
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-analyze: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APP=$(realpath "$BUILD_DIR/tests/apps/app_stencil2d_nonperiodic")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
printf '%-6s %4s %9s %8s %10s %8s %7s %14s\n' steps np events "run s" "analyze s" "cpu s" ratio "events/s/rank"
for steps in $STEPS; do
  t0=$(now)
  "$TF" record --timeline -o "$work/s.tf" -- mpirun -np "$NP" "$APP" "$steps" >/dev/null 2>"$work/rec.err"
  t1=$(now)
  /usr/bin/time -f '%U %S' -o "$work/cpu" "$TF" analyze "$work/s.tf" -o "$work/s.json" 2>"$work/an.err"
  t2=$(now)
  cpu=$(awk '{print $1 + $2}' "$work/cpu")
  events=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$work/s.json")
  awk -v s="$steps" -v np="$NP" -v e="$events" -v r="$(echo "$t1 - $t0" | bc)" -v a="$(echo "$t2 - $t1" | bc)" -v c="$cpu" \
    'BEGIN { printf "%-6s %4s %9d %8.3f %10.3f %8.3f %7.3f %14.0f\n", s, np, e, r, a, c, a / r, e / (c > 0 ? c : a) / np }'
done
