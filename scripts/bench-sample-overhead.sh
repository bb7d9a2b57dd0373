#!/usr/bin/env bash
# Sampling overhead (issue 31, docs/sampling.md): each program run plain,
# with `record --timeline`, and with `record --sample` at 200 Hz (5ms) and
# 1 kHz (1ms), the configurations alternating, REPEAT times each (default
# 3). Prints per program and configuration the median wall time (launch to
# exit, `tracefold record` included), the ratio to the timeline run (what
# the samples add to a timeline recording) and to the plain run, and for
# sampled runs the samples kept and the handler's median cost.
#   BUILD_DIR=build REPEAT=5 scripts/bench-sample-overhead.sh
#   PROGRAMS="stencil2d_nonperiodic:4:30000" scripts/bench-sample-overhead.sh
# CONFIGS="plain timeline sample5ms only5ms" adds `--sample=5ms --sample-only`
# (no folding) beside the others.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
TF=$BUILD_DIR/src/cli/tracefold
APPS=$BUILD_DIR/tests/apps
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
REPEAT=${REPEAT:-3}
PROGRAMS=${PROGRAMS:-"sample_work:2:3 stencil2d_nonperiodic:4:30000 mg_vcycle:4:1000"}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
export OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
read -r -a CONFIGS <<<"${CONFIGS:-plain timeline sample5ms sample1ms}"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run() {
  local config=$1 name=$2 np=$3 steps=$4 t0 t1
  local cmd=("$MPIRUN" -np "$np" "$APPS/app_$name" "$steps")
  t0=$(date +%s.%N)
  case $config in
    plain) "${cmd[@]}" >/dev/null 2>err.txt ;;
    timeline) "$TF" record --timeline -o t.tf -- "${cmd[@]}" >/dev/null 2>err.txt ;;
    sample5ms) "$TF" record --sample=5ms -o t.tf -- "${cmd[@]}" >/dev/null 2>err.txt ;;
    sample1ms) "$TF" record --sample=1ms -o t.tf -- "${cmd[@]}" >/dev/null 2>err.txt ;;
    only5ms) "$TF" record --sample=5ms --sample-only -o t.tf -- "${cmd[@]}" >/dev/null 2>err.txt ;;
  esac
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$name.$config.times"
  grep -o '[0-9]* kept of' err.txt | awk '{ print $1 }' >>"$name.$config.kept" || true
  grep -o 'cost median [0-9.]* us' err.txt | awk '{ print $3 }' >>"$name.$config.cost" || true
}

printf '%-24s %-10s %8s %8s %8s %9s %10s\n' program config wall_s /timeline /plain kept median_us
for p in $PROGRAMS; do
  IFS=: read -r name np steps <<<"$p"
  for ((k = 0; k < REPEAT; k++)); do
    for c in "${CONFIGS[@]}"; do run "$c" "$name" "$np" "$steps"; done
  done
  plain=$(median <"$name.plain.times")
  timeline=$(median <"$name.timeline.times")
  for c in "${CONFIGS[@]}"; do
    w=$(median <"$name.$c.times")
    kept=-
    cost=-
    [[ -s $name.$c.kept ]] && kept=$(median <"$name.$c.kept")
    [[ -s $name.$c.cost ]] && cost=$(median <"$name.$c.cost")
    printf '%-24s %-10s %8.3f %8.3f %8.3f %9s %10s\n' "$name:$np:$steps" "$c" "$w" \
      "$(awk -v a="$w" -v b="$timeline" 'BEGIN { print a / b }')" \
      "$(awk -v a="$w" -v b="$plain" 'BEGIN { print a / b }')" "$kept" "$cost"
  done
done
