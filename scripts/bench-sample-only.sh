#!/usr/bin/env bash
# Instructions the recorder spends after each MPI call with `record
# --sample` (the folder on) and with `record --sample --sample-only` (no
# folder: each call goes to the event log), side by side: rank 0 of a
# 2-rank stencil3d run under callgrind, counting only inside the
# recorder's end-of-call work (tracefold::record::Call::~Call, inclusive:
# call site, lock, queue, folding or the event log, timeline, samples),
# divided by the calls rank 0 made (from the --sample run's trace; the
# program makes the same calls in both). Instruction counts do not move
# with the machine's load, unlike wall times.
#   BUILD_DIR=build STEPS=300 EDGE=8 PERIOD=5ms scripts/bench-sample-only.sh
# KEEP_DIR=DIR keeps the callgrind files there (callgrind_annotate them).
# Needs valgrind (Debian package valgrind; installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BUILD_DIR="${BUILD_DIR:-build}"
STEPS="${STEPS:-300}"
EDGE="${EDGE:-8}"
PERIOD="${PERIOD:-5ms}"
source scripts/lib/callgrind.bash
callgrind_need
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-sample-only: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APP=$(realpath "$BUILD_DIR/tests/apps/app_stencil3d")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
callgrind_rank0 "$work/rank0.sh"
calls=
printf '%-14s %8s %14s %12s\n' record calls instructions "per call"
for mode in sample sample-only; do
  opts=(--sample="$PERIOD")
  [[ $mode == sample-only ]] && opts+=(--sample-only)
  (cd "$work" && CG_OUT="$work/cg.$mode" "$TF" record "${opts[@]}" -o "$work/$mode.tf" -- \
    mpirun -np 2 "$work/rank0.sh" "$APP" "$STEPS" 0 "$EDGE" >/dev/null 2>"$work/err.$mode")
  total=$(callgrind_total "$work/cg.$mode")
  [[ -z $calls ]] && calls=$("$TF" expand "$work/$mode.tf" -r 0 | grep -c -E '^MPI_' || true)
  awk -v m="$mode" -v c="$calls" -v t="$total" 'BEGIN{printf "%-14s %8d %14d %12.0f\n", m, c, t, t / c}'
  if [[ -n ${KEEP_DIR:-} ]]; then mkdir -p "$KEEP_DIR" && cp "$work/cg.$mode" "$KEEP_DIR/"; fi
done
