#!/usr/bin/env bash
# Instructions the recorder spends after each MPI call, with the call-path
# cache off and on, side by side: rank 0 of a 2-rank stencil3d run under
# callgrind, counting only inside the recorder's end-of-call work
# (tracefold::record::Call::~Call, inclusive: call site, lock, queue,
# folding), divided by the calls rank 0 made (from the trace). Instruction
# counts do not move with the machine's load, unlike wall times.
#   BUILD_DIR=build STEPS=300 EDGE=8 scripts/bench-callpath.sh
# KEEP_DIR=DIR keeps the callgrind files there (callgrind_annotate them);
# MODES=on runs the cache-on row only. Two runs at different STEPS give
# the steady state: the difference in instructions over the difference in
# calls leaves out the fixed warm-up (the first iterations fold through
# the general path).
# Needs valgrind (Debian package valgrind; installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BUILD_DIR="${BUILD_DIR:-build}"
STEPS="${STEPS:-300}"
EDGE="${EDGE:-8}"
source scripts/lib/callgrind.bash
callgrind_need
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-callpath: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APP=$(realpath "$BUILD_DIR/tests/apps/app_stencil3d")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
callgrind_rank0 "$work/rank0.sh"
printf '%-10s %8s %14s %12s\n' cache calls instructions "per call"
for mode in ${MODES:-off on}; do
  (cd "$work" && CG_OUT="$work/cg.$mode" TRACEFOLD_PATH_CACHE=$mode "$TF" record -o "$work/$mode.tf" -- \
    mpirun -np 2 "$work/rank0.sh" "$APP" "$STEPS" 0 "$EDGE" >/dev/null 2>"$work/err.$mode")
  total=$(callgrind_total "$work/cg.$mode")
  calls=$("$TF" expand "$work/$mode.tf" -r 0 | grep -c -E '^MPI_' || true)
  awk -v m="$mode" -v c="$calls" -v t="$total" 'BEGIN{printf "%-10s %8d %14d %12.0f\n", m, c, t, t / c}'
  if [[ -n ${KEEP_DIR:-} ]]; then mkdir -p "$KEEP_DIR" && cp "$work/cg.$mode" "$KEEP_DIR/"; fi
done
