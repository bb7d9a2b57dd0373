#!/usr/bin/env bash
# Recorder overhead on whole runs: wall time of the 2D (non-periodic) and 3D
# stencils, untraced (mpirun -np N app STEPS) vs traced (tracefold record -o
# T.tf -- mpirun ...), run alternately ROUNDS times each (ABBA order: even
# rounds untraced first, odd rounds traced first), at 16, 4 and 2 ranks.
# Prints the median wall times, the overhead in percent (ratio of the
# medians), and the per-round ratio traced/untraced of the two back-to-back
# runs, which cancels slow changes in the machine's load.
#
# Each configuration is also run with 10 steps, alternated the same way: the
# difference there is the fixed cost (tracefold's launcher, preloading, the
# merge at MPI_Finalize); what remains, divided by the extra steps, is the
# added cost per time step.
#
# 16 ranks on a 2-core machine are 8x oversubscribed: the ranks busy-poll
# for messages and the run time is mostly the scheduler's doing. The 2-rank
# runs (one rank per core) are the trustworthy ones there; 4 ranks are 2x
# oversubscribed.
#
# Takes about 4-5 minutes on an idle 2-core machine. Settings (environment):
#   BUILD_DIR=build                 build tree (src/cli/tracefold, tests/apps/app_*)
#   ROUNDS=7                        runs of each kind (at least 3)
#   NPS="16 4 2"                    rank counts
#   APPS="stencil2d_nonperiodic stencil3d"
#   STEPS_<app>_<np>                step count, e.g. STEPS_stencil3d_16=2000
#                                   (defaults below)
#   SHORT_STEPS=10                  step count of the fixed-cost runs (0: skip them)
#   WORK=                           work units (~1 us of computation each, tests/apps/app_work.h)
#                                   per step, passed as the programs' second argument; empty:
#                                   the programs as the test suite runs them (~1 us steps)
#   EDGE=                           local block edge of the stencils (third argument; default:
#                                   the programs' own, 24x24 in 2D, 10^3 in 3D): real Jacobi work
#                                   and halo sizes of a larger problem (scripts/bench-stencil-grid.sh
#                                   sweeps it)
#
# Binaries are copied to a temp dir first, so a concurrent rebuild of
# BUILD_DIR cannot change them half-way through.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
ROUNDS="${ROUNDS:-7}"
NPS="${NPS:-16 4 2}"
APPS="${APPS:-stencil2d_nonperiodic stencil3d}"
SHORT_STEPS="${SHORT_STEPS:-10}"
((ROUNDS >= 3)) || { echo "bench-stencil-overhead: ROUNDS must be at least 3" >&2; exit 2; }

# Default step counts: on an idle 2-core machine, untraced runs of about 1 s
# (of which ~0.35 s is mpirun's start-up) and traced runs of 2.5-4 s.
declare -A DEFAULT_STEPS=(
  [stencil2d_nonperiodic_16]=15000 [stencil2d_nonperiodic_4]=150000 [stencil2d_nonperiodic_2]=500000
  [stencil2d_periodic_16]=10000 [stencil2d_periodic_4]=100000 [stencil2d_periodic_2]=300000
  [stencil3d_16]=6000 [stencil3d_4]=50000 [stencil3d_2]=120000
)
steps_for() {
  local var="STEPS_$1_$2"
  echo "${!var:-${DEFAULT_STEPS[$1_$2]:-10000}}"
}

for f in "$BUILD_DIR/src/cli/tracefold" "$BUILD_DIR/src/record/libtracefold.so"; do
  [[ -x $f ]] || { echo "bench-stencil-overhead: $f missing; build first (cmake --build $BUILD_DIR)" >&2; exit 2; }
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin/cli" "$work/bin/record" "$work/bin/apps" "$work/run"
cp "$BUILD_DIR/src/cli/tracefold" "$work/bin/cli/"
cp "$BUILD_DIR/src/record/libtracefold.so" "$work/bin/record/"
export TRACEFOLD_LIB="$work/bin/record/libtracefold.so"
TF="$work/bin/cli/tracefold"
for app in $APPS; do
  [[ -x $BUILD_DIR/tests/apps/app_$app ]] || { echo "bench-stencil-overhead: $BUILD_DIR/tests/apps/app_$app missing" >&2; exit 2; }
  cp "$BUILD_DIR/tests/apps/app_$app" "$work/bin/apps/"
done

APP_ARGS=()
if [[ -n ${EDGE:-} ]]; then APP_ARGS=("${WORK:-0}" "$EDGE")
elif [[ -n ${WORK:-} ]]; then APP_ARGS=("$WORK"); fi
TIMES="$work/times.txt"; : >"$TIMES"     # round np app steps mode microseconds
ANOM="$work/anomalies.txt"; : >"$ANOM"
START=$(date +%s)

