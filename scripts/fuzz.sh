#!/usr/bin/env bash
# Fuzzes every reader: builds the libFuzzer targets of fuzz/ with clang++-16
# (ASan + UBSan) and runs each for SECONDS, one after the other, on one core.
#   scripts/fuzz.sh SECONDS [TARGET...]     (targets: trace_text trace_compact
#                                            rawlog timeline samples merge)
# FUZZ_TIMEOUT (default 20) is libFuzzer's per-input limit in seconds: on
# a machine loaded far past its cores a starved run can pass 20 s on an
# input that takes 0.3 s of CPU (seen at load 28 on 2 cores), which
# libFuzzer reports as a timeout finding; rerun such an artifact alone.
# Each run starts from the committed corpus fuzz/corpus/TARGET and grows a
# working copy in $FUZZ_WORK (default build-fuzz/work); crashes go to
# $FUZZ_WORK/TARGET/artifacts. Add a finding to fuzz/corpus/TARGET once it
# is fixed, so tests/fuzz/corpus.sh keeps it fixed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_EACH=${1:?usage: fuzz.sh SECONDS [TARGET...]}
shift
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(trace_text trace_compact rawlog timeline samples merge)
BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
WORK=${FUZZ_WORK:-$BUILD/work}
CXX=${FUZZ_CXX:-$(command -v clang++-16 || true)}
[[ -n "$CXX" ]] || { echo "fuzz.sh: clang++-16 not found (scripts/install-deps.sh)" >&2; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$ROOT/fuzz" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j2 >/dev/null

status=0
for t in "${TARGETS[@]}"; do
  mkdir -p "$WORK/$t/corpus" "$WORK/$t/artifacts"
  cp -n "$ROOT/fuzz/corpus/$t/"* "$WORK/$t/corpus/" 2>/dev/null || true
  log="$WORK/$t/log"
  rc=0
  "$BUILD/fuzz_$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -timeout="${FUZZ_TIMEOUT:-20}" -print_final_stats=1 -artifact_prefix="$WORK/$t/artifacts/" \
    "$WORK/$t/corpus" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  found=$(find "$WORK/$t/artifacts" -type f | wc -l)
  echo "$t: ${SECONDS_EACH}s, $execs executions, exit $rc, $found findings in $WORK/$t/artifacts"
  ((rc == 0)) || status=1
done
exit $status
