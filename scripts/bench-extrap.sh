#!/usr/bin/env bash
# Extrapolation cost (issue 14): wall time, peak memory (/usr/bin/time -v)
# and output size of `tracefold extrapolate` for targets of 1,024, 16,384
# and 1,048,576 ranks, from traces recorded for real at small counts:
#   - the 2-D periodic and non-periodic stencils at 4, 9, 16, 25 ranks;
#   - the 3-D periodic stencil at 8, 12, 18, 27 ranks (MPI_Dims_create
#     grids; the targets are Dims_create grids too: 16x8x8, 32x32x16,
#     128x128x64);
#   - grid_comms (row communicators by MPI_Comm_split, columns by
#     MPI_Cart_sub, a dup of the rows: 1,024 row and 1,024 column groups at
#     a million ranks) and mg_vcycle (a V-cycle on its Cartesian
#     communicator) at 4, 9, 16, 25 ranks.
# Then the largest outputs are read back: wall time and peak memory of
# `tracefold expand -r` (one rank), `print` and `stats` on them.
# Then the 3-D exactness at 64 ranks, too slow for a test on two cores:
# 8, 12, 18, 27 -> 64 is diffed against a real 64-rank run.
#
# Settings (environment): BUILD_DIR=build, STEPS=12, TARGETS="1024 16384 1048576",
# COST_ONLY=1 (stop after the cost and read-back tables), ACC_ONLY=1 (only
# the timing accuracy table), ACC_STEPS=200 and WORK=2000 (its run length),
# REPS=3 (runs of the program and of each replay; medians compared),
# ACC_SET=shapes (the accuracy table of ssor_wave, adi_mp and fft3d only),
# KEEP_DIR=DIR (write the traces there and keep them).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/stats.bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
STEPS="${STEPS:-12}"
TARGETS="${TARGETS:-1024 16384 1048576}"
TF="$PWD/$BUILD_DIR/src/cli/tracefold"
APPS="$PWD/$BUILD_DIR/tests/apps"
if [[ -n ${KEEP_DIR:-} ]]; then  # keep the traces there, to read them again
  mkdir -p "$KEEP_DIR"; out=$(cd "$KEEP_DIR" && pwd)
else
  out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
fi
cd "$out"

rec() {  # rec NAME APP NP
  "$TF" record -o "$1-$3.tf" -- mpirun -np "$3" "$APPS/app_$2" "$STEPS" > "rec-$1-$3.log" 2>&1 ||
    { echo "record $1 at $3 ranks failed" >&2; tail "rec-$1-$3.log" >&2; exit 1; }
}

row() {  # row NAME TARGET INPUTS...
  local name=$1 n=$2
  shift 2
  /usr/bin/time -v "$TF" extrapolate "$@" --ranks "$n" -o "x-$name-$n.tf" > "x-$name-$n.log" \
    2> "x-$name-$n.time" || { echo "extrapolate $name to $n failed:" >&2; cat "x-$name-$n.time" >&2; return 0; }
  local wall rss grid
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "x-$name-$n.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "x-$name-$n.time")
  grid=$(sed -n 's/.* ranks on a \([0-9x]*\) grid.*/\1/p' "x-$name-$n.time")
  printf '| %-22s | %9d | %-12s | %8s | %8.1f | %7d |\n' "$name" "$n" "$grid" "$wall" \
    "$(awk -v k="$rss" 'BEGIN {print k / 1024}')" "$(stat -c %s "x-$name-$n.tf")"
}

if [[ ${ACC_ONLY:-0} != 1 ]]; then
for n in 4 9 16 25; do rec periodic stencil2d_periodic $n; rec nonperiodic stencil2d_nonperiodic $n; done
for n in 8 12 18 27; do rec stencil3d stencil3d $n; done
for n in 4 9 16 25; do rec grid_comms grid_comms $n; rec mg_vcycle mg_vcycle $n; done

