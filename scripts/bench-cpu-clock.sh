#!/usr/bin/env bash
# `tracefold bench --compute-clock cpu` against the wall clock on an
# oversubscribed run (docs/bench.md "Processor-time computation"): each
# program is recorded once with --stats compute_cpu at NP ranks (more than
# the machine's cores), its benchmark generated with both clocks, and the
# program and both benchmarks run at NP ranks on the same machine, REPS
# times each, alternating. Times are the medians of the programs' own
# "app_time" (APP_TIME set) and of the benchmarks' "wall time", both the
# slowest rank from a barrier after MPI_Init to MPI_Finalize, so mpirun's
# launch cost is in neither; "error" is the benchmark against the program.
# "replay" is `tracefold replay --compute-clock cpu` of the same trace (its
# own wall time, the same interval), to tell what the generated code adds
# from what the recorded processor times hold.
#
#   bash scripts/bench-cpu-clock.sh [BUILD_DIR] [NP] [REPS] [WORK]
#
# ONLY="cg lu" in the environment runs those programs only. CORES=K pins
# every rank to the first K cores (taskset inside mpirun, so mpirun's own
# binding does not spread them): NP ranks on K cores on any machine.
#
# TOGETHER=1 starts the program and each benchmark at the same time (two
# mpiruns side by side) and gives the median of their ratios instead. On a
# machine shared with other work the load moves between one run and the
# next by more than the errors measured (a program's own runs spread over
# a factor of several at load average 30); two runs at the same time see
# the same load, and each takes half of what is left, so their ratio holds
# still where the times do not. Each also slows the other, so the times
# printed are those of a machine with twice the ranks; the replay starts
# later than the program by its reading of the trace. "self" is the program
# run together with itself: how far apart two runs of one program fall
# under these conditions, the floor under every other error.
#
# SPUN=1 times nothing: it records the processor-time benchmark and the
# replay with --stats compute_cpu as the program was, and prints the
# processor time between calls each holds, summed over ranks and calls
# ("spun"; the program's MPI_Init has none). What a benchmark asks of the
# machine does not move with its load, so this checks the spinning itself.
set -euo pipefail
BUILD=${1:-build}
NP=${2:-4}
REPS=${3:-3}
WORK=${4:-1000}
TF=$BUILD/src/cli/tracefold
APPS=$BUILD/tests/apps
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
PIN=()
if [[ -n ${CORES:-} ]]; then PIN=(taskset -c "0-$((CORES - 1))"); fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

# program and steps (each step computes WORK units of about 1 us)
PROGRAMS=(
  "stencil2d_periodic 400"
  "cg 100"
  "sweep3d 40"
  "lu 200"
)

source "$(dirname "$0")/lib/stats.bash"
# For TOGETHER: the program's time, and a variant's (wall, cpu, replay, or
# the program again: self).
together_program() {
  APP_TIME=1 mpirun -np "$NP" "${PIN[@]}" "$APPS/app_$name" "$steps" "$WORK" 2>&1 >/dev/null |
    sed -n 's/^app_time: //p'
}
together_variant() {
  case $1 in
    self) together_program ;;
    replay)
      mpirun -np "$NP" "${PIN[@]}" "$TF" replay --compute-clock cpu "$W/$name.tf" 2>/dev/null |
        sed -n 's/^replay: .* wall \([0-9.]*\) s,.*/\1/p' ;;
    *)
      mpirun -np "$NP" "${PIN[@]}" "$W/$name-$1" 2>/dev/null |
        sed -n 's/^bench: .* wall time \([0-9.]*\) s$/\1/p' ;;
  esac
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores${CORES:+ (ranks on $CORES)}, $NP ranks, $REPS runs each, WORK=$WORK${TOGETHER:+, each benchmark run together with the program (error: median ratio)}"
# The processor time between calls a text trace holds, in ms.
spun() { awk '$1 == "stat" && $2 == "compute_cpu" { sub("sum=", "", $4); s += $4 } END { printf "%.1f", s / 1e6 }' "$1"; }
if [[ -n ${SPUN:-} ]]; then
  printf '%-20s %9s %9s %7s %9s %7s\n' program "spun ms" cpu error replay error
elif [[ -n ${TOGETHER:-} ]]; then
  printf '%-20s %9s %9s %7s %9s %7s %9s %7s %9s %7s\n' program original wall error cpu error replay error self error
else
  printf '%-20s %9s %9s %7s %9s %7s %9s %7s\n' program original wall error cpu error replay error
