#!/usr/bin/env bash
# Replay benchmarks (issue 4): how closely `tracefold replay` reproduces a
# run's time, and what walking a trace costs per MPI call.
#
# 1. Accuracy. Every test program of tests/apps at 4 and 8 ranks, in two
#    settings: "comm" (WORK=0: the programs as the test suite runs them,
#    almost no computation, so the run time is communication and MPI
#    overhead) and "compute" (WORK units of ~1 us of floating-point work per
#    time step or task, see tests/apps/app_work.h, chosen so computation
#    dominates). Each configuration is recorded once (tracefold record -o
#    T.tf -- mpirun -np N app STEPS WORK), then the original program and the
#    replay (mpirun -np N tracefold replay --compare-time ORIG T.tf, spinning
#    computation, mean timing) are run alternately ROUNDS times (even rounds
#    original first, odd rounds replay first; ORIG is the latest original
#    time of that configuration).
#
#    What is compared: the replay's own wall time (slowest rank, from a
#    barrier after MPI_Init to MPI_Finalize) against the same interval of the
#    original run, which the programs print on stderr when APP_TIME is set
#    ("app_time: S", measured with PMPI_Barrier/PMPI_Reduce, so it adds no
#    traced calls). The wall time of the whole mpirun command is not used:
#    mpirun's start-up and shut-down (~0.3-0.6 s here) are as long as the
#    runs, and the replay's command also loads the trace.
#
#    Reported: median original and replay times, the spread of the original
#    runs ((max - min) / median: the run-to-run noise), the error of the medians
#    |replay - original| / original, and the median of the per-run errors
#    the replay printed (against the latest original run, so back-to-back
#    pairs), and the same interval in the traced run the replay was made
#    from (APP_TIME is set for the recording too; its PMPI_Barrier after
#    MPI_Init lands in the first computation gap of the trace). The replay
#    reproduces that run's computation gaps, so "recorded" separates the
#    replay's own error from the recording's overhead and from the machine's
#    load at recording time. Mean absolute error per setting and rank count
#    at the end.
#
# 2. Walking overhead. A trace of app_ring ITERS (Irecv + Isend + Waitall of
#    one MPI_LONG per step, then an Allreduce) replayed with --no-compute,
#    against bench/mpi/ring_loop.c, which issues exactly those calls by hand
#    and times them the same way; alternated WALK_ROUNDS times at each of
#    WALK_NPS rank counts. Calls/s of each (calls from the replay's summary
#    line and from ring_loop's own count) and their ratio, plus the added
#    time per call and rank.
#
# 8 ranks on a 2-core machine are 4x oversubscribed (4 ranks 2x): waiting
# ranks busy-poll, so communication time is largely the scheduler's doing
# and varies from run to run; the compute setting is the stable one. The
# 2-rank walking runs (one rank per core) are the trustworthy ones there.
#
# Takes about 10 minutes on a busy 2-core machine. Settings (environment):
#   BUILD_DIR=build          build tree (src/cli/tracefold, src/replay/tracefold-replay,
#                            tests/apps/app_*, bench/ring_loop; ring_loop is
#                            compiled with mpicc when missing)
#   ROUNDS=3                 original/replay runs per configuration (>= 2)
#   NPS="4 8"                rank counts of the accuracy table
#   SETTINGS="comm compute"
#   APPS="ring stencil2d_periodic ..."   programs (default: all 13 below)
#   STEPS_<app>_<np>_<setting>, e.g. STEPS_cg_8_comm=4000  (defaults below)
#   WORK_<app>_<np>           work units per step of the compute setting
#   WALK_NPS="2 4"           rank counts of the walking benchmark ("" skips it)
#   WALK_ITERS=500000        ring steps
#   WALK_ROUNDS=3
#
# Binaries are copied to a temp dir first, so a concurrent rebuild of
# BUILD_DIR cannot change them half-way through.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
ROUNDS="${ROUNDS:-3}"
NPS="${NPS:-4 8}"
SETTINGS="${SETTINGS:-comm compute}"
APPS="${APPS:-ring stencil2d_periodic stencil2d_nonperiodic stencil3d sweep3d cg ft lu pop bt_like master_worker persistent nbc}"
WALK_NPS="${WALK_NPS-2 4}"
WALK_ITERS="${WALK_ITERS:-500000}"
WALK_ROUNDS="${WALK_ROUNDS:-3}"
((ROUNDS >= 2)) || { echo "bench-replay: ROUNDS must be at least 2" >&2; exit 2; }

