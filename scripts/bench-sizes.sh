#!/usr/bin/env bash
# Trace size vs raw-log size, for the text form of the trace (format version
# 2, record --text; scripts/bench-sizes-compact.sh compares it with the
# compact form): records every MPI test program (except
# app_abort, app_crash) at 4, 8, 16, 32 and 64 ranks with --raw-log and prints, per run,
# the folded trace's bytes, the raw logs' bytes (sum of the rank files), the
# raw logs concatenated (rank order) and compressed with `zstd -19`, the
# trace compressed the same way, and the ratios raw/trace, raw.zst/trace and
# raw.zst/trace.zst. Then the finalize merge time the
# recorder reports ("merged in X s") for the 2D stencils at 16 and 64 ranks,
# median of MERGE_REPEATS runs, as a share of the same run's wall time.
#
# Takes about 4-6 minutes on 2 cores. Settings (environment):
#   BUILD_DIR=build      build tree with src/cli/tracefold and tests/apps/app_*
#   NPS="4 8 16 32 64"   rank counts
#   STEPS=50             step count (argv[1]) for every program ...
#   STEPS_64=50          ... except at >= 64 ranks
#   RUN_TIMEOUT=20       seconds (plus 1 per rank) a recorded run may take before
#                        it is killed ("timeout"); a program that fails or
#                        times out is skipped at the larger rank counts
#   BUDGET=360           seconds after which the remaining >= 64-rank runs are
#                        skipped (marked "skipped(budget)") to keep the script short
#   MERGE_REPEATS=3      runs per 2D-stencil merge-time measurement
#   APPS_FILTER=REGEX    only programs whose name matches (e.g. 'stencil|ring')
#
# Binaries are copied to a temp dir first, so a concurrent rebuild of
# BUILD_DIR cannot change them half-way through.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
NPS="${NPS:-4 8 16 32 64}"
STEPS="${STEPS:-50}"
STEPS_64="${STEPS_64:-50}"
RUN_TIMEOUT="${RUN_TIMEOUT:-20}"
BUDGET="${BUDGET:-360}"
MERGE_REPEATS="${MERGE_REPEATS:-3}"
APPS_FILTER="${APPS_FILTER:-.}"

source scripts/lib/bench_apps.bash
bench_copy_build bench-sizes

steps_for() { if (($1 >= 64)); then echo "$STEPS_64"; else echo "$STEPS"; fi; }
now() { date +%s.%N; }
START=$(now)
elapsed() { awk -v a="$START" -v b="$(now)" 'BEGIN{printf "%d", b - a}'; }

ROWS="$work/rows.txt"; : >"$ROWS"          # app np steps status trace raw zst merge wall
MERGES="$work/merges.txt"; : >"$MERGES"    # app np steps merge wall
ANOM="$work/anomalies.txt"; : >"$ANOM"

# run APP NP STEPS: one recorded run in $work/run; sets RUN_STATUS (ok, or
# why not), RUN_MERGE (seconds, or -), RUN_WALL (seconds); recorder and MPI
# messages on stderr other than the usual three lines go to $ANOM.
run() {
  local app=$1 np=$2 steps=$3 d="$work/run" rc=0 t0 t1 limit=$((RUN_TIMEOUT + $2))
  rm -rf "$d"; mkdir -p "$d"
  t0=$(now)
  (cd "$d" && timeout -k 5 "$limit" "$TF" record --text -o "$d/t.tf" --raw-log "$d/raw" -- \
      mpirun -np "$np" "$work/bin/apps/app_$app" "$steps" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
  t1=$(now)
  RUN_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b - a}')
  RUN_MERGE=$(sed -n 's/.*merged in \([0-9.]*\) s[,)].*/\1/p' "$d/err.txt" | head -n 1)
  RUN_MERGE=${RUN_MERGE:--}
  local nraw=0
  [[ -d $d/raw ]] && nraw=$(find "$d/raw" -name 'rank-*.txt' | wc -l)
  if ((rc == 124 || rc == 137)); then RUN_STATUS="timeout(${limit}s)"
  elif ((rc != 0)); then RUN_STATUS="exit$rc"
  elif [[ ! -s $d/t.tf ]]; then RUN_STATUS="no-trace"
  elif ((nraw != np)); then RUN_STATUS="raw:$nraw/$np"
  elif [[ ! -s $d/out.txt ]]; then RUN_STATUS="no-output"
  else RUN_STATUS=ok
  fi
  local extra
  extra=$(grep -v -E '^tracefold: (wrote .* merged in [0-9.]+ s[,)]|trace of [0-9]+ ranks written to |raw logs in )' "$d/err.txt" || true)
  if [[ $RUN_STATUS != ok || -n $extra ]]; then
    {
      echo "--- $app np=$np steps=$steps: status $RUN_STATUS (exit $rc)"
      [[ -n $extra ]] && printf '%s\n' "$extra" | head -n 8
      [[ $RUN_STATUS != ok ]] && tail -n 3 "$d/out.txt" 2>/dev/null
    } >>"$ANOM"
  fi
}

