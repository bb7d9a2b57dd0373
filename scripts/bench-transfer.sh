#!/usr/bin/env bash
# What moving one trace costs in a round of the merge at MPI_Finalize, per
# form (bench/transfer_cost.cpp): the text form, the compact transfer form
# the rounds use, the file's compact form and that form as the merge at
# MPI_Finalize writes it (fields derived wherever shorter). Instructions under callgrind
# inside move_trace only (the sender's encoding and the receiver's
# decoding), and bytes on the wire.
#   TRACE=FILE scripts/bench-transfer.sh     a trace of your own
#   scripts/bench-transfer.sh                records amg_like NCYCLES (default
#                                            1000) at NP ranks (default 16)
# Ranks beyond 2 are oversubscribed on a 2-core machine. Needs valgrind
# (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BIN=$BUILD_DIR/bench/transfer_cost
[[ -x $BIN ]] || { echo "bench-transfer: build first: cmake --build $BUILD_DIR --target transfer_cost" >&2; exit 2; }
command -v valgrind >/dev/null || apt-get install -y valgrind >/dev/null
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
TRACE=${TRACE:-}
if [[ -z $TRACE ]]; then
  NP=${NP:-16} NCYCLES=${NCYCLES:-1000}
  [[ -x $BUILD_DIR/tests/apps/app_amg_like ]] ||
    { echo "bench-transfer: build first: cmake --build $BUILD_DIR --target app_amg_like" >&2; exit 2; }
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  TRACE=$WORK/amg.tf
  "$BUILD_DIR/src/cli/tracefold" record -o "$TRACE" -- mpirun -np "$NP" \
    "$BUILD_DIR/tests/apps/app_amg_like" "$NCYCLES" >"$WORK/record.txt" 2>&1 ||
    { cat "$WORK/record.txt" >&2; exit 1; }
  echo "trace: amg_like $NCYCLES at $NP ranks, $(stat -c %s "$TRACE") bytes"
fi
printf '%-9s %12s %16s\n' form bytes instructions
for form in text transfer compact final; do
  out=$(valgrind --tool=callgrind --toggle-collect='*move_trace*' \
    --callgrind-out-file="$WORK/cg.$form" "$BIN" "$form" "$TRACE" 2>&1) ||
    { echo "$out" >&2; exit 1; }
  grep -q "reads back the same" <<<"$out" || { echo "bench-transfer: $form: $out" >&2; exit 1; }
  bytes=$(sed -n 's/.* \([0-9]*\) bytes reads back.*/\1/p' <<<"$out")
  ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out")
  printf '%-9s %12s %16s\n' "$form" "$bytes" "$ir"
done