# Default step counts: comm runs of ~0.1-1 s, compute runs of ~1 s (of
# which 80-95% computation), measured on the shared (and busy) 2-core test
# machine.
# master_worker's steps are tasks (the workers compute, rank 0 hands out).
declare -A DEFAULT_STEPS=(
  [ring_4_comm]=140000 [stencil2d_periodic_4_comm]=18000 [stencil2d_nonperiodic_4_comm]=14000
  [stencil3d_4_comm]=4000 [sweep3d_4_comm]=3000 [cg_4_comm]=2000 [ft_4_comm]=17000 [lu_4_comm]=8000
  [pop_4_comm]=1500 [bt_like_4_comm]=50000 [master_worker_4_comm]=70000 [persistent_4_comm]=40000
  [nbc_4_comm]=1200
  [ring_8_comm]=80000 [stencil2d_periodic_8_comm]=6000 [stencil2d_nonperiodic_8_comm]=6000
  [stencil3d_8_comm]=5000 [sweep3d_8_comm]=1500 [cg_8_comm]=1000 [ft_8_comm]=2200 [lu_8_comm]=2000
  [pop_8_comm]=700 [bt_like_8_comm]=13000 [master_worker_8_comm]=50000 [persistent_8_comm]=13000
  [nbc_8_comm]=750
  [ring_4_compute]=700 [stencil2d_periodic_4_compute]=700 [stencil2d_nonperiodic_4_compute]=700
  [stencil3d_4_compute]=350 [sweep3d_4_compute]=350 [cg_4_compute]=140 [ft_4_compute]=700
  [lu_4_compute]=700 [pop_4_compute]=140 [bt_like_4_compute]=700 [master_worker_4_compute]=1400
  [persistent_4_compute]=700 [nbc_4_compute]=140
  [ring_8_compute]=350 [stencil2d_periodic_8_compute]=170 [stencil2d_nonperiodic_8_compute]=170
  [stencil3d_8_compute]=170 [sweep3d_8_compute]=70 [cg_8_compute]=35 [ft_8_compute]=70
  [lu_8_compute]=70 [pop_8_compute]=35 [bt_like_8_compute]=170 [master_worker_8_compute]=2400
  [persistent_8_compute]=170 [nbc_8_compute]=35
)
declare -A DEFAULT_WORK=(
  [ring_4]=500 [stencil2d_periodic_4]=500 [stencil2d_nonperiodic_4]=500 [stencil3d_4]=1000
  [sweep3d_4]=1000 [cg_4]=2500 [ft_4]=500 [lu_4]=500 [pop_4]=2500 [bt_like_4]=500
  [master_worker_4]=500 [persistent_4]=500 [nbc_4]=2500
  [ring_8]=500 [stencil2d_periodic_8]=1000 [stencil2d_nonperiodic_8]=1000 [stencil3d_8]=1000
  [sweep3d_8]=2500 [cg_8]=5000 [ft_8]=2500 [lu_8]=2500 [pop_8]=5000 [bt_like_8]=1000
  [master_worker_8]=500 [persistent_8]=1000 [nbc_8]=5000
)
steps_for() { # APP NP SETTING
  local var="STEPS_$1_$2_$3"
  echo "${!var:-${DEFAULT_STEPS[$1_$2_$3]:-2000}}"
}
work_for() { # APP NP SETTING
  [[ $3 == comm ]] && { echo 0; return; }
  local var="WORK_$1_$2"
  echo "${!var:-${DEFAULT_WORK[$1_$2]:-1000}}"
}

for f in "$BUILD_DIR/src/cli/tracefold" "$BUILD_DIR/src/replay/tracefold-replay" "$BUILD_DIR/src/record/libtracefold.so"; do
  [[ -x $f ]] || { echo "bench-replay: $f missing; build first (cmake --build $BUILD_DIR)" >&2; exit 2; }