declare -A FAILED
# Programs written for a range of rank counts (they say so and abort beyond it).
declare -A MAX_NP=([wild_statuses]=12 [wild_statuses_f]=12)
echo "bench-sizes: ${#apps[@]} programs x ranks {$NPS}, steps $STEPS (at >= 64 ranks: $STEPS_64)" >&2
for np in $NPS; do
  for app in "${apps[@]}"; do
    steps=$(steps_for "$np")
    if [[ -n ${MAX_NP[$app]:-} ]] && ((np > MAX_NP[$app])); then
      echo "$app $np $steps n/a(max-${MAX_NP[$app]}-ranks) - - - - - -" >>"$ROWS"
      continue
    fi
    if [[ -n ${FAILED[$app]:-} ]]; then
      echo "$app $np $steps skipped(failed-at-${FAILED[$app]}-ranks) - - - - - -" >>"$ROWS"
      continue
    fi
    if ((np >= 64 && $(elapsed) > BUDGET)); then
      echo "$app $np $steps skipped(budget) - - - - - -" >>"$ROWS"
      printf '  [%3ss] %-24s np=%-3s skipped (time budget)\n' "$(elapsed)" "$app" "$np" >&2
      continue
    fi
    run "$app" "$np" "$steps"
    d="$work/run"
    if [[ $RUN_STATUS == ok ]]; then
      trace=$(stat -c %s "$d/t.tf")
      raw=0; zst=0
      # Rank order, not glob order, for the concatenation.
      files=(); for ((r = 0; r < np; r++)); do files+=("$d/raw/rank-$r.txt"); done
      raw=$(cat "${files[@]}" | wc -c)
      zst=$(cat "${files[@]}" | zstd -19 -q -c | wc -c)
      tzst=$(zstd -19 -q -c "$d/t.tf" | wc -c)
      echo "$app $np $steps ok $trace $raw $zst $tzst $RUN_MERGE $RUN_WALL" >>"$ROWS"
      case $app:$np in stencil2d_*:16 | stencil2d_*:64) echo "$app $np $steps $RUN_MERGE $RUN_WALL" >>"$MERGES" ;; esac
    else
      echo "$app $np $steps $RUN_STATUS - - - - - $RUN_WALL" >>"$ROWS"
      FAILED[$app]=$np
    fi
    printf '  [%3ss] %-24s np=%-3s %s\n' "$(elapsed)" "$app" "$np" "$RUN_STATUS" >&2
  done
done

