#!/usr/bin/env bash
# Memory traces of the MPI halo kernel (tests/memtrace/kernels/halo.c):
# folding all ranks' raw logs at once against folding the two halves
# (ranks 0..P/2-1 and P/2..P-1) and merging them with `tracefold merge`,
# side by side on one recording per rank count. Prints a markdown table:
# references, the trace's size, processor time (user + system, from
# /usr/bin/time) and peak memory of each step, whether the merged file is
# the whole fold byte for byte, and the load average.
#
# usage: scripts/bench-memmerge.sh [BUILD_DIR]
#   RANKS="2 4 8"     rank counts
#   ARGS="32 256 10"  halo ROWS COLS ITERS
#   WORKERS=2         worker threads a rank (halo's 4th argument)
set -euo pipefail
BUILD=$(cd "${1:-build}" && pwd)
TF=$BUILD/src/cli/tracefold
TFM=$BUILD/src/memtrace/tracefold-mem
HALO=$BUILD/tests/memtrace/kernels/halo
RANKS=${RANKS:-2 4 8}
ARGS=${ARGS:-32 256 10}
WORKERS=${WORKERS:-2}
for f in "$TF" "$TFM" "$HALO"; do [[ -x $f ]] || { echo "missing $f (build first)" >&2; exit 1; }; done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

# timed OUT CMD...: prints "cpu_s peak_MiB wall_s" of CMD; its output in OUT.out
timed() {
  local out=$1
  shift
  /usr/bin/time -f "%U %S %M %e" -o "$out.time" "$@" >"$out.out" 2>"$out.err" ||
    { echo "failed: $* ($(tail -2 "$out.err"))" >&2; exit 1; }
  awk '{ printf "%.2f %.1f %.2f", $1 + $2, $3 / 1024, $4 }' "$out.time"
}

echo "halo $ARGS, $WORKERS workers a rank; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| ranks | streams | references | trace | fold all: CPU s / MiB | fold halves: CPU s | merge: CPU s / MiB / wall s | merged = fold of all | load |"
echo "|---|---|---|---|---|---|---|---|---|"
for P in $RANKS; do
  rm -rf raw && dirs=()
  for ((r = 0; r < P; r++)); do
    mkdir -p "raw/$r"
    dirs+=("raw/$r")
  done
  mpirun -np "$P" "$TFM" -q --record-at-start=no "--raw-log=raw/%q{OMPI_COMM_WORLD_RANK}" \
    "$HALO" $ARGS "$WORKERS" >/dev/null 2>mpirun.err ||
    { echo "mpirun failed: $(tail -3 mpirun.err)" >&2; exit 1; }
  h=$((P / 2))
  all=$(timed all "$TF" memtrace-fold "${dirs[@]}" -o all.tf)
  lo=$(timed lo "$TF" memtrace-fold "${dirs[@]:0:h}" -o lo.tf)
  hi=$(timed hi "$TF" memtrace-fold "${dirs[@]:h}" -o hi.tf)
  merge=$(timed merge "$TF" merge lo.tf hi.tf -o merged.tf)
  refs=$(sed -n 's/.*: \([0-9]*\) references of \([0-9]*\) streams.*/\1 \2/p' all.out)
  same=no
  cmp -s all.tf merged.tf && same=yes
  read -r a_cpu a_mib _ <<<"$all"
  read -r m_cpu m_mib m_wall <<<"$merge"
  halves=$(echo "$lo $hi" | awk '{ printf "%.2f", $1 + $4 }')
  echo "| $P | ${refs#* } | ${refs% *} | $(stat -c %s all.tf) B | $a_cpu / $a_mib | $halves | $m_cpu / $m_mib / $m_wall | $same | $(cut -d' ' -f1 /proc/loadavg) |"
done
