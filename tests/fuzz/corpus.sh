#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/) once over each input of its committed
# corpus (fuzz/corpus/TARGET: reproducers of past findings and valid
# samples) under ASan and UBSan. Fails if any input crashes, leaks, hits
# undefined behaviour, allocates more than 1 GiB at once or runs 20 s.
#   corpus.sh SOURCE_DIR BUILD_DIR [CLANG++]
# BUILD_DIR holds the fuzz targets; when they are not built (the main build
# had no clang++-16), they are configured and built there first.
set -euo pipefail
SRC=$1
BUILD=$2
CXX=${3:-}
TARGETS=(trace_text trace_compact rawlog timeline samples merge)

if [[ ! -x "$BUILD/fuzz_merge" ]]; then
  [[ -n "$CXX" && "$CXX" != *NOTFOUND ]] || CXX=$(command -v clang++-16 || true)
  if [[ -z "$CXX" ]]; then
    echo "FAIL: clang++-16 is needed for the fuzz targets (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$SRC/fuzz" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER="$CXX" "${launcher[@]}" >/dev/null
  cmake --build "$BUILD" -j2 >/dev/null
fi

status=0
for t in "${TARGETS[@]}"; do
  dir="$SRC/fuzz/corpus/$t"
  mapfile -t inputs < <(find "$dir" -type f | sort)
  if ((${#inputs[@]} == 0)); then
    echo "FAIL: $t: empty corpus $dir" >&2
    status=1
    continue
  fi
  log=$(mktemp)
  # Given files (not a directory), libFuzzer runs each once and stops.
  if "$BUILD/fuzz_$t" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 "${inputs[@]}" \
    >"$log" 2>&1; then
    echo "$t: ${#inputs[@]} inputs ok"
  else
    echo "FAIL: $t" >&2
    grep -E "ERROR|runtime error|SUMMARY|Running:" "$log" | tail -20 >&2
    status=1
  fi
  rm -f "$log"
done
exit $status
