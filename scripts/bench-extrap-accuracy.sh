#!/usr/bin/env bash
# Timing accuracy of extrapolation on the benchmark-shaped test programs
# (issue 30), at rank counts this machine can run: for each program,
# record it at a few counts, extrapolate to the target, check with
# `tracefold diff` that the extrapolation is the real target run's trace,
# then time REPS runs each of the program, the replay of the real target
# trace and the replay of the extrapolated one, in rotated order, and
# compare medians. Accuracy is the seed's 1 - |replay - app| / app.
#
# The program's time is APP_TIME's (slowest rank, MPI_Init to
# MPI_Finalize); a replay's is the wall time `tracefold replay` prints.
# Computation is recorded as processor time (--stats compute_cpu) and
# replayed with --compute-clock cpu: with more ranks than cores the
# wall-clock gaps hold the time a rank waited for a core (docs/replay.md).
#
# The wall times of a shared machine spread by a factor of 3 and more at
# load 15-40; the last column is steady: one more replay of each trace,
# recorded with --stats compute_cpu, gives the processor time the replay
# spent between calls (what --compute-clock cpu spins for), the
# extrapolation's against the real trace's.
# Its runs line also gives the program's processor time between calls in
# the recording the replays spin for and in one more recording made after
# the timed runs: the same work takes more or less of it as the host's
# speed moves, which moves the replays against the program.
#
# Settings (environment): BUILD_DIR=build, ACC_STEPS=200 (steps or cycles
# of each program), WORK=2000 (units of computation per step), REPS=5,
# ONLY=NAME (one program), KEEP_DIR=DIR (keep the traces there).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/stats.bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
ACC_STEPS="${ACC_STEPS:-200}"
WORK="${WORK:-2000}"
REPS="${REPS:-5}"
TF="$PWD/$BUILD_DIR/src/cli/tracefold"
APPS="$PWD/$BUILD_DIR/tests/apps"
if [[ -n ${KEEP_DIR:-} ]]; then
  mkdir -p "$KEEP_DIR"
  out=$(cd "$KEEP_DIR" && pwd)
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
cd "$out"

pct() {  # pct REFERENCE VALUE: 1 - |VALUE - REFERENCE| / REFERENCE, in %
  awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", 100 * (1 - (b > a ? b - a : a - b) / a)}'
}
# A timed run that fails leaves its output in run.log; the row then names
# it instead of the script stopping without a word.
app_time() {  # app_time NP APP ARGS...
  APP_TIME=1 timeout 600 mpirun -np "$1" "$APPS/app_$2" "${@:3}" > /dev/null 2> run.log ||
    return 1
  sed -n 's/^app_time: //p' run.log
}
replay_time() {  # replay_time NP TRACE
  timeout 600 mpirun -np "$1" "$TF" replay --compute-clock cpu "$2" > run.log 2>&1 || return 1
  sed -n 's/^replay: .*, wall \([0-9.e+-]*\) s.*/\1/p' run.log
}

