#!/usr/bin/env bash
# Throughput of `tracefold analyze`, serial and parallel (mpirun -np NP
# tracefold analyze), next to the run it analyses: records
# app_stencil2d_nonperiodic with --timeline at each NP for STEPS steps, then
# runs both analyses on it, one after the other in the same loop. Two
# configurations of the program (CONFIGS, default both):
#   pure  the program as the tests run it: 24x24 blocks, no computation to
#         speak of, a pure message loop. The worst case for a replay-based
#         analysis, which replays every message and every wait state while
#         the program does nothing between them.
#   work  the same with WORK units of computation per step (about 1 us a
#         unit, tests/apps/app_work.h; default 300, 0.3 ms a step). `comp`
#         says how much of the steps' recorded time (MPI_Init and
#         MPI_Finalize left out) was computation; with more ranks than
#         cores, waiting for descheduled peers in MPI_Waitall takes most of
#         it.
# Prints one line per run: configuration, steps, ranks, events, the share
# of the steps' recorded time that was computation (`comp`, from the
# serial report), the run's wall time (tracefold record's launch to exit), each
# analysis's wall time and its ratio to the run (target < 1), and events
# per second per analysis rank (serial: one process does every rank's
# events; parallel: each rank its own share, by wall time including
# mpirun's start). `par in` is the parallel analysis's own time after
# MPI_Init (as tracefold-analyze reports it), without the launcher's
# start-up. `same` says whether the two JSON reports are identical.
#   BUILD_DIR=build NPS="4 8" STEPS="2000 8000" scripts/bench-analyze.sh
# BASELINE=DIR (a `tracefold` and its `tracefold-analyze`, e.g. copied from
# another build) also runs that version's parallel analysis on the same
# recording, alternating with this one (REPEAT times each, default 1), and
# prints its wall time (`base s`) and this version's over it (`new/base`);
# `base` says whether its report is the serial one too.
# BUNDLE=1 also runs this version's parallel analysis with --bundle (each
# peer's messages in one MPI_Alltoallv) in the same loop (`bun s`, its
# ratio to the run `bun/run`), and checks its report is the serial one too.
# PHASES=1 prints where the parallel analysis spent its time (the slowest
# rank's wall time per phase and the processor time summed over the ranks,
# TRACEFOLD_ANALYZE_PHASES).
# START=N first prints, per NP, what a launch alone costs: wall and
# processor time (user + system, mpirun and every rank) of `mpirun -np NP`
# running a trivial MPI program (the stencil with 0 steps: MPI_Init, one
# MPI_Allreduce, MPI_Finalize), `tracefold analyze --help` (the analysis
# program's start: the CLI execs tracefold-analyze, which calls MPI_Init,
# prints its usage and calls MPI_Finalize) and, with BASELINE, the
# baseline's; N alternated launches each, the medians. STEPS= (empty)
# prints only that table.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/stats.bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_mpi_yield_when_idle=1
BUILD_DIR="${BUILD_DIR:-build}"
NPS="${NPS:-${NP:-4 8}}"
STEPS="${STEPS-2000 8000}"
CONFIGS="${CONFIGS:-pure work}"
WORK="${WORK:-300}"
REPEAT="${REPEAT:-1}"
BASELINE="${BASELINE:-}"
BUNDLE="${BUNDLE:-0}"
START="${START:-0}"
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-analyze: build first ($BUILD_DIR)" >&2; exit 2; }
if [[ -n $BASELINE ]]; then
  [[ -x $BASELINE/tracefold && -x $BASELINE/tracefold-analyze ]] ||
    { echo "bench-analyze: $BASELINE needs tracefold and tracefold-analyze" >&2; exit 2; }
  BASELINE=$(realpath "$BASELINE")
fi
for conf in $CONFIGS; do
  [[ $conf == pure || $conf == work ]] || { echo "bench-analyze: unknown configuration $conf" >&2; exit 2; }
done
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APP=$(realpath "$BUILD_DIR/tests/apps/app_stencil2d_nonperiodic")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
echo "load before: $(uptime)"

