#!/usr/bin/env bash
# Trace size on programs shaped like real applications (tests/apps/halo26.c,
# mg_vcycle.c, amg_like.c), side by side with their raw per-rank logs, and
# the traced/untraced wall time of the polling code.
#   - halo26_periodic (26 neighbours, three phases, one call site per
#     direction) and halo26 (the same on a non-periodic grid: corner, edge,
#     face and interior ranks differ) at 8, 27 and 64 ranks, STEPS_HALO
#     steps (default 60);
#   - mg_vcycle (recursive V-cycle, 4 levels) at 4, 16 and 64 ranks with
#     CYCLES and 10*CYCLES V-cycles (default 10);
#   - amg_like (irregular neighbours, Iprobe polling) at 4 and 8 ranks;
#   - wall time of amg_like at 4 ranks, untraced and traced, ROUNDS pairs
#     (default 5) in alternating order: median ratio and range.
# Usage: scripts/bench-real-apps.sh [BUILD_DIR]  (default build/; builds it
# if missing). 64-rank runs are 32x oversubscribed on 2 cores: minutes.
# WALL_ONLY=1 runs only the wall-time pairs; PARTS (default "halo mg amg
# wall") picks the tables to run, e.g. PARTS="halo" or PARTS="mg wall".
# PARTS=finalize (not in the default) counts instructions instead: rank 0
# of amg_like at 4 ranks under callgrind, untraced and traced, and where
# the traced run's extra instructions go (the folding of the calls, the
# end of recording at MPI_Finalize: merge, encoding and compression of the
# trace). Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
[[ -x $BUILD/src/cli/tracefold ]] || { ./scripts/install-deps.sh && cmake -S . -B "$BUILD" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build "$BUILD" -j "$(nproc)"; }
TF=$(realpath "$BUILD")/src/cli/tracefold
APPS=$(realpath "$BUILD")/tests/apps
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
STEPS_HALO=${STEPS_HALO:-60}
CYCLES=${CYCLES:-10}
ROUNDS=${ROUNDS:-5}
PARTS=${PARTS:-halo mg amg wall}
[[ -n ${WALL_ONLY:-} ]] && PARTS=wall
part() { [[ " $PARTS " == *" $1 "* ]]; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# size NAME NP STEPS -> "trace_bytes raw_bytes nodes sites"
size_of() {
  local name=$1 np=$2 steps=$3 d="$WORK/$1-$2-$3"
  rm -rf "$d"
  mkdir -p "$d"
  "$TF" record -o "$d/t.tf" --raw-log "$d/raw" -- mpirun -np "$np" "$APPS/app_$name" "$steps" \
    >"$d/out" 2>"$d/err" || { echo "record of $name at $np ranks failed" >&2; cat "$d/err" >&2; return 1; }
  "$TF" diff "$d/raw" "$d/t.tf" >/dev/null || { echo "$name at $np ranks: trace differs from raw logs" >&2; return 1; }
  local ns
  "$TF" print "$d/t.tf" >"$d/print.txt"
  ns=$(sed -nE '1s/.* ([0-9]+) nodes, ([0-9]+) call sites.*/\1 \2/p' "$d/print.txt")
  echo "$(stat -c %s "$d/t.tf") $(du -sb "$d/raw" | cut -f1) $ns"
}

row() {
  local label=$1 t=$2 r=$3 n=$4 s=$5
  printf '| %s | %d | %d | %d | %d | %.0f |\n' "$label" "$n" "$s" "$t" "$r" "$(echo "$r / $t" | bc -l)"
}

if part halo; then
for halo in halo26_periodic halo26; do
  echo "## $halo, $STEPS_HALO steps"
  echo "| ranks | nodes | call sites | trace B | raw B | raw/trace |"
  echo "|---|---|---|---|---|---|"
  declare -A halo_b=()
  for np in 8 27 64; do
    read -r t r n s < <(size_of "$halo" "$np" "$STEPS_HALO")
    halo_b[$np]=$t
    row "$np" "$t" "$r" "$n" "$s"
  done
  printf 'trace at 64 / trace at 8 ranks: %.2f\n\n' "$(echo "${halo_b[64]} / ${halo_b[8]}" | bc -l)"
done
fi

if part mg; then
echo "## mg_vcycle (4 levels)"
echo "| ranks, cycles | nodes | call sites | trace B | raw B | raw/trace |"
echo "|---|---|---|---|---|---|"
declare -A mg
for np in 4 16 64; do
  for c in "$CYCLES" $((10 * CYCLES)); do
    read -r t r n s < <(size_of mg_vcycle "$np" "$c")
    mg[$np/$c]=$t
    row "$np, $c" "$t" "$r" "$n" "$s"
  done
done
for np in 4 16 64; do
  printf '10x cycles (%d ranks): %+.1f%% (%+d B); ' "$np" \
    "$(echo "(${mg[$np/$((10 * CYCLES))]} / ${mg[$np/$CYCLES]} - 1) * 100" | bc -l)" \
    $((mg[$np/$((10 * CYCLES))] - mg[$np/$CYCLES]))
done
printf '64 / 4 ranks (%d cycles): %.2f\n\n' "$CYCLES" "$(echo "${mg[64/$CYCLES]} / ${mg[4/$CYCLES]}" | bc -l)"
fi

if part amg; then
echo "## amg_like (4 levels)"
echo "| ranks, cycles | nodes | call sites | trace B | raw B | raw/trace |"
echo "|---|---|---|---|---|---|"
for np in 4 8; do
  for c in "$CYCLES" $((10 * CYCLES)); do
    read -r t r n s < <(size_of amg_like "$np" "$c")
    row "$np, $c" "$t" "$r" "$n" "$s"
  done
done
fi

if part finalize; then
  echo "## amg_like, $((10 * CYCLES)) cycles, 4 ranks: rank 0's instructions (callgrind)"
  cat >"$WORK/rank0.sh" <<'SH'
#!/bin/bash
if [[ ${OMPI_COMM_WORLD_RANK:-} == 0 ]]; then
  exec valgrind -q --tool=callgrind --callgrind-out-file="$CG_OUT" "$@"
fi
exec "$@"
SH
  chmod +x "$WORK/rank0.sh"
  (cd "$WORK" && CG_OUT="$WORK/cg.plain" mpirun -np 4 "$WORK/rank0.sh" "$APPS/app_amg_like" $((10 * CYCLES)) >/dev/null 2>&1)
  (cd "$WORK" && CG_OUT="$WORK/cg.traced" "$TF" record -o "$WORK/f.tf" -- \
    mpirun -np 4 "$WORK/rank0.sh" "$APPS/app_amg_like" $((10 * CYCLES)) >/dev/null 2>&1)
  total() { callgrind_annotate "$1" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'; }
  incl() {  # FILE FUNCTION-REGEX -> inclusive instructions of the first match
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
      awk -v f="$2" '!found && $0 ~ f { gsub(",", "", $1); v = $1; found = 1 } END { print found ? v : 0 }'
  }
  p=$(total "$WORK/cg.plain")
  t=$(total "$WORK/cg.traced")
  printf '%-44s %14s %8s\n' part instructions "of extra"
  frow() { awk -v n="$1" -v v="$2" -v e="$((t - p))" 'BEGIN { printf "%-44s %14d %7.1f%%\n", n, v, 100 * v / e }'; }
  printf '%-44s %14d\n' "untraced run" "$p"
  printf '%-44s %14d\n' "traced run" "$t"
  frow "extra (traced - untraced)" $((t - p))
  frow "folding (fold_unfolded, every batch)" "$(incl "$WORK/cg.traced" 'Recorder::fold_unfolded\(\)')"
  frow "end of recording (finish; its last batch too)" "$(incl "$WORK/cg.traced" 'Recorder::finish\(\)')"
  frow "  merge of the ranks' traces (reduce_trace)" "$(incl "$WORK/cg.traced" 'reduce_trace\(')"
  frow "  writing the trace (save_trace)" "$(incl "$WORK/cg.traced" 'save_trace\(')"
  frow "    of which zstd (ZSTD_compress)" "$(incl "$WORK/cg.traced" 'ZSTD_compress ')"
fi

part wall || exit 0
echo
echo "## amg_like wall time at 4 ranks, $((10 * CYCLES)) cycles: traced / untraced, $ROUNDS pairs"
ratios=()
for ((i = 0; i < ROUNDS; ++i)); do
  # A run that fails would time nothing: stop instead of giving a ratio.
  run_plain() { local t0 t1; t0=$(date +%s.%N); mpirun -np 4 "$APPS/app_amg_like" $((10 * CYCLES)) >/dev/null || { echo "plain amg_like failed" >&2; exit 1; }; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
  run_traced() { local t0 t1; t0=$(date +%s.%N); "$TF" record -o "$WORK/w.tf" -- mpirun -np 4 "$APPS/app_amg_like" $((10 * CYCLES)) >/dev/null 2>"$WORK/w.err" || { echo "traced amg_like failed:" >&2; cat "$WORK/w.err" >&2; exit 1; }; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
  if ((i % 2)); then p=$(run_plain); t=$(run_traced); else t=$(run_traced); p=$(run_plain); fi
  ratios+=("$(echo "$t / $p" | bc -l)")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "median %.3f (min %.3f, max %.3f)\n", a[int((NR + 1) / 2)], a[1], a[NR] }'
