#!/usr/bin/env bash
# Throughput of `tracefold memreplay` on a raw log of a few million
# references, side by side in one run: reading the log (cat), --raw (text
# to /dev/null) and --raw-log (the binary streams, to a directory) of the
# raw log and of its folded trace, --cache with one level and with three
# levels on both, and the program under cachegrind's cache simulation for
# scale. References per second are over CPU time (user + system, shown
# apart: the system time is mostly the kernel taking the text written, and
# cat's copying the log) and over wall time; the machine's load is printed
# at the start and the end.
#   scripts/bench-memreplay.sh BUILD_DIR [N [OTHER_TRACEFOLD]]
# records BUILD_DIR/tests/memtrace/kernels/vadd N (default 3000000: 3N
# references between START and STOP) with `tracefold memtrace`. With
# OTHER_TRACEFOLD (another build's binary), its `memreplay --raw` runs on
# the same log right after this build's and its --cache on the folded
# trace after this build's, and both builds' outputs are compared (--raw,
# and --cache on both inputs with both hierarchies).
# Last, instructions per reference by callgrind for --raw, --raw-log and
# --cache on the log of vadd N/10 and its folded trace, less the start-up
# (the instructions of `memreplay --help`).
set -uo pipefail
B=$(realpath "$1"); N=${2:-3000000}; OTHER=${3:+$(realpath "$3")}
TF=$B/src/cli/tracefold
K=$B/tests/memtrace/kernels
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
t=$W/time
cd "$W" || exit 1
"$TF" memtrace -q --wait-for-start --raw-log raw -- "$K/vadd" "$N" >/dev/null || exit 1
refs=$(( ($(stat -c %s raw/thread-0.bin) - 24) / 48 ))
"$TF" memtrace-fold raw -o raw.tf >/dev/null || exit 1
echo "start $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
echo "raw log: $refs references, $(du -sh raw | cut -f1)"
echo "| command | wall s | user s | system s | M references/s (CPU) | M references/s (wall) |"
echo "|---|---|---|---|---|---|"
row() {
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$t" "$@" >/dev/null 2>&1 || { echo "| $label | failed |"; return; }
  read -r e u s < <(tail -1 "$t")
  awk -v l="$label" -v e="$e" -v u="$u" -v s="$s" -v r="${ROW_REFS:-$refs}" 'BEGIN {
    c = u + s; rc = c > 0 ? r / c / 1e6 : 0; rw = e > 0 ? r / e / 1e6 : 0
    printf "| %s | %.2f | %.2f | %.2f | %.0f | %.0f |\n", l, e, u, s, rc, rw }'
}
row "cat raw/thread-0.bin" cat raw/thread-0.bin
row "memreplay --raw" "$TF" memreplay raw --raw
if [[ -n $OTHER ]]; then
  row "memreplay --raw ($OTHER)" "$OTHER" memreplay raw --raw
  cmp -s <("$TF" memreplay raw --raw) <("$OTHER" memreplay raw --raw) &&
    same="both --raw outputs identical" || same="the two --raw outputs DIFFER"
fi
row "memreplay --raw (folded trace)" "$TF" memreplay raw.tf --raw
row "memreplay --raw-log (raw log)" "$TF" memreplay raw --raw-log out
row "memreplay --raw-log (folded trace)" "$TF" memreplay raw.tf --raw-log out
cmp -s <(tail -c +25 raw/thread-0.bin) <(tail -c +25 out/thread-0.bin) &&
  rt="--raw-log of the folded trace: every record equal to the log's" ||
  rt="--raw-log of the folded trace DIFFERS from the log"
rm -rf out
L1=L1=32K:8:64
L3=L1=32K:8:64,L2=1M:16:64,L3=8M:16:64
row "memreplay --cache $L1 (raw log)" "$TF" memreplay raw --cache $L1
row "memreplay --cache $L3 (raw log)" "$TF" memreplay raw --cache $L3
row "memreplay --cache $L1 (folded trace)" "$TF" memreplay raw.tf --cache $L1
row "memreplay --cache $L3 (folded trace)" "$TF" memreplay raw.tf --cache $L3
if [[ -n $OTHER ]]; then
  row "memreplay --cache $L1 (folded trace, $OTHER)" "$OTHER" memreplay raw.tf --cache $L1
  row "memreplay --cache $L3 (folded trace, $OTHER)" "$OTHER" memreplay raw.tf --cache $L3
  cache_same="both builds' --cache reports identical (raw log and folded trace, 1 and 3 levels)"
  for in in raw raw.tf; do
    for c in $L1 $L3; do
      cmp -s <("$TF" memreplay $in --cache $c) <("$OTHER" memreplay $in --cache $c) ||
        cache_same="the two builds' --cache reports DIFFER ($in, $c)"
    done
  done
fi
row "memtrace-stats" "$TF" memtrace-stats raw
# Cachegrind runs the whole program (initialisation and the final sum
# too): its rate is over its own data references (Dr + Dw).
valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=cg.out "$K/vadd" "$N" \
  >/dev/null 2>&1
ROW_REFS=$(awk '/^events:/ { for (i = 2; i <= NF; i++) c[$i] = i }
  /^summary:/ { print $c["Dr"] + $c["Dw"] }' cg.out) \
  row "cachegrind --cache-sim=yes (the whole program, its Dr + Dw)" \
  valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file=/dev/null "$K/vadd" "$N"
[[ -n $OTHER ]] && echo "$same" && echo "$cache_same"
echo "$rt"
# Instructions (callgrind) per reference, start-up taken out.
n=$((N / 10))
"$TF" memtrace -q --wait-for-start --raw-log small -- "$K/vadd" "$n" >/dev/null || exit 1
"$TF" memtrace-fold small -o small.tf >/dev/null || exit 1
srefs=$(( ($(stat -c %s small/thread-0.bin) - 24) / 48 ))
ir() {
  valgrind --tool=callgrind --callgrind-out-file=cg.ir "$@" >/dev/null 2>&1 || { echo 0; return; }
  awk '/^summary:/ { print $2 }' cg.ir
}
base=$(ir "$TF" memreplay --help)
echo "instructions per reference (callgrind, $srefs references, start-up $base instructions taken out):"
echo "| command | instructions | per reference |"
echo "|---|---|---|"
for c in "raw --raw" "small.tf --raw" "raw --raw-log out" "small.tf --raw-log out" \
  "raw --cache $L1" "small.tf --cache $L1" "raw --cache $L3" "small.tf --cache $L3"; do
  read -r in mode arg <<<"$c"
  [[ $in == raw ]] && in=small
  i=$(ir "$TF" memreplay "$in" $mode $arg)
  awk -v c="memreplay $in $mode${arg:+ $arg}" -v i="$i" -v b="$base" -v r="$srefs" \
    'BEGIN { printf "| %s | %d | %.1f |\n", c, i, (i - b) / r }'
  rm -rf out
done
echo "end $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg)"
