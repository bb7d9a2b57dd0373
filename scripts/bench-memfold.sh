#!/usr/bin/env bash
# Speed of `tracefold memtrace-fold` on the sparse product kernel
# (tests/memtrace/kernels/spmv.c, irregular: its rows' lengths and columns
# follow data) and the regular vector add, with one build's tracefold and,
# optionally, another's side by side on the same raw logs, runs alternated.
# Prints the load at the start and the end, a markdown table of
# references a second over CPU time (user + system, the best of REPS runs)
# and callgrind's instructions per reference (the whole command: reading,
# folding, writing the trace), and whether both builds write the same
# bytes.
#
# usage: scripts/bench-memfold.sh BUILD_DIR [OTHER_TRACEFOLD]
#   SPMV="10000 2"   spmv N R
#   VADD="3 100000"  vadd_slices THREADS N
#   REPS=5           timed runs of each command
set -uo pipefail
B=$(realpath "$1")
OTHER=${2:+$(realpath "$2")}
TF=$B/src/cli/tracefold
K=$B/tests/memtrace/kernels
SPMV=${SPMV:-10000 2} VADD=${VADD:-3 100000} REPS=${REPS:-5}
for f in "$TF" "$K/spmv" "$K/vadd_slices" ${OTHER:+"$OTHER"}; do
  [[ -x $f ]] || { echo "missing $f (build first)" >&2; exit 1; }
done
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
# shellcheck disable=SC2086
"$TF" memtrace -q --wait-for-start --raw-log spmv -- "$K/spmv" $SPMV >/dev/null || exit 1
# shellcheck disable=SC2086
"$TF" memtrace -q --wait-for-start --raw-log vadd -- "$K/vadd_slices" $VADD >/dev/null || exit 1
refs() { "$TF" memtrace-fold "$1" -o refs.tf | grep -o '^[^:]*: [0-9]*' | grep -o '[0-9]*$'; }
echo "start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
# cpu TF LOG: the best CPU seconds (user + system) of REPS folds.
declare -A BEST
labels=(this)
[[ -n $OTHER ]] && labels+=(other)
bin() { [[ $1 == this ]] && echo "$TF" || echo "$OTHER"; }
for log in spmv vadd; do
  for ((r = 0; r < REPS; r++)); do
    for l in "${labels[@]}"; do
      /usr/bin/time -f "%U %S" -o t "$(bin "$l")" memtrace-fold "$log" -o "$l-$log.tf" >/dev/null 2>&1 ||
        { echo "$l: memtrace-fold $log failed" >&2; exit 1; }
      c=$(awk '{ print $1 + $2 }' t)
      k="$l $log"
      if [[ -z ${BEST[$k]:-} ]] || awk -v a="$c" -v b="${BEST[$k]}" 'BEGIN { exit !(a < b) }'; then
        BEST[$k]=$c
      fi
    done
  done
done
ir() {
  valgrind --tool=callgrind --dump-instr=no --callgrind-out-file=cg.out "$@" >/dev/null 2>&1 ||
    { echo 0; return; }
  awk '/^summary:|^totals:/ { print $2; exit }' cg.out
}
echo "| log | references | tracefold | CPU s (best of $REPS) | M references/s (CPU) | instructions/reference (callgrind) |"
echo "|---|---|---|---|---|---|"
for log in spmv vadd; do
  n=$(refs "$log")
  for l in "${labels[@]}"; do
    i=$(ir "$(bin "$l")" memtrace-fold "$log" -o cg.tf)
    awk -v name="$log" -v n="$n" -v l="$l" -v c="${BEST[$l $log]}" -v i="$i" 'BEGIN {
      printf "| %s | %d | %s | %.3f | %.1f | %.0f |\n", name, n, l, c, (c > 0 ? n / c / 1e6 : 0), i / n }'
  done
  if [[ -n $OTHER ]]; then
    cmp -s "this-$log.tf" "other-$log.tf" && echo "$log: both traces identical" ||
      echo "$log: the two traces DIFFER"
  fi
done
echo "end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