# Extra runs of the 2D stencils for a median merge time (the table's run is the first).
for np in 16 64; do
  [[ " $NPS " == *" $np "* ]] || continue
  for app in "${apps[@]}"; do
    [[ $app == stencil2d_* ]] || continue
    grep -q "^$app $np .* ok " "$ROWS" || continue
    for ((i = 1; i < MERGE_REPEATS; i++)); do
      if ((np >= 64 && $(elapsed) > BUDGET + 60)); then break; fi
      run "$app" "$np" "$(steps_for "$np")"
      [[ $RUN_STATUS == ok ]] && echo "$app $np $(steps_for "$np") $RUN_MERGE $RUN_WALL" >>"$MERGES"
    done
    printf '  [%3ss] merge repeats %-24s np=%s\n' "$(elapsed)" "$app" "$np" >&2
  done
done

echo
echo "=== Trace vs raw-log size (tracefold record --raw-log; zst = rank files concatenated, zstd -19) ==="
python3 - "$ROWS" <<'PY'
import statistics, sys
fmt = "%-24s %5s %6s %9s %11s %10s %10s %9s %9s %11s  %s"
print(fmt % ("program", "ranks", "steps", "trace B", "raw B", "raw.zst B", "trace.zst", "raw/trace",
             "zst/trace", "zst/tr.zst", "note"))
r, z, zz = [], [], []
for line in open(sys.argv[1]):
    app, np, steps, status, trace, raw, zst, tzst, merge, wall = line.split()
    if status == "ok":
        trace, raw, zst, tzst = int(trace), int(raw), int(zst), int(tzst)
        r.append(raw / trace); z.append(zst / trace); zz.append(zst / tzst)
        print((fmt % (app, np, steps, trace, raw, zst, tzst, "%.1f" % (raw / trace), "%.2f" % (zst / trace),
                      "%.2f" % (zst / tzst), "")).rstrip())
    else:
        print(fmt % (app, np, steps, "-", "-", "-", "-", "-", "-", "-", status))
def summary(name, v):
    return "%s median %.2f (min %.2f, max %.2f)" % (name, statistics.median(v), min(v), max(v))
if r:
    print("%d runs: %s; %s; %s" % (len(r), summary("raw/trace", r), summary("raw.zst/trace", z),
                                   summary("raw.zst/trace.zst", zz)))
PY
if awk -v s="$STEPS" -v s64="$STEPS_64" 'BEGIN{exit s == s64}'; then
  echo "note: runs at >= 64 ranks use $STEPS_64 steps, the others $STEPS"
fi

echo
echo "=== Finalize merge time, 2D stencils (rank 0's \"merged in X s\"; median of up to $MERGE_REPEATS runs) ==="
python3 - "$MERGES" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    app, np, steps, merge, wall = line.split()
    if merge == "-":
        continue
    runs.setdefault((app, int(np), int(steps)), []).append((float(merge), float(wall)))
print("%-24s %5s %6s %5s %10s %17s %10s %12s" % ("program", "ranks", "steps", "runs", "merge s", "merge min-max", "record s", "merge/wall"))
med = {}
for (app, np, steps), v in sorted(runs.items()):
    m = statistics.median(x for x, _ in v)
    w = statistics.median(y for _, y in v)
    med[(app, np)] = m
    print("%-24s %5d %6d %5d %10.3f %8.3f-%-8.3f %10.2f %11.1f%%" % (
        app, np, steps, len(v), m, min(x for x, _ in v), max(x for x, _ in v), w, 100 * m / w))
for app in sorted({a for a, _ in med}):
    if (app, 16) in med and (app, 64) in med and med[(app, 16)] > 0:
        print("%s: merge time 64 ranks / 16 ranks = %.1fx (4x the ranks)" % (app, med[(app, 64)] / med[(app, 16)]))
print("(the merge clock starts when rank 0 enters MPI_Finalize, so it includes waiting for the")
print(" slowest rank to get there; on an oversubscribed machine that skew can dominate)")
PY

echo
if [[ -s $ANOM ]]; then
  echo "=== Anomalies (failed runs, unexpected stderr from recorder/MPI) ==="
  cat "$ANOM"
else
  echo "No anomalies: every run exited 0, wrote a trace and one raw log per rank, and printed nothing unexpected on stderr."
fi
echo "total time: $(elapsed) s"