done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin/cli" "$work/bin/record" "$work/bin/apps" "$work/run" "$work/traces"
cp "$BUILD_DIR/src/cli/tracefold" "$BUILD_DIR/src/replay/tracefold-replay" "$work/bin/cli/"
cp "$BUILD_DIR/src/record/libtracefold.so" "$work/bin/record/"
export TRACEFOLD_LIB="$work/bin/record/libtracefold.so"
export TRACEFOLD_REPLAY="$work/bin/cli/tracefold-replay"
TF="$work/bin/cli/tracefold"
apps_needed="$APPS"
[[ -n $WALK_NPS ]] && apps_needed+=" ring"
for app in $apps_needed; do
  [[ -x $BUILD_DIR/tests/apps/app_$app ]] || { echo "bench-replay: $BUILD_DIR/tests/apps/app_$app missing" >&2; exit 2; }
  cp "$BUILD_DIR/tests/apps/app_$app" "$work/bin/apps/"
done
if [[ -n $WALK_NPS ]]; then
  if [[ -x $BUILD_DIR/bench/ring_loop ]]; then cp "$BUILD_DIR/bench/ring_loop" "$work/bin/"
  else mpicc -O2 bench/mpi/ring_loop.c -o "$work/bin/ring_loop"; fi
fi

TIMES="$work/times.txt"; : >"$TIMES"     # kind round np app setting value...
ANOM="$work/anomalies.txt"; : >"$ANOM"
START=$(date +%s)
declare -A RESULT LAST_ORIG

# check_run LABEL RC DIR STDERR_FILTER: note a failure or unexpected stderr.
check_run() {
  local label=$1 rc=$2 d=$3 filter=$4 extra
  extra=$(grep -v -E "$filter" "$d/err.txt" || true)
  if ((rc != 0)) || [[ -n $extra ]]; then
    { echo "--- $label: exit $rc"; [[ -n $extra ]] && printf '%s\n' "$extra" | head -n 8; } >>"$ANOM"
  fi
  return 0
}
# check_result KEY LABEL: the program's result line must not change.
check_result() {
  local result
  result=$(head -n 1 "$work/run/out.txt")
  if [[ -z ${RESULT[$1]+x} ]]; then RESULT[$1]=$result
  elif [[ ${RESULT[$1]} != "$result" ]]; then
    echo "--- $2: result line differs: '$result' vs '${RESULT[$1]}'" >>"$ANOM"
  fi
}

record() { # NP APP SETTING
  local np=$1 app=$2 setting=$3 d="$work/run" rc=0 steps wk
  steps=$(steps_for "$app" "$np" "$setting"); wk=$(work_for "$app" "$np" "$setting")
  rm -rf "${d:?}"/*
  (cd "$d" && APP_TIME=1 "$TF" record -o "$work/traces/$app-$np-$setting.tf" -- \
      mpirun -np "$np" "$work/bin/apps/app_$app" "$steps" "$wk" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
  check_run "record $app np=$np $setting" $rc "$d" '^(app_time: |tracefold: (wrote .* merged in [0-9.]+ s[,)]|trace of [0-9]+ ranks written to ))'
  check_result "$np-$app-$setting" "record $app np=$np $setting"
  t=$(sed -n 's/^app_time: \([0-9.]*\)$/\1/p' "$d/err.txt")
  [[ -n $t ]] && echo "traced 0 $np $app $setting $t" >>"$TIMES"
  return 0
}

original() { # NP APP SETTING
  local np=$1 app=$2 setting=$3 d="$work/run" rc=0 steps wk t
  steps=$(steps_for "$app" "$np" "$setting"); wk=$(work_for "$app" "$np" "$setting")
  rm -rf "${d:?}"/*
  (cd "$d" && APP_TIME=1 mpirun -np "$np" "$work/bin/apps/app_$app" "$steps" "$wk" \
      >"$d/out.txt" 2>"$d/err.txt") || rc=$?
  check_run "original $app np=$np $setting" $rc "$d" '^app_time: '
  check_result "$np-$app-$setting" "original $app np=$np $setting"
  t=$(sed -n 's/^app_time: \([0-9.]*\)$/\1/p' "$d/err.txt")
  if [[ -n $t ]]; then
    echo "orig $ROUND $np $app $setting $steps $wk $t" >>"$TIMES"
    LAST_ORIG[$np-$app-$setting]=$t
  fi
}

replay() { # NP APP SETTING
  local np=$1 app=$2 setting=$3 d="$work/run" rc=0 line wall err cmp
  rm -rf "${d:?}"/*
  cmp=${LAST_ORIG[$np-$app-$setting]:-}
  (cd "$d" && mpirun -np "$np" "$TF" replay ${cmp:+--compare-time "$cmp"} "$work/traces/$app-$np-$setting.tf" \
      >"$d/out.txt" 2>"$d/err.txt") || rc=$?
  check_run "replay $app np=$np $setting" $rc "$d" '^$'
  line=$(grep '^replay: ' "$d/out.txt" || true)
  wall=$(sed -n 's/.*, wall \([0-9.e+-]*\) s,.*/\1/p' <<<"$line")
  err=$(sed -n 's/.*, error \([0-9.]*\)%$/\1/p' <<<"$line")
  [[ -n $wall ]] && echo "replay $ROUND $np $app $setting $wall ${err:--}" >>"$TIMES"
  return 0
}

