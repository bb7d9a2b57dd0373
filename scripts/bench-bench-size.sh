#!/usr/bin/env bash
# Size and compile time of generated benchmarks (issue 35, part 3): for
# every program of the benchmark tests' lists (tests/mpi/bench_lib.bash:
# the same ranks, steps and generator options), the trace's compact size
# (bytes of the .tf file the recorder writes), the C file `tracefold bench`
# makes from it (bytes, lines), their ratio (target: <= 20), and the time
# `mpicc -std=c11 -O2` takes to compile it (target: <= 5 s), median of
# CC_REPS compiles. EXTRA adds larger runs of the irregular programs
# (default: amg_like and exchange_setup at 8 ranks, 40 steps).
#
#   BUILD_DIR=build CC_REPS=1 ONLY="amg_like polling" scripts/bench-bench-size.sh
#
# ONLY limits the rows to those programs; EXTRA="" drops the larger runs.
# A program whose recording or generation fails gets a row saying so.
# The last line counts the rows over either target.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
CC_REPS=${CC_REPS:-1}
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APPS=$(realpath "$BUILD_DIR/tests/apps")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
source scripts/lib/stats.bash
# The lists only (their functions need the test library and are not called).
source tests/mpi/bench_lib.bash
read -r -a EXTRA_ROWS <<<"${EXTRA-amg_like:8:40 exchange_setup:8:40}"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

rows=("${BENCH_KERNELS[@]}" "${BENCH_FEATURES[@]}" "${BENCH_OTHERS[@]}")
for e in "${EXTRA_ROWS[@]}"; do
  IFS=: read -r n np steps <<<"$e"
  for p in "${BENCH_KERNELS[@]}" "${BENCH_FEATURES[@]}"; do
    # the larger run keeps the list entry's generator and diff options
    [[ ${p%% *} == "$n" ]] && rows+=("$n $np $steps $(cut -d' ' -f4- <<<"$p ")") && break
  done
done

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(mpicc --version | head -n 1)"
printf '%-22s %3s %5s %9s %10s %7s %7s %8s\n' program np steps trace_B c_B c_lines ratio cc_s
over=0
count=0
for p in "${rows[@]}"; do
  read -r name np steps rest <<<"$p"
  [[ -z ${ONLY:-} || " $ONLY " == *" $name "* ]] || continue
  gen=()
  for o in $rest; do [[ $o == --gen=* ]] && gen+=("${o#--gen=}"); done
  d=$W/$name-$np-$steps
  mkdir -p "$d"
  if ! timeout 300 "$TF" record -o "$d/t.tf" -- mpirun -np "$np" "$APPS/app_$name" "$steps" \
    >"$d/rec.log" 2>&1; then
    printf '%-22s %3s %5s recording failed\n' "$name" "$np" "$steps"
    continue
  fi
  if ! "$TF" bench "${gen[@]}" "$d/t.tf" -o "$d/bench.c" 2>"$d/gen.log"; then
    printf '%-22s %3s %5s generation failed: %s\n' "$name" "$np" "$steps" "$(head -c 200 "$d/gen.log")"
    continue
  fi
  : >"$d/cc.t"
  for ((k = 0; k < CC_REPS; ++k)); do
    t0=$(date +%s.%N)
    mpicc -std=c11 -O2 "$d/bench.c" -o "$d/bench"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$d/cc.t"
  done
  tb=$(stat -c %s "$d/t.tf")
  cb=$(stat -c %s "$d/bench.c")
  cl=$(wc -l <"$d/bench.c")
  cc=$(median <"$d/cc.t")
  ratio=$(awk -v c="$cb" -v t="$tb" 'BEGIN { printf "%.2f", c / t }')
  printf '%-22s %3s %5s %9s %10s %7s %7s %8s\n' "$name" "$np" "$steps" "$tb" "$cb" "$cl" "$ratio" "$cc"
  count=$((count + 1))
  awk -v r="$ratio" -v c="$cc" 'BEGIN { exit !(r > 20 || c > 5) }' && over=$((over + 1))
done
echo "$over of $count benchmarks over 20x the trace's bytes or 5 s to compile"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