fi
for p in "${PROGRAMS[@]}"; do
  read -r name steps <<<"$p"
  [[ -x $APPS/app_$name ]] || continue
  [[ -z ${ONLY:-} || " $ONLY " == *" $name "* ]] || continue
  "$TF" record --stats compute_cpu -o "$W/$name.tf" -- mpirun -np "$NP" "${PIN[@]}" "$APPS/app_$name" "$steps" "$WORK" \
    >/dev/null 2>&1
  for c in wall cpu; do
    "$TF" bench --compute-clock "$c" "$W/$name.tf" -o "$W/$name-$c.c" 2>/dev/null
    mpicc -std=c11 -O2 "$W/$name-$c.c" -o "$W/$name-$c"
    : >"$W/$c.t"
  done
  if [[ -n ${SPUN:-} ]]; then
    "$TF" convert --text -o "$W/$name.txt" "$W/$name.tf" >/dev/null 2>&1
    "$TF" record --text --stats compute_cpu -o "$W/$name-b.txt" -- mpirun -np "$NP" "${PIN[@]}" "$W/$name-cpu" >/dev/null 2>&1
    "$TF" record --text --stats compute_cpu -o "$W/$name-r.txt" -- \
      mpirun -np "$NP" "${PIN[@]}" "$TF" replay --compute-clock cpu "$W/$name.tf" >/dev/null 2>&1
    orig=$(spun "$W/$name.txt")
    row=$(printf '%9s' "$orig")
    for f in b r; do
      row+=$(awk -v g="$(spun "$W/$name-$f.txt")" -v o="$orig" 'BEGIN { printf " %9.1f %+6.1f%%", g, 100 * (g - o) / o }')
    done
    printf '%-20s %s\n' "$name" "$row"
    continue
  fi
  : >"$W/replay.t"
  : >"$W/orig.t"
  if [[ -n ${TOGETHER:-} ]]; then
    for f in wall cpu replay self; do : >"$W/$f.r" >"$W/$f.t"; done
    for ((k = 0; k < REPS; ++k)); do
      for c in wall cpu replay self; do
        # Which of the two starts first alternates: it matters (the one
        # started second ran about 15 % faster against itself at load 30).
        if ((k % 2)); then
          together_variant "$c" >"$W/g.t" &
          together_program >"$W/o.t"
        else
          together_program >"$W/o.t" &
          together_variant "$c" >"$W/g.t"
        fi
        wait
        o=$(cat "$W/o.t") g=$(cat "$W/g.t")
        [[ -n $o && -n $g ]] || continue
        echo "$o" >>"$W/orig.t"
        echo "$g" >>"$W/$c.t"
        awk -v g="$g" -v o="$o" 'BEGIN { print g / o }' >>"$W/$c.r"
      done
    done
    if [[ $(cat "$W"/{wall,cpu,replay,self}.r | wc -l) -ne $((4 * REPS)) ]]; then
      echo "$name: a run reported no time" >&2
      continue
    fi
    row=$(printf '%8.3fs' "$(median <"$W/orig.t")")
    for c in wall cpu replay self; do
      row+=$(awk -v g="$(median <"$W/$c.t")" -v r="$(median <"$W/$c.r")" \
        'BEGIN { printf " %8.3fs %+6.1f%%", g, 100 * (r - 1) }')
    done
    printf '%-20s %s\n' "$name" "$row"
    continue
  fi
  for ((k = 0; k < REPS; ++k)); do
    APP_TIME=1 mpirun -np "$NP" "${PIN[@]}" "$APPS/app_$name" "$steps" "$WORK" 2>&1 >/dev/null |
      sed -n 's/^app_time: //p' >>"$W/orig.t"
    for c in wall cpu; do
      mpirun -np "$NP" "${PIN[@]}" "$W/$name-$c" 2>/dev/null |
        sed -n 's/^bench: .* wall time \([0-9.]*\) s$/\1/p' >>"$W/$c.t"
    done
    mpirun -np "$NP" "${PIN[@]}" "$TF" replay --compute-clock cpu "$W/$name.tf" 2>/dev/null |
      sed -n 's/^replay: .* wall \([0-9.]*\) s,.*/\1/p' >>"$W/replay.t"
  done
  short=0
  for f in orig wall cpu replay; do [[ $(wc -l <"$W/$f.t") -eq $REPS ]] || short=1; done
  if ((short)); then
    echo "$name: a run reported no time" >&2
    continue
  fi
  orig=$(median <"$W/orig.t")
  row=$(printf '%8.3fs' "$orig")
  for c in wall cpu replay; do
    gen=$(median <"$W/$c.t")
    row+=$(awk -v g="$gen" -v o="$orig" 'BEGIN { printf " %8.3fs %+6.1f%%", g, 100 * (g - o) / o }')
  done
  printf '%-20s %s\n' "$name" "$row"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