walk() { # MODE NP
  local mode=$1 np=$2 d="$work/run" rc=0 line calls wall
  rm -rf "${d:?}"/*
  if [[ $mode == replay ]]; then
    (cd "$d" && mpirun -np "$np" "$TF" replay --no-compute "$work/traces/walk-$np.tf" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
    line=$(grep '^replay: ' "$d/out.txt" || true)
    calls=$(sed -n 's/.* \([0-9]*\) MPI calls,.*/\1/p' <<<"$line")
  else
    (cd "$d" && mpirun -np "$np" "$work/bin/ring_loop" "$WALK_ITERS" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
    line=$(grep '^ring_loop: ' "$d/out.txt" || true)
    calls=$(sed -n 's/.* \([0-9]*\) MPI calls,.*/\1/p' <<<"$line")
  fi
  check_run "walk $mode np=$np" $rc "$d" '^$'
  wall=$(sed -n 's/.*, wall \([0-9.e+-]*\) s,.*/\1/p' <<<"$line")
  [[ -n $wall && -n $calls ]] && echo "walk $ROUND $np $mode $calls $wall" >>"$TIMES"
  return 0
}

echo "bench-replay: $ROUNDS rounds, ranks {$NPS}, settings {$SETTINGS}, programs {$APPS}" >&2
for np in $NPS; do
  for setting in $SETTINGS; do
    for app in $APPS; do record "$np" "$app" "$setting"; done
  done
done
echo "  recorded after $(($(date +%s) - START)) s" >&2
for ((r = 0; r < ROUNDS; r++)); do
  ROUND=$r
  if ((r % 2 == 0)); then order="original replay"; else order="replay original"; fi
  for np in $NPS; do
    for setting in $SETTINGS; do
      for app in $APPS; do
        for mode in $order; do "$mode" "$np" "$app" "$setting"; done
      done
    done
  done
  echo "  round $((r + 1))/$ROUNDS done after $(($(date +%s) - START)) s" >&2
done

if [[ -n $WALK_NPS ]]; then
  for np in $WALK_NPS; do
    d="$work/run"; rm -rf "${d:?}"/*; rc=0
    (cd "$d" && "$TF" record -o "$work/traces/walk-$np.tf" -- \
        mpirun -np "$np" "$work/bin/apps/app_ring" "$WALK_ITERS" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
    check_run "record ring np=$np $WALK_ITERS steps" $rc "$d" '^tracefold: (wrote .* merged in [0-9.]+ s[,)]|trace of [0-9]+ ranks written to )'
  done
  for ((r = 0; r < WALK_ROUNDS; r++)); do
    ROUND=$r
    if ((r % 2 == 0)); then order="hand replay"; else order="replay hand"; fi
    for np in $WALK_NPS; do
      for mode in $order; do walk "$mode" "$np"; done
    done
  done
  echo "  walking benchmark done after $(($(date +%s) - START)) s" >&2
fi

python3 - "$TIMES" "$WALK_ITERS" <<'PY'
import statistics, sys
orig, rep, traced, walk, order = {}, {}, {}, {}, []
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "orig":
        key = (int(f[2]), f[4], f[3])  # np, setting, app
        if key not in orig:
            order.append(key)
        orig.setdefault(key, {"steps": f[5], "work": f[6], "t": []})["t"].append(float(f[7]))
    elif f[0] == "replay":
        key = (int(f[2]), f[4], f[3])
        rep.setdefault(key, {"t": [], "err": []})
        rep[key]["t"].append(float(f[5]))
        if f[6] != "-":
            rep[key]["err"].append(float(f[6]))
    elif f[0] == "traced":
        traced[(int(f[2]), f[4], f[3])] = float(f[5])
    elif f[0] == "walk":
        walk.setdefault((int(f[2]), f[3]), []).append((int(f[4]), float(f[5])))

med = statistics.median
if order:
    print()
    print("=== Replay accuracy: original vs replay wall time (MPI_Init to MPI_Finalize, slowest rank; median of runs) ===")
    fmt = "%5s %-8s %-22s %6s %5s %9s %7s %9s %8s %12s %10s"
    print(fmt % ("ranks", "setting", "program", "steps", "work", "orig s", "spread", "replay s", "error",
                 "paired error", "recorded s"))
    errs = {}
    for key in sorted(order, key=lambda k: (k[0], k[1] != "comm", order.index(k))):
        np, setting, app = key
        o, r = orig[key], rep.get(key)
        rec = "%.3f" % traced[key] if key in traced else "-"
        spread = "%.0f%%" % (100 * (max(o["t"]) - min(o["t"])) / med(o["t"]))
        if not r or not r["t"]:
            print(fmt % (np, setting, app, o["steps"], o["work"], "%.3f" % med(o["t"]), spread, "-", "-", "-", rec))
            continue
        mo, mr = med(o["t"]), med(r["t"])
        e = 100 * abs(mr - mo) / mo
        errs.setdefault((setting, np), []).append(e)
        paired = "%.1f%%" % med(r["err"]) if r["err"] else "-"
        print(fmt % (np, setting, app, o["steps"], o["work"], "%.3f" % mo, spread, "%.3f" % mr,
                     "%.1f%%" % e, paired, rec))
    print("spread = (max - min) / median of the original runs (the machine's run-to-run noise)")
    print("error = |median replay - median original| / median original; paired error = median of the")
    print("errors the replay printed with --compare-time (latest original run of the same configuration);")
    print("recorded = the same interval in the one traced run the replay was made from")
    print()
    print("Mean absolute error:")
    for setting in ("comm", "compute"):
        for np in sorted({k[1] for k in errs}):
            v = errs.get((setting, np))
            if v:
                print("  %-8s %2d ranks: %5.1f%% over %d programs (max %.1f%%)" % (setting, np, statistics.mean(v), len(v), max(v)))
        allv = [e for (s, _), v in errs.items() if s == setting for e in v]
        if allv:
            print("  %-8s all:      %5.1f%%" % (setting, statistics.mean(allv)))

if walk:
    print()
    print("=== Replay walking overhead: app_ring trace, replay --no-compute vs the same calls by hand (ring_loop) ===")
    print("ring steps: %s; median of runs" % sys.argv[2])
    fmt = "%5s %12s %12s %14s %14s %13s %16s"
    print(fmt % ("ranks", "MPI calls", "hand s", "hand calls/s", "replay calls/s", "replay/hand", "added us/call"))
    for np in sorted({k[0] for k in walk}):
        h, r = walk.get((np, "hand")), walk.get((np, "replay"))
        if not h or not r:
            continue
        hc, hw = h[0][0], med([w for _, w in h])
        rc, rw = r[0][0], med([w for _, w in r])
        note = "" if hc == rc else "  (call counts differ: hand %d, replay %d)" % (hc, rc)
        per_rank_calls = rc / np
        print(fmt % (np, rc, "%.3f" % hw, "%.0f" % (hc / hw), "%.0f" % (rc / rw), "%.2f" % ((rc / rw) / (hc / hw)),
                     "%.2f" % (1e6 * (rw - hw) / per_rank_calls)) + note)
    print("calls/s = MPI calls of all ranks / wall time; added us/call = (replay - hand wall) / calls per rank")
PY

echo
if [[ -s $ANOM ]]; then
  echo "=== Anomalies (failed runs, result mismatches, unexpected stderr) ==="
  cat "$ANOM"
else
  echo "No anomalies: every run exited 0, result lines matched across record and original runs, no unexpected stderr."
fi
echo "total time: $(($(date +%s) - START)) s"