# accuracy NAME TARGET "INPUT COUNTS" APP ARGS...: one row of the table
# (X_OPTS: more options for tracefold extrapolate).
accuracy() {
  local name=$1 target=$2 counts=$3 app=$4 n ins=() d
  shift 4
  [[ -z ${ONLY:-} || $ONLY == "$name" ]] || return 0
  # Otherwise mpirun's refusal ends in the recorder's "no trace was written".
  [[ -x $APPS/app_$app ]] ||
    { echo "| $name | $APPS/app_$app is not built: cmake --build $BUILD_DIR --target app_$app |"; return 0; }
  for n in $counts $target; do
    timeout 900 "$TF" record --stats compute_cpu -o "$name-$n.tf" -- \
      mpirun -np "$n" "$APPS/app_$app" "$@" > "rec-$name-$n.log" 2>&1 ||
      { echo "| $name | record at $n ranks failed: $(tail -1 "rec-$name-$n.log") |"; return 0; }
    [[ $n == "$target" ]] || ins+=("$name-$n.tf")
  done
  # shellcheck disable=SC2086 # X_OPTS holds several options
  "$TF" extrapolate "${ins[@]}" ${X_OPTS:-} --ranks "$target" -o "$name-x$target.tf" \
    > "x-$name.log" 2>&1 ||
    { echo "| $name | extrapolation failed: $(tail -1 "x-$name.log") |"; return 0; }
  d=$("$TF" diff "$name-x$target.tf" "$name-$target.tf" 2>&1 | head -1) || true
  d=${d%%: \[*}  # a lossy extrapolation's first difference, without its values
  # Rotated order: a slow spell of the machine falls on all three alike.
  local ts=() rs=() xs=() k j t r x v what
  for ((k = 0; k < REPS; ++k)); do
    for j in 0 1 2; do
      case $(((j + k) % 3)) in
        0) what="the program" && v=$(app_time "$target" "$app" "$@") && ts+=("$v") ;;
        1) what="the replay of the real trace" &&
          v=$(replay_time "$target" "$name-$target.tf") && rs+=("$v") ;;
        2) what="the replay of the extrapolation" &&
          v=$(replay_time "$target" "$name-x$target.tf") && xs+=("$v") ;;
      esac || {
        echo "| $name | $what failed in timed run $((k + 1)) at $target ranks: $(tail -1 run.log) |"
        return 0
      }
    done
  done
  local c=()  # processor time of one replay of each, recorded
  for j in "$name-$target" "$name-x$target"; do
    timeout 600 "$TF" record --stats compute_cpu -o "replayed-$j.tf" -- \
      mpirun -np "$target" "$TF" replay --compute-clock cpu "$j.tf" > "replayed-$j.log" 2>&1 || true
    c+=("$(replayed_cpu_ns "$TF" "replayed-$j.tf")")
  done
  # The processor time of the same work moves with the host: the program
  # recorded again after the timed runs shows how far it moved since the
  # recording that the replays spin for.
  local p=("$(replayed_cpu_ns "$TF" "$name-$target.tf")")
  timeout 900 "$TF" record --stats compute_cpu -o "$name-$target-after.tf" -- \
    mpirun -np "$target" "$APPS/app_$app" "$@" > "rec-$name-$target-after.log" 2>&1 || true
  p+=("$(replayed_cpu_ns "$TF" "$name-$target-after.tf")")
  t=$(printf '%s\n' "${ts[@]}" | median)
  r=$(printf '%s\n' "${rs[@]}" | median)
  x=$(printf '%s\n' "${xs[@]}" | median)
  printf '| %s | %s → %s | %s | %s s | %s s | %s %% | %s s | %s %% | %s %% | %s %% |\n' "$name" \
    "${counts// /, }" "$target" "$d" "$t" "$r" "$(pct "$t" "$r")" "$x" "$(pct "$t" "$x")" \
    "$(pct "$r" "$x")" "$(pct "${c[0]}" "${c[1]}")"
  echo "|   runs: app ${ts[*]}; replay of real ${rs[*]}; replay of extrapolation ${xs[*]};" \
    "replays' processor time: real ${c[0]} ns, extrapolation ${c[1]} ns;" \
    "program's processor time: recorded before the runs ${p[0]} ns, after them ${p[1]} ns |" >&2
}

echo "Timing accuracy on $(nproc) cores, $ACC_STEPS steps, WORK=$WORK units a step," \
  "medians of $REPS rotated runs; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program | inputs → target | diff against the real run | app | replay of real | accuracy | replay of extrapolation | accuracy | extrapolation vs real replay | replays' processor time, extrapolation vs real |"
echo "|---|---|---|---|---|---|---|---|---|---|"
# SSOR wavefront on NPB LU's grid (8 ranks: 4 columns x 2 rows), weak.
accuracy ssor_wave 8 "4 16 32" ssor_wave "$ACC_STEPS" "$WORK"
# Multipartition ADI on q x q ranks (9: q = 3), weak.
accuracy adi_mp 9 "4 16 25" adi_mp "$ACC_STEPS" "$WORK"
# Slab FFT of a fixed 32^3 cube (strong scaling: counts 32768/P^2).
accuracy fft3d 8 "2 4 16" fft3d "$ACC_STEPS" "$WORK"
# Multigrid V-cycles on a 2-D grid, 4 points a rank, 3 levels (no idle
# ranks), weak; a cycle computes about four steps' worth, so a quarter as
# many cycles.
accuracy mg3d 8 "4 16 32" mg3d "$((ACC_STEPS / 4))" "$WORK" 0 4 3 2
# Integer sort of 2^20 keys in all (strong scaling; WORK units per 1,024
# keys a rank): its Alltoallv counts follow the data, so it extrapolates
# only through the lossy count model, and `diff` finds the counts differ.
X_OPTS=--model-counts accuracy isort 8 "4 16 32" isort "$ACC_STEPS" "$((WORK / 128))" 1048576
echo
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
