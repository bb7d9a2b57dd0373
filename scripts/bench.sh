#!/usr/bin/env bash
# Builds the Google Benchmark programs in Release (separate build dir) and runs
# them: folding throughput (fold_bench) and the 1,024-rank merge (merge_bench).
# Takes about a minute on 2 cores (plus the first build).
#
#   scripts/bench.sh                       # both benchmarks
#   MIN_TIME=2 scripts/bench.sh            # longer, steadier runs
#   scripts/bench.sh --benchmark_filter=Regular   # extra args go to both programs
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build-bench}"
MIN_TIME="${MIN_TIME:-0.5}"   # seconds per benchmark (libbenchmark 1.7: plain number)

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTRACEFOLD_BUILD_TESTS=OFF -DTRACEFOLD_BUILD_BENCH=ON >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target fold_bench merge_bench

run() {
  echo
  echo "=== $1 ==="
  "$BUILD_DIR/bench/$1" --benchmark_min_time="$MIN_TIME" --benchmark_counters_tabular=true "${@:2}"
}
run fold_bench "$@"
run merge_bench "$@"