# timed MODE NP APP STEPS: one run, its wall time appended to $TIMES.
timed() {
  local mode=$1 np=$2 app=$3 steps=$4 d="$work/run" rc=0 t0 t1
  rm -rf "${d:?}"/*
  t0=$(date +%s%N)
  if [[ $mode == untraced ]]; then
    (cd "$d" && mpirun -np "$np" "$work/bin/apps/app_$app" "$steps" "${APP_ARGS[@]}" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
  else
    (cd "$d" && "$TF" record -o "$d/t.tf" -- mpirun -np "$np" "$work/bin/apps/app_$app" "$steps" "${APP_ARGS[@]}" \
        >"$d/out.txt" 2>"$d/err.txt") || rc=$?
  fi
  t1=$(date +%s%N)
  echo "$ROUND $np $app $steps $mode $(((t1 - t0) / 1000))" >>"$TIMES"
  # Result line without the run-dependent parts must match between modes.
  local result
  result=$(head -n 1 "$d/out.txt")
  local key="$np-$app-$steps" extra
  if [[ -z ${RESULT[$key]+x} ]]; then RESULT[$key]=$result
  elif [[ ${RESULT[$key]} != "$result" ]]; then
    echo "--- $app np=$np steps=$steps $mode: result line differs: '$result' vs '${RESULT[$key]}'" >>"$ANOM"
  fi
  extra=$(grep -v -E '^tracefold: (wrote .* merged in [0-9.]+ s[,)]|trace of [0-9]+ ranks written to )' "$d/err.txt" || true)
  if ((rc != 0)) || [[ -n $extra ]] || [[ $mode == traced && ! -s $d/t.tf ]]; then
    {
      echo "--- $app np=$np steps=$steps $mode: exit $rc$([[ $mode == traced && ! -s $d/t.tf ]] && echo ', no trace')"
      [[ -n $extra ]] && printf '%s\n' "$extra" | head -n 8
    } >>"$ANOM"
  fi
}
declare -A RESULT

echo "bench-stencil-overhead: $ROUNDS rounds, ranks {$NPS}, programs {$APPS}, work {${WORK:-none}}, edge {${EDGE:-default}}" >&2
for ((r = 0; r < ROUNDS; r++)); do
  ROUND=$r
  if ((r % 2 == 0)); then order="untraced traced"; else order="traced untraced"; fi
  for np in $NPS; do
    for app in $APPS; do
      step_list=$(steps_for "$app" "$np")
      ((SHORT_STEPS > 0)) && step_list+=" $SHORT_STEPS"
      for steps in $step_list; do
        for mode in $order; do timed "$mode" "$np" "$app" "$steps"; done
      done
    done
  done
  echo "  round $((r + 1))/$ROUNDS done after $(($(date +%s) - START)) s" >&2
done

python3 - "$TIMES" "$SHORT_STEPS" <<'PY'
import statistics, sys
t, order = {}, []
for line in open(sys.argv[1]):
    rnd, np, app, steps, mode, us = line.split()
    key = (int(np), app, int(steps))
    if key not in t:
        order.append(key)
    t.setdefault(key, {}).setdefault(mode, {})[int(rnd)] = int(us) / 1e6
short = int(sys.argv[2])

def rng(v):
    return "%.3f [%.2f-%.2f]" % (statistics.median(v), min(v), max(v))

print()
print("=== Stencil wall time, untraced vs traced (alternating runs; median [min-max]) ===")
fmt = "%5s %-22s %7s %6s %20s %20s %9s %21s  %s"
print(fmt % ("ranks", "program", "steps", "rounds", "untraced s", "traced s", "overhead",
             "paired traced/untr.", "traced slower in"))
res = {}
for key in order:
    np, app, steps = key
    u, tr = t[key].get("untraced", {}), t[key].get("traced", {})
    rounds = sorted(set(u) & set(tr))
    if not rounds:
        continue
    uv, tv = [u[r] for r in rounds], [tr[r] for r in rounds]
    mu, mt = statistics.median(uv), statistics.median(tv)
    paired = [tr[r] / u[r] for r in rounds]
    slower = sum(p > 1 for p in paired)
    res[key] = (mu, mt, paired)
    print(fmt % (np, app, steps, len(rounds), rng(uv), rng(tv), "%+.0f%%" % (100 * (mt - mu) / mu),
                 "%.2f [%.2f-%.2f]" % (statistics.median(paired), min(paired), max(paired)),
                 "%d/%d rounds" % (slower, len(rounds))))
print("overhead = median traced / median untraced - 1; paired = traced/untraced of the two runs of")
print("one round (back to back, so slow drifts in the machine's load cancel out)")

if short > 0:
    print()
    print("=== Fixed vs per-step cost (from the medians above; approximate) ===")
    fmt2 = "%5s %-22s %7s %14s %18s %17s %11s"
    print(fmt2 % ("ranks", "program", "steps", "fixed cost s", "untraced us/step", "traced us/step", "per-step x"))
    for (np, app, steps), (mu, mt, _) in res.items():
        if steps == short or (np, app, short) not in res:
            continue
        su, st, _ = res[(np, app, short)]
        plain = (mu - su) / (steps - short) * 1e6
        traced = (mt - st) / (steps - short) * 1e6
        ratio = "%.1f" % (traced / plain) if plain > 0 else "-"
        print(fmt2 % (np, app, steps, "%+.3f" % (st - su), "%.2f" % plain, "%.2f" % traced, ratio))
    print("fixed cost = traced - untraced median at %d steps (tracefold launcher, preload, merge);" % short)
    print("us/step = (median at STEPS - median at %d steps) / (STEPS - %d)" % (short, short))

print()
print("Run-to-run noise, (max-min)/median over both series of the long runs:")
by_np = {}
for (np, app, steps), (mu, mt, paired) in res.items():
    if steps == short:
        continue
    u, tr = t[(np, app, steps)]["untraced"].values(), t[(np, app, steps)]["traced"].values()
    by_np.setdefault(np, []).append(max((max(v) - min(v)) / statistics.median(v) for v in (u, tr)))
for np in sorted(by_np):
    print("  %3d ranks: %s" % (np, ", ".join("%.0f%%" % (100 * x) for x in by_np[np])))
PY

echo
if [[ -s $ANOM ]]; then
  echo "=== Anomalies (failed runs, result mismatches, unexpected stderr) ==="
  cat "$ANOM"
else
  echo "No anomalies: every run exited 0, traced runs wrote a trace, result lines matched, no unexpected stderr."
fi
echo "total time: $(($(date +%s) - START)) s"
