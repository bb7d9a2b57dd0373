#!/usr/bin/env bash
# Overhead of the clang front end (libtracefold_memrt) against the native
# program and the Valgrind tool, side by side in one run, on
# tests/memtrace/kernels/vadd_slices.c (T threads each adding N doubles of
# shared heap arrays; 3N references per thread between START and STOP).
# Both binaries are built here with clang-16 at -O1 without vectorisation:
# `native` plain, `cov` with the load/store callbacks and the runtime.
# Rows: native; cov without TRACEFOLD_MEM_DIR (callbacks that return at
# once); cov recording between START and STOP; tracefold-mem recording the
# native binary the same way; valgrind --tool=none on it. Whole-program
# times (the fill loop and the final sum included), one run each; wall and
# CPU (user + sys) seconds and the ratio to native. The load is printed at
# the start and the end.
#   scripts/bench-memtrace-clang.sh BUILD_DIR [T] [N]   (defaults 4 2000000)
set -uo pipefail
B=$(realpath "$1"); T=${2:-4}; N=${3:-2000000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
TFM=$B/src/memtrace/tracefold-mem
RT=$B/src/memtrace
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
CFLAGS=(-O1 -g -fno-vectorize -fno-slp-vectorize -I"$SRC/include")
clang-16 "${CFLAGS[@]}" "$SRC/tests/memtrace/kernels/vadd_slices.c" -o native -lpthread || exit 1
clang-16 "${CFLAGS[@]}" -fsanitize-coverage=func,trace-loads,trace-stores \
  -fno-sanitize-link-runtime "$SRC/tests/memtrace/kernels/vadd_slices.c" -o cov \
  -L"$RT" -ltracefold_memrt -Wl,-rpath,"$RT" -lpthread || exit 1
echo "start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
echo "vadd_slices $T $N: $((3 * T * N)) references between START and STOP"
echo "| run | wall s | CPU s | wall / native | CPU / native | raw log |"
echo "|---|---|---|---|---|---|"
base_e=0 base_c=0
row() {
  local label=$1 dir=$2
  shift 2
  rm -rf raw && mkdir raw
  /usr/bin/time -f "%e %U %S" -o time.txt "$@" >/dev/null 2>err.txt || {
    echo "| $label | failed: $(tail -1 err.txt) |"
    return
  }
  read -r e u s < <(tail -1 time.txt)
  local size=-
  [[ $dir == raw ]] && size=$(du -sm raw | cut -f1)" MB"
  [[ $base_e == 0 ]] && base_e=$e base_c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
  awk -v l="$label" -v e="$e" -v u="$u" -v s="$s" -v be="$base_e" -v bc="$base_c" -v z="$size" \
    'BEGIN { c = u + s; re = be > 0 ? e / be : 0; rc = bc > 0 ? c / bc : 0
             printf "| %s | %.2f | %.2f | %.1f | %.1f | %s |\n", l, e, c, re, rc, z }'
}
row "native (clang-16 -O1)" - ./native "$T" "$N"
row "cov, no TRACEFOLD_MEM_DIR" - ./cov "$T" "$N"
row "cov, recording START..STOP" raw env TRACEFOLD_MEM_DIR=raw TRACEFOLD_MEM_RECORD_AT_START=no \
  TRACEFOLD_MEM_QUIET=1 ./cov "$T" "$N"
row "tracefold-mem --record-at-start=no --raw-log" raw "$TFM" -q --record-at-start=no \
  --raw-log=raw ./native "$T" "$N"
row "valgrind --tool=none" - valgrind -q --tool=none ./native "$T" "$N"
echo "end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