# Wall and processor seconds of one command ("wall cpu"): bash's `time`
# counts the processor time of every child waited for, mpirun's ranks too.
timed() {
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1) || true
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t"
}
if ((START > 0)); then
  printf '%3s %-24s %8s %8s\n' np launch "wall s" "cpu s"
  for np in $NPS; do
    names=(trivial analyze) cmds=("$APP 0" "$TF analyze --help")
    if [[ -n $BASELINE ]]; then names+=(base-analyze); cmds+=("$BASELINE/tracefold analyze --help"); fi
    declare -A walls=() cpus=()
    for ((i = 0; i < START; ++i)); do
      for k in "${!names[@]}"; do
        vars=()
        [[ ${names[k]} == base-analyze ]] && vars=(TRACEFOLD_ANALYZE="$BASELINE/tracefold-analyze")
        # shellcheck disable=SC2086 # the command's words
        read -r w c < <(timed env "${vars[@]}" mpirun -np "$np" ${cmds[k]})
        walls[$k]+="$w "
        cpus[$k]+="$c "
      done
    done
    for k in "${!names[@]}"; do
      printf '%3s %-24s %8s %8s\n' "$np" "${names[k]}" "$(tr ' ' '\n' <<<"${walls[$k]}" | grep . | median)" \
        "$(tr ' ' '\n' <<<"${cpus[$k]}" | grep . | median)"
    done
    unset walls cpus
  done
fi

[[ -z $STEPS ]] && { echo "load after: $(uptime)"; exit 0; }
printf '%-8s %-6s %3s %9s %5s %8s %9s %6s %9s %6s %8s %14s %14s %5s' conf steps np events comp \
  "run s" "serial s" ratio "par s" ratio "par in" "ser ev/s/rank" "par ev/s/rank" same
[[ -n $BASELINE ]] && printf ' %8s %8s %5s' "base s" new/base base
[[ $BUNDLE == 1 ]] && printf ' %8s %8s' "bun s" bun/run
echo
for conf in $CONFIGS; do
  for np in $NPS; do
    for steps in $STEPS; do
      args=("$steps")
      label=pure
      if [[ $conf == work ]]; then args+=("$WORK"); label="work$WORK"; fi
      t0=$(now)
      "$TF" record --timeline -o "$work/s.tf" -- mpirun -np "$np" "$APP" "${args[@]}" >/dev/null 2>"$work/rec.err"
      t1=$(now)
      "$TF" analyze "$work/s.tf" -o "$work/s.json" 2>"$work/an.err"
      t2=$(now)
      par=0 base=0 bun=0 same=yes bsame=yes
      for ((i = 0; i < REPEAT; i++)); do
        if [[ -n $BASELINE ]]; then
          b0=$(now)
          TRACEFOLD_ANALYZE="$BASELINE/tracefold-analyze" mpirun -np "$np" "$BASELINE/tracefold" \
            analyze "$work/s.tf" -o "$work/b.json" 2>"$work/base.err"
          base=$(echo "$base + $(now) - $b0" | bc)
          cmp -s "$work/s.json" "$work/b.json" || bsame=no
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
      read -r events comp < <(python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
# The steps' time: MPI_Init and MPI_Finalize (and the computation before
# them) are the start and the end, not the program's steps.
cps = [c['op'] not in ('MPI_Init', 'MPI_Init_thread', 'MPI_Finalize') for c in r['callpaths']]
t = {'comp': 0.0, 'time': 0.0}
for v in r['severity']:
    if v['pattern'] in t and cps[v['callpath']]: t[v['pattern']] += v['seconds']
print(r['events'], '%.0f%%' % (100 * t['comp'] / t['time'] if t['time'] else 0))" "$work/s.json")
      awk -v conf="$label" -v s="$steps" -v np="$np" -v e="$events" -v comp="$comp" \
        -v r="$(echo "$t1 - $t0" | bc)" -v a="$(echo "$t2 - $t1" | bc)" \
        -v p="$(echo "$par / $REPEAT" | bc -l)" -v same="$same" -v pin="${inside:-0}" \
        -v b="$(echo "$base / $REPEAT" | bc -l)" -v hasb="${BASELINE:+1}" -v bsame="$bsame" \
        -v u="$(echo "$bun / $REPEAT" | bc -l)" -v hasu="$BUNDLE" \
        'BEGIN { printf "%-8s %-6s %3s %9d %5s %8.3f %9.3f %6.3f %9.3f %6.3f %8.3f %14.0f %14.0f %5s",
                 conf, s, np, e, comp, r, a, a / r, p, p / r, pin, e / a, e / np / p, same
                 if (hasb) printf " %8.3f %8.3f %5s", b, p / b, bsame
                 if (hasu == 1) printf " %8.3f %8.3f", u, u / r
                 printf "\n" }'
      [[ ${PHASES:-0} == 1 ]] && sed -n 's/^tracefold: phase /  phase /p' "$work/par.err"
      [[ ${PHASES:-0} == 1 && $BUNDLE == 1 ]] &&
        sed -n 's/^tracefold: phase \([a-z]* replay\)/  bundled phase \1/p' "$work/bun.err"
    done
  done
done
echo "load after: $(uptime)"
