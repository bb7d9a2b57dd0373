#!/usr/bin/env bash
# Serial against parallel `tracefold diagnose`, side by side in one run: one
# recording of examples/diagnose/diag_problems.c (`partial` mode, NP ranks,
# sampled every PERIOD), then ROUNDS rounds of the serial command and of
# `mpirun -np K tracefold diagnose` for each K in KS. Per command: wall time
# (the launcher's start-up included), and the peak resident memory of each
# process (/usr/bin/time around every analysis rank). Every parallel report
# is compared byte for byte with the serial one.
#   BUILD_DIR=build NP=32 STEPS=20 PERIOD=250us KS="2 4" ROUNDS=3 scripts/bench-diagnose-parallel.sh
# APP=stencil records the build's test app app_stencil2d_nonperiodic
# instead (STEPS iterations, --timeline, no samples): a run whose analysis
# is all event side, where rank 0's memory is that of every rank's events.
#   APP=stencil BUILD_DIR=build NP=8 STEPS=15000 KS="2 4" ROUNDS=3 scripts/bench-diagnose-parallel.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
BUILD_DIR="${BUILD_DIR:-build}"
NP="${NP:-32}"
STEPS="${STEPS:-20}"
PERIOD="${PERIOD:-250us}"
KS="${KS:-2 4}"
ROUNDS="${ROUNDS:-3}"
APP="${APP:-diag}"
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-diagnose-parallel: build first" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
case $APP in
  diag)
    mpicc -O2 -g examples/diagnose/diag_problems.c -o "$work/diag"
    cd "$work"
    "$TF" record --sample "$PERIOD" -o big.tf -- mpirun -np "$NP" ./diag "$STEPS" partial 20 \
      >record.out 2>&1
    ;;
  stencil)
    stencil=$(realpath "$BUILD_DIR/tests/apps/app_stencil2d_nonperiodic")
    cd "$work"
    "$TF" record --timeline -o big.tf -- mpirun -np "$NP" "$stencil" "$STEPS" >record.out 2>&1
    ;;
  *) echo "bench-diagnose-parallel: APP is diag or stencil, not $APP" >&2; exit 2 ;;
esac
now() { date +%s.%N; }
# measure NAME CMD...: wall seconds and each process's peak RSS (KiB).
measure() {
  local name=$1 t0 t1
  shift
  rm -f "$name".rss.*
  t0=$(now)
  "$@" >"$name.out" 2>"$name.err"
  t1=$(now)
  printf '%s %.2f' "$name" "$(echo "$t1 - $t0" | bc -l)"
  for f in "$name".rss.*; do printf ' %s' "$(($(cat "$f") / 1024))"; done
  printf '\n'
}
echo "load before: $(cat /proc/loadavg)"
"$TF" diagnose big.tf -o serial.json 2>/dev/null
if [[ $APP == diag ]]; then
  samples=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"])' serial.json)
  echo "recording: $NP ranks, $samples samples ($STEPS steps of partial, --sample $PERIOD)"
else
  echo "recording: $NP ranks, $STEPS steps of app_stencil2d_nonperiodic, timeline only" \
    "($(du -sk big.tf.timeline | cut -f1) KiB of timeline)"
fi
echo "command wall-s peak-MB-per-process"
for round in $(seq "$ROUNDS"); do
  measure serial /usr/bin/time -f %M -o serial.rss.0 "$TF" diagnose big.tf -o serial.json
  for k in $KS; do
    measure "np$k" mpirun -np "$k" sh -c \
      "exec /usr/bin/time -f %M -o np$k.rss.\$OMPI_COMM_WORLD_RANK $TF diagnose big.tf -o np$k.json"
    cmp -s serial.json "np$k.json" || echo "np$k: REPORT DIFFERS from the serial one"
  done
done
echo "load after: $(cat /proc/loadavg)"