echo "tracefold extrapolate, $STEPS steps, inputs recorded on this machine ($(nproc) cores)"
echo
echo "| program                | target    | grid         | wall     | peak MiB | output B |"
echo "|------------------------|-----------|--------------|----------|----------|----------|"
for n in $TARGETS; do
  for v in periodic nonperiodic; do
    row "stencil2d $v" "$n" $v-4.tf $v-9.tf $v-16.tf $v-25.tf
  done
  row "stencil3d" "$n" stencil3d-8.tf stencil3d-12.tf stencil3d-18.tf stencil3d-27.tf
  for v in grid_comms mg_vcycle; do row "$v" "$n" $v-4.tf $v-9.tf $v-16.tf $v-25.tf; done
done

readback() {  # readback FILE WHAT ARGS...: one line of the read-back table
  local f=$1 what=$2
  shift 2
  [[ -s $f ]] || return 0
  /usr/bin/time -v "$TF" "$@" "$f" > /dev/null 2> "rb.time" ||
    { echo "$what $f failed:" >&2; tail -3 rb.time >&2; return 0; }
  printf '| %-36s | %-16s | %8s | %8.1f |\n' "$f" "$what" \
    "$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' rb.time)" \
    "$(awk -v k="$(sed -n 's/.*Maximum resident set size (kbytes): //p' rb.time)" 'BEGIN {print k / 1024}')"
}
last=${TARGETS##* }
echo
echo "Reading the ${last}-rank outputs back"
echo
echo "| file                                 | command          | wall     | peak MiB |"
echo "|--------------------------------------|------------------|----------|----------|"
for v in "stencil2d periodic" "stencil2d nonperiodic" stencil3d grid_comms mg_vcycle; do
  readback "x-$v-$last.tf" "expand -r $((last / 2 + 7))" expand -r $((last / 2 + 7))
  readback "x-$v-$last.tf" print print
  readback "x-$v-$last.tf" stats stats
done
[[ ${COST_ONLY:-0} == 1 ]] && exit 0

echo
rec stencil3d stencil3d 64
"$TF" extrapolate stencil3d-8.tf stencil3d-12.tf stencil3d-18.tf stencil3d-27.tf --ranks 64 \
  -o x64.tf > /dev/null 2>&1
echo "stencil3d 8,12,18,27 -> 64 vs a real 64-rank run: $("$TF" diff x64.tf stencil3d-64.tf 2>&1)"
fi

# Timing accuracy (seed: 1 - |replay - app| / app): the 2-D stencils, the
# 3-D stencil and the wavefront sweep with WORK units of computation per
# step, recorded at small counts, extrapolated to the target, replayed under
# mpirun and compared with a real run's time (APP_TIME, slowest rank, from
# after MPI_Init to MPI_Finalize). The target is recorded for real too and
# that trace replayed: its accuracy is the replay's own error, and the
# extrapolation's is the replay of the extrapolated trace against the
# replay of the real one. Oversubscribed ranks on this machine's cores.
# CLOCK=cpu (the default) records the compute_cpu statistic and replays
# with --compute-clock cpu: with more ranks than cores, the wall-clock gap
# between calls holds the time a rank waited for a core, which a replay
# spinning on the wall clock waits again on top (docs/replay.md). CLOCK=wall
# replays the recorded wall-clock gaps.
WORK="${WORK:-2000}"
ACC_STEPS="${ACC_STEPS:-200}"
CLOCK="${CLOCK:-cpu}"
REPS="${REPS:-3}"
REC_CLOCK=() REPLAY_CLOCK=()
if [[ $CLOCK == cpu ]]; then REC_CLOCK=(--stats compute_cpu); REPLAY_CLOCK=(--compute-clock cpu); fi
replay_wall() {  # replay_wall NP TRACE
  mpirun -np "$1" "$TF" replay "${REPLAY_CLOCK[@]}" "$2" 2>&1 |
    sed -n 's/^replay: .*, wall \([0-9.e+-]*\) s.*/\1/p'
}
accuracy() {  # accuracy NAME APP TARGET INPUT_COUNTS...
  local name=$1 app=$2 target=$3 ins=() n t x r
  shift 3
  for n in "$@" "$target"; do
    "$TF" record "${REC_CLOCK[@]}" -o "acc-$name-$n.tf" -- mpirun -np "$n" "$APPS/app_$app" "$ACC_STEPS" "$WORK" \
      > /dev/null 2>&1 || { echo "record $name at $n failed" >&2; return 0; }
    [[ $n == "$target" ]] || ins+=("acc-$name-$n.tf")
  done
  "$TF" extrapolate "${ins[@]}" --ranks "$target" -o "acc-$name-x$target.tf" > /dev/null 2>&1 ||
    { echo "extrapolate $name to $target failed" >&2; return 0; }
  # REPS runs of each of the three, in rotated order so that a slow spell
  # of the machine falls on all of them alike; the medians are compared.
  local ts=() rs=() xs=() k j
  for ((k = 0; k < REPS; ++k)); do
    for j in 0 1 2; do
      case $(((j + k) % 3)) in
        0) ts+=("$(APP_TIME=1 mpirun -np "$target" "$APPS/app_$app" "$ACC_STEPS" "$WORK" 2>&1 >/dev/null |
          sed -n 's/^app_time: //p')") ;;
        1) rs+=("$(replay_wall "$target" "acc-$name-$target.tf")") ;;
        2) xs+=("$(replay_wall "$target" "acc-$name-x$target.tf")") ;;
      esac
    done
  done
  t=$(printf '%s\n' "${ts[@]}" | median) r=$(printf '%s\n' "${rs[@]}" | median)
  x=$(printf '%s\n' "${xs[@]}" | median)
  printf '| %-22s | %6d | %-14s | %8s s | %8s s | %6s %% | %8s s | %6s %% | %6s %% |\n' "$name" \
    "$target" "$*" "$t" "$r" "$(awk -v a="$t" -v b="$r" 'BEGIN {printf "%.1f", 100 * (1 - (b > a ? b - a : a - b) / a)}')" \
    "$x" "$(awk -v a="$t" -v b="$x" 'BEGIN {printf "%.1f", 100 * (1 - (b > a ? b - a : a - b) / a)}')" \
    "$(awk -v a="$r" -v b="$x" 'BEGIN {printf "%.1f", 100 * (1 - (b > a ? b - a : a - b) / a)}')"
  [[ $REPS == 1 ]] || echo "|   runs: app ${ts[*]}; replay of real ${rs[*]}; replay of extrapolation ${xs[*]} | | | | | | | | |"
}
echo
echo "Timing accuracy, $ACC_STEPS steps, WORK=$WORK units per step, compute clock $CLOCK, medians of $REPS runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program                | target | inputs         | real app   | replay of real | accuracy | replay of extrapolation | accuracy | extrapolation vs real replay |"
echo "|------------------------|--------|----------------|------------|------------|----------|------------|----------|----------|"
ACC_TARGET="${ACC_TARGET:-36}"
if [[ ${ACC_SET:-all} != shapes ]]; then
  accuracy "stencil2d periodic" stencil2d_periodic "$ACC_TARGET" 4 9 16 25
  accuracy "stencil2d nonperiodic" stencil2d_nonperiodic "$ACC_TARGET" 4 9 16 25
  accuracy "stencil3d" stencil3d "$ACC_TARGET" 8 12 18 27
  accuracy "sweep3d" sweep3d "$ACC_TARGET" 4 9 16 25
fi
# The benchmark codes' shapes: ssor_wave, adi_mp, fft3d (ACC_SET=shapes: these only), each at the largest
# count of its own layout that its tests run: the SSOR wavefront on NPB
# LU's power-of-two grid, the multipartition ADI on q x q ranks, the slab
# FFT (a fixed 32^3 cube: strong scaling).
accuracy "ssor_wave" ssor_wave 32 4 8 16
accuracy "adi_mp" adi_mp 25 4 9 16
accuracy "fft3d" fft3d 16 2 4 8
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
