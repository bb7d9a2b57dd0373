#!/usr/bin/env bash
# The seed's own comparison for `tracefold diagnose` (seed 002), side by
# side in one run: the same program run plain, with `record --timeline`
# and with `record --sample PERIOD`; time overhead of each against plain,
# bytes written (timeline, samples, bytes per sample), and the analysis
# time of `diagnose` against `analyze` and against the run time (target:
# serial diagnosis <= 0.25 x run time for 4 ranks x 30 s at 250 Hz).
#
# The program is examples/diagnose/diag_problems.c in its `imbalance` mode
# (sleeping work, so the run time is set by the design, not by the
# machine's load): STEPS steps of up to 4 units of UNIT_MS.
#   BUILD_DIR=build NP=4 STEPS=1500 UNIT_MS=5 PERIOD=4ms scripts/bench-diagnose.sh
# (the defaults: 4 ranks, about 30 s, 250 Hz).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
BUILD_DIR="${BUILD_DIR:-build}"
NP="${NP:-4}"
STEPS="${STEPS:-1500}"
UNIT_MS="${UNIT_MS:-5}"
PERIOD="${PERIOD:-4ms}"
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-diagnose: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpicc -O2 -g examples/diagnose/diag_problems.c -o "$work/diag"
cd "$work"
now() { date +%s.%N; }
run() {  # run NAME CMD...: wall seconds into $NAME.s
  local name=$1 t0 t1
  shift
  t0=$(now)
  "$@" >"$name.out" 2>"$name.err"
  t1=$(now)
  echo "$t1 - $t0" | bc -l >"$name.s"
}
run plain mpirun -np "$NP" ./diag "$STEPS" imbalance "$UNIT_MS"
run timeline "$TF" record --timeline -o tl.tf -- mpirun -np "$NP" ./diag "$STEPS" imbalance "$UNIT_MS"
run sample "$TF" record --sample "$PERIOD" -o sm.tf -- mpirun -np "$NP" ./diag "$STEPS" imbalance "$UNIT_MS"
run diagnose "$TF" diagnose sm.tf -o sm.json
run analyze "$TF" analyze sm.tf -o sm-waits.json
bytes() { cat "$@" 2>/dev/null | wc -c; }
tl_bytes=$(bytes sm.tf.timeline/rank-*.tft)
sm_bytes=$(bytes sm.tf.timeline/samples-*.tfs)
samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' sm.json)
p=$(cat plain.s); t=$(cat timeline.s); s=$(cat sample.s); d=$(cat diagnose.s); a=$(cat analyze.s)
printf 'program: diag_problems imbalance, %s ranks, %s steps of up to %s x %s ms; sampling every %s\n' \
  "$NP" "$STEPS" "$NP" "$UNIT_MS" "$PERIOD"
printf 'wall: plain %.2f s, --timeline %.2f s (%.3f x), --sample %.2f s (%.3f x)\n' \
  "$p" "$t" "$(echo "$t / $p" | bc -l)" "$s" "$(echo "$s / $p" | bc -l)"
printf 'bytes per rank: timeline %d, samples %d (%s samples in all: %.2f bytes per sample)\n' \
  "$((tl_bytes / NP))" "$((sm_bytes / NP))" "$samples" "$(echo "$sm_bytes / $samples" | bc -l)"
printf 'analysis: diagnose %.2f s (%.3f x the plain run), analyze %.2f s (diagnose / analyze %.2f)\n' \
  "$d" "$(echo "$d / $p" | bc -l)" "$a" "$(echo "$d / $a" | bc -l)"
grep -A3 '^tracefold: samples' sample.err | head -2 || true
