#!/usr/bin/env bash
# The trace's size in each form, side by side: records every MPI test program
# (except app_abort, app_crash) once per rank count with --raw-log and prints
# per run the raw logs' bytes (rank files summed), the text form (format
# version 2, `tracefold convert --text`), the text with `zstd -19` (the
# `.zst` form), the compact form as recorded (format version 5), and the
# compact form without timing (`tracefold convert --no-timing` of the same
# trace: what `record --no-timing` writes for that run), with the ratios
# compact/text and no-timing/text.
#
# With BASE_BUILD set (another build tree, e.g. of main), the same raw logs
# are also folded (`tracefold fold`, which merges and settles timing as
# `record` does) by that build's tracefold and by this one's, and a second
# table gives both compact sizes side by side: one set of samples, two
# writers, so the difference is the writers' alone.
#
# Settings (environment):
#   BUILD_DIR=build      build tree with src/cli/tracefold and tests/apps/app_*
#   NPS="4 8 16"         rank counts
#   STEPS=50             step count (argv[1]) for every program
#   RUN_TIMEOUT=60       seconds (plus 1 per rank) a run may take
#   APPS_FILTER=REGEX    only programs whose name matches (e.g. 'cg|lu')
#   BASE_BUILD=DIR       build tree to compare with (folds of the raw logs)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
BUILD_DIR="${BUILD_DIR:-build}"
NPS="${NPS:-4 8 16}"
STEPS="${STEPS:-50}"
RUN_TIMEOUT="${RUN_TIMEOUT:-60}"
APPS_FILTER="${APPS_FILTER:-.}"
BASE_BUILD="${BASE_BUILD:-}"

source scripts/lib/bench_apps.bash
bench_copy_build bench-sizes-compact
if [[ -n $BASE_BUILD ]]; then
  [[ -x $BASE_BUILD/src/cli/tracefold ]] || { echo "bench-sizes-compact: $BASE_BUILD/src/cli/tracefold missing" >&2; exit 2; }
  cp "$BASE_BUILD/src/cli/tracefold" "$work/bin/base-tracefold"
fi
BASE_TF="$work/bin/base-tracefold"
FOLDS="$work/folds.txt"; : >"$FOLDS"
# Programs written for a range of rank counts.
declare -A MAX_NP=([wild_statuses]=12 [wild_statuses_f]=12)

ROWS="$work/rows.txt"; : >"$ROWS"
for np in $NPS; do
  for app in "${apps[@]}"; do
    if [[ -n ${MAX_NP[$app]:-} ]] && ((np > MAX_NP[$app])); then continue; fi
    d="$work/run"; rm -rf "$d"; mkdir -p "$d"
    rc=0
    (cd "$d" && timeout -k 5 $((RUN_TIMEOUT + np)) "$TF" record -o "$d/t.tf" --raw-log "$d/raw" -- \
      mpirun -np "$np" "$work/bin/apps/app_$app" "$STEPS" >"$d/out.txt" 2>"$d/err.txt") || rc=$?
    if ((rc != 0)) || [[ ! -s $d/t.tf ]]; then
      echo "$app $np failed(exit$rc) - - - - -" >>"$ROWS"
      echo "  $app np=$np: failed (exit $rc)" >&2
      continue
    fi
    raw=$(cat "$d"/raw/rank-*.txt | wc -c)
    "$TF" convert "$d/t.tf" --text -o "$d/t.txt" 2>/dev/null
    "$TF" convert "$d/t.tf" --no-timing -o "$d/nt.tf" 2>/dev/null
    text=$(stat -c %s "$d/t.txt")
    tzst=$(zstd -19 -q -c "$d/t.txt" | wc -c)
    compact=$(stat -c %s "$d/t.tf")
    nt=$(stat -c %s "$d/nt.tf")
    echo "$app $np ok $raw $text $tzst $compact $nt" >>"$ROWS"
    if [[ -n $BASE_BUILD ]]; then
      "$BASE_TF" fold "$d/raw" -o "$d/base.tf" 2>/dev/null
      "$TF" fold "$d/raw" -o "$d/new.tf" 2>/dev/null
      blocks=$("$TF" convert "$d/new.tf" --text -o - 2>/dev/null | grep -c '^  time pred=' || true)
      other=$("$TF" convert "$d/new.tf" --text -o - 2>/dev/null | grep -c '^  time pred=other' || true)
      bblocks=$("$BASE_TF" convert "$d/base.tf" --text -o - 2>/dev/null | grep -c '^  time pred=' || true)
      echo "$app $np $raw $(stat -c %s "$d/base.tf") $(stat -c %s "$d/new.tf") $bblocks $blocks $other" >>"$FOLDS"
    fi
    echo "  $app np=$np: ok" >&2
  done
done

echo
echo "=== Trace size by form (steps $STEPS; no timing: tracefold convert --no-timing of the same trace) ==="
python3 - "$ROWS" <<'PY'
import statistics, sys
fmt = "%-24s %5s %11s %9s %9s %9s %10s %8s %8s  %s"
print(fmt % ("program", "ranks", "raw B", "text B", "text.zst", "compact", "no-timing",
             "c/text", "nt/text", "note"))
c, n = [], []
for line in open(sys.argv[1]):
    app, np, status, raw, text, tzst, compact, nt = line.split()
    if status != "ok":
        print(fmt % (app, np, "-", "-", "-", "-", "-", "-", "-", status))
        continue
    raw, text, tzst, compact, nt = map(int, (raw, text, tzst, compact, nt))
    c.append(compact / text); n.append(nt / text)
    print((fmt % (app, np, raw, text, tzst, compact, nt, "%.3f" % (compact / text),
                  "%.3f" % (nt / text), "")).rstrip())
if c:
    print("%d runs: compact/text median %.3f (max %.3f); no-timing/text median %.3f (max %.3f)" % (
        len(c), statistics.median(c), max(c), statistics.median(n), max(n)))
PY
if [[ -n $BASE_BUILD ]]; then
  echo
  echo "=== The same raw logs folded by $BASE_BUILD (base) and $BUILD_DIR (new), compact form, steps $STEPS ==="
  python3 - "$FOLDS" <<'PY'
import sys
fmt = "%-24s %5s %11s %9s %9s %8s %7s %7s %6s"
print(fmt % ("program", "ranks", "raw B", "base B", "new B", "new/base", "blocks", "->", "other"))
tb = tn = 0
for line in open(sys.argv[1]):
    app, np, raw, base, new, bb, nb, other = line.split()
    tb += int(base); tn += int(new)
    print(fmt % (app, np, raw, base, new, "%.3f" % (int(new) / int(base)), bb, nb, other))
if tb:
    print("total: base %d B, new %d B, new/base %.3f" % (tb, tn, tn / tb))
PY
fi
