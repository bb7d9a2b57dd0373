#!/usr/bin/env bash
# Throughput of `tracefold analyze`, serial and parallel (mpirun -np NP
# tracefold analyze), next to the run it analyses: records
# app_stencil2d_nonperiodic with --timeline at each NP for STEPS steps, then
# runs both analyses on it, one after the other in the same loop. Prints one
# line per run: events, the run's wall time (tracefold record's launch to
# exit), each analysis's wall time and its ratio to the run (target < 1),
# and events per second per analysis rank (serial: one process does every
# rank's events; parallel: each rank its own share, by wall time including
# mpirun's start). `par in` is the parallel analysis's own time after
# MPI_Init (as tracefold-analyze reports it), without the launcher's
# start-up. `same` says whether the two JSON reports are identical.
#   BUILD_DIR=build NPS="4 8" STEPS="2000 8000" scripts/bench-analyze.sh
# BASELINE=DIR (a `tracefold` and its `tracefold-analyze`, e.g. copied from
# another build) also runs that version's parallel analysis on the same
# recording, alternating with this one (REPEAT times each, default 1), and
# prints its wall time (`base s`) and this version's over it (`new/base`).
# BUNDLE=1 also runs this version's parallel analysis with --bundle (each
# peer's messages in one MPI_Alltoallv) in the same loop (`bun s`, its
# ratio to the run `bun/run`), and checks its report is the serial one too.
# PHASES=1 prints where the parallel analysis spent its time (the slowest
# rank's wall time per phase and the processor time summed over the ranks,
# TRACEFOLD_ANALYZE_PHASES).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
BUILD_DIR="${BUILD_DIR:-build}"
NPS="${NPS:-${NP:-4 8}}"
STEPS="${STEPS:-2000 8000}"
REPEAT="${REPEAT:-1}"
BASELINE="${BASELINE:-}"
BUNDLE="${BUNDLE:-0}"
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-analyze: build first ($BUILD_DIR)" >&2; exit 2; }
if [[ -n $BASELINE ]]; then
  [[ -x $BASELINE/tracefold && -x $BASELINE/tracefold-analyze ]] ||
    { echo "bench-analyze: $BASELINE needs tracefold and tracefold-analyze" >&2; exit 2; }
  BASELINE=$(realpath "$BASELINE")
fi
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APP=$(realpath "$BUILD_DIR/tests/apps/app_stencil2d_nonperiodic")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
echo "load before: $(uptime)"
printf '%-6s %3s %9s %8s %9s %6s %9s %6s %8s %14s %14s %5s' steps np events "run s" "serial s" \
  ratio "par s" ratio "par in" "ser ev/s/rank" "par ev/s/rank" same
[[ -n $BASELINE ]] && printf ' %8s %8s' "base s" new/base
[[ $BUNDLE == 1 ]] && printf ' %8s %8s' "bun s" bun/run
echo
for np in $NPS; do
  for steps in $STEPS; do
    t0=$(now)
    "$TF" record --timeline -o "$work/s.tf" -- mpirun -np "$np" "$APP" "$steps" >/dev/null 2>"$work/rec.err"
    t1=$(now)
    "$TF" analyze "$work/s.tf" -o "$work/s.json" 2>"$work/an.err"
    t2=$(now)
    par=0 base=0 bun=0 same=yes
    for ((i = 0; i < REPEAT; i++)); do
      if [[ -n $BASELINE ]]; then
        b0=$(now)
        TRACEFOLD_ANALYZE="$BASELINE/tracefold-analyze" mpirun -np "$np" "$BASELINE/tracefold" \
          analyze "$work/s.tf" -o "$work/b.json" 2>"$work/base.err"
        base=$(echo "$base + $(now) - $b0" | bc)
        cmp -s "$work/s.json" "$work/b.json" || echo "note: the baseline's report differs from this serial one" >&2
      fi
      p0=$(now)
      TRACEFOLD_ANALYZE_PHASES=${PHASES:-0} mpirun -np "$np" "$TF" analyze "$work/s.tf" \
        -o "$work/p.json" 2>"$work/par.err"
      par=$(echo "$par + $(now) - $p0" | bc)
      cmp -s "$work/s.json" "$work/p.json" || same=no
      if [[ $BUNDLE == 1 ]]; then
        u0=$(now)
        TRACEFOLD_ANALYZE_PHASES=${PHASES:-0} mpirun -np "$np" "$TF" analyze "$work/s.tf" --bundle \
          -o "$work/u.json" 2>"$work/bun.err"
        bun=$(echo "$bun + $(now) - $u0" | bc)
        cmp -s "$work/s.json" "$work/u.json" || same=no
      fi
    done
    inside=$(sed -n 's/.*(\([0-9.e-]*\) s after MPI_Init).*/\1/p' "$work/par.err")
    events=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$work/s.json")
    awk -v s="$steps" -v np="$np" -v e="$events" -v r="$(echo "$t1 - $t0" | bc)" \
      -v a="$(echo "$t2 - $t1" | bc)" -v p="$(echo "$par / $REPEAT" | bc -l)" -v same="$same" \
      -v pin="${inside:-0}" -v b="$(echo "$base / $REPEAT" | bc -l)" -v hasb="${BASELINE:+1}" \
      -v u="$(echo "$bun / $REPEAT" | bc -l)" -v hasu="$BUNDLE" \
      'BEGIN { printf "%-6s %3s %9d %8.3f %9.3f %6.3f %9.3f %6.3f %8.3f %14.0f %14.0f %5s",
               s, np, e, r, a, a / r, p, p / r, pin, e / a, e / np / p, same
               if (hasb) printf " %8.3f %8.3f", b, p / b
               if (hasu == 1) printf " %8.3f %8.3f", u, u / r
               printf "\n" }'
    [[ ${PHASES:-0} == 1 ]] && sed -n 's/^tracefold: phase /  phase /p' "$work/par.err"
    [[ ${PHASES:-0} == 1 && $BUNDLE == 1 ]] &&
      sed -n 's/^tracefold: phase \([a-z]* replay\)/  bundled phase \1/p' "$work/bun.err"
  done
done
echo "load after: $(uptime)"
