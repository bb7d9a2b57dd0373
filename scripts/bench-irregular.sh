#!/usr/bin/env bash
# Irregular codes: the polling V-cycle (tests/apps/amg_like.c) and the data
# exchange of a setup phase (tests/apps/exchange_setup.c), side by side with
# the folder's walk path on and off (TRACEFOLD_WALK=0) in the same run.
#   PARTS="wall calls fold merge" BUILD_DIR=build scripts/bench-irregular.sh
# Parts:
#   wall   traced/untraced whole-run wall time at 4 ranks (two ranks per
#          core here), ROUNDS pairs (default 7) in alternating order, median
#          and range: amg_like at 100 and 1000 V-cycles, exchange_setup at
#          ROUNDS_EX rounds (default 400); each also traced with the walk off.
#   calls  instructions the recorder spends per recorded call on rank 0 of
#          amg_like at 4 ranks, 1000 V-cycles (callgrind, inclusive of
#          tracefold::record::Call::~Call: call site, lock, poll summary,
#          folding), divided by rank 0's calls from the trace; walk on and off.
#          Split into the folder's share (Folder::append, append_repeats)
#          and the recorder's (the rest), also per call that went through
#          ~Call (the poll fast path's repeats cost nothing there).
#   fold   instructions of the folder alone per call, the same input every
#          time: one recording's raw logs (4 ranks; amg_like 1000 V-cycles,
#          exchange_setup ROUNDS_EX rounds) folded by `tracefold fold` under
#          callgrind, inclusive of Folder::append, walk on and off
#          (--no-walk, the general path alone), over all ranks' calls.
#   merge  trace size and the merge at MPI_Finalize (the recorder's "merged
#          in" line) for both programs at NPS ranks (default "4 8 16 32 64"):
#          one run's raw logs folded with the walk on and off, and the
#          merge time of a run with the walk on and of one with it off.
#   lossy  lossy trace size at NPS ranks, LOSSY_ROUNDS V-cycles or rounds
#          (default 20): one run's raw logs folded with --histogram-threshold
#          16 by this build and, with BASE_BUILD_DIR=DIR, by that build too
#          (the same logs: e.g. a build of main), alternately; nodes, bytes,
#          the histograms' value:count pairs and how many entries they have.
# Ranks beyond 2 are oversubscribed on this 2-core machine: the 64-rank runs
# take minutes. Needs valgrind for `calls` (installed if missing); with
# KEEP_DIR=DIR its callgrind files stay there (cg.1 walk on, cg.0 off).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-irregular: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
APPS=$(realpath "$BUILD_DIR/tests/apps")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
PARTS=${PARTS:-wall calls fold merge}
LOSSY_ROUNDS=${LOSSY_ROUNDS:-20}
BASE_TF=
if [[ -n ${BASE_BUILD_DIR:-} ]]; then
  [[ -x $BASE_BUILD_DIR/src/cli/tracefold ]] || { echo "bench-irregular: no $BASE_BUILD_DIR/src/cli/tracefold" >&2; exit 2; }
  BASE_TF=$(realpath "$BASE_BUILD_DIR/src/cli/tracefold")
fi
ROUNDS=${ROUNDS:-7}
ROUNDS_EX=${ROUNDS_EX:-400}
NPS=${NPS:-4 8 16 32 64}
part() { [[ " $PARTS " == *" $1 "* ]]; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

now() { date +%s.%N; }
# run_plain PROG ARG / run_traced WALK PROG ARG -> seconds
run_plain() {
  local t0 t1
  t0=$(now)
  mpirun -np 4 "$APPS/app_$1" "$2" >/dev/null || { echo "plain $1 failed" >&2; exit 1; }
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
run_traced() {
  local t0 t1
  t0=$(now)
  TRACEFOLD_WALK=$1 "$TF" record -o "$WORK/w.tf" -- mpirun -np 4 "$APPS/app_$2" "$3" >/dev/null \
    2>"$WORK/w.err" || { echo "traced $2 failed:" >&2; cat "$WORK/w.err" >&2; exit 1; }
  t1=$(now)
  echo "$t1 - $t0" | bc -l
}
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.3f (%.3f-%.3f)", a[int((NR + 1) / 2)], a[1], a[NR] }'; }

if part wall; then
  echo "## traced / untraced wall time, 4 ranks, $ROUNDS alternated triples (median, range)"
  echo "| program | walk on | walk off |"
  echo "|---|---|---|"
  for spec in "amg_like 100" "amg_like 1000" "exchange_setup $ROUNDS_EX"; do
    read -r prog arg <<<"$spec"
    on=() off=()
    for ((i = 0; i < ROUNDS; ++i)); do
      if ((i % 2)); then
        p=$(run_plain "$prog" "$arg"); a=$(run_traced 1 "$prog" "$arg"); b=$(run_traced 0 "$prog" "$arg")
      else
        b=$(run_traced 0 "$prog" "$arg"); a=$(run_traced 1 "$prog" "$arg"); p=$(run_plain "$prog" "$arg")
      fi
      on+=("$(echo "$a / $p" | bc -l)")
      off+=("$(echo "$b / $p" | bc -l)")
    done
    echo "| $prog $arg | $(printf '%s\n' "${on[@]}" | median) | $(printf '%s\n' "${off[@]}" | median) |"
  done
  echo
fi

if part calls; then
  if ! command -v valgrind >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends valgrind >/dev/null
  fi
  cat >"$WORK/rank0.sh" <<'SH'
#!/bin/bash
if [[ ${OMPI_COMM_WORLD_RANK:-} == 0 ]]; then
  exec valgrind -q --tool=callgrind --callgrind-out-file="$CG_OUT" \
    '--toggle-collect=tracefold::record::Call::~Call()' "$@"
fi
exec "$@"
SH
  chmod +x "$WORK/rank0.sh"
  echo "## instructions per recorded call, rank 0 of amg_like, 4 ranks, 1000 V-cycles (callgrind)"
  echo "| walk | calls | fast polls | instructions | per call | folder | recorder | recorder per slow call | folder paths on rank 0 |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for walk in 1 0; do
    (cd "$WORK" && CG_OUT="$WORK/cg.$walk" TRACEFOLD_WALK=$walk TRACEFOLD_POLL_STATS=1 \
      "$TF" record -o "$WORK/c$walk.tf" -- mpirun -np 4 "$WORK/rank0.sh" "$APPS/app_amg_like" 1000 \
      >/dev/null 2>"$WORK/c$walk.err")
    ins=$(callgrind_annotate "$WORK/cg.$walk" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    calls=$("$TF" expand "$WORK/c$walk.tf" --rank 0 | grep -c '^MPI_')
    paths=$(sed -nE 's/^tracefold: rank 0: folder: (.*)/\1/p' "$WORK/c$walk.err")
    # The folder's share: Folder::append and Folder::append_repeats
    # inclusive (their largest line in the inclusive listing: the function
    # itself, not a header's inlined part of it); the rest is the
    # recorder's. Polls the fast path counted cost nothing inside ~Call,
    # so the recorder's share is also given per call that went through it.
    folder=$(callgrind_annotate --inclusive=yes "$WORK/cg.$walk" 2>/dev/null | awk '
      { v = $1; gsub(",", "", v) }
      /:tracefold::Folder::append\(tracefold::Event const&\)/ && v + 0 > a { a = v + 0 }
      /:tracefold::Folder::append_repeats\(/ && v + 0 > b { b = v + 0 }
      END { print a + b }')
    fast=$(sed -nE 's/^tracefold: rank 0: poll fast path: ([0-9]+) repeats.*/\1/p' "$WORK/c$walk.err")
    fast=${fast:-0}
    echo "| $walk | $calls | $fast | $ins | $(echo "$ins / $calls" | bc) | $(echo "$folder / $calls" | bc)" \
      "| $(echo "($ins - $folder) / $calls" | bc) | $(echo "($ins - $folder) / ($calls - $fast)" | bc) | $paths |"
    if [[ -n ${KEEP_DIR:-} ]]; then mkdir -p "$KEEP_DIR" && cp "$WORK/cg.$walk" "$KEEP_DIR/"; fi
  done
  echo
fi

if part fold; then
  command -v valgrind >/dev/null || apt-get install -y valgrind >/dev/null
  echo "## instructions of the folder per call, raw logs of 4 ranks folded by tracefold fold (callgrind)"
  echo "| program | calls | walk on | walk off (general path) |"
  echo "|---|---|---|---|"
  for spec in "amg_like 1000" "exchange_setup $ROUNDS_EX"; do
    read -r prog arg <<<"$spec"
    rm -rf "$WORK/foldraw"
    "$TF" record -o "$WORK/fold.tf" --raw-log "$WORK/foldraw" -- mpirun -np 4 "$APPS/app_$prog" "$arg" \
      >/dev/null 2>&1 || { echo "$prog: recording failed" >&2; exit 1; }
    calls=$(cat "$WORK"/foldraw/rank-*.txt | grep -c '^MPI_')
    row="| $prog $arg | $calls"
    for walk in "" --no-walk; do
      valgrind -q --tool=callgrind --callgrind-out-file="$WORK/fold.cg" \
        '--toggle-collect=tracefold::Folder::append(tracefold::Event const&)' \
        "$TF" fold $walk -o "$WORK/folded.tf" "$WORK/foldraw" >/dev/null 2>&1
      ins=$(callgrind_annotate "$WORK/fold.cg" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
      row+=" | $((ins / calls))"
    done
    echo "$row |"
  done
  echo
fi

if part merge; then
  echo "## size and merge at MPI_Finalize"
  echo "Sizes of one run's raw logs folded two ways (same input): as recorded (walk on) and with"
  echo "fold --no-walk; merge time from the recording"
  echo "(walk on) and from a second recording with TRACEFOLD_WALK=0."
  echo
  echo "Receives: MPI_Recv calls of all ranks (tracefold stats); B/recv: the recorded trace's bytes"
  echo "per receive. Both programs pick each rank's partners with a fixed probability among all"
  echo "ranks, so receives grow about as the square of the ranks."
  echo
  echo "| program | ranks | nodes on / off | trace B on / off | receives | B/recv | merged in s, on / off | per round ms, on / off | rank 0 busy ms, on |"
  echo "|---|---|---|---|---|---|---|---|---|"
  # nodes FILE -> node count
  nodes() { "$TF" print "$1" | head -n 1 | sed -E 's/.* ([0-9]+) nodes, .*/\1/'; }
  for spec in "amg_like 100" "exchange_setup 100"; do
    read -r prog arg <<<"$spec"
    for np in $NPS; do
      rounds=$(awk -v n="$np" 'BEGIN { r = 0; for (s = 1; s < n; s *= 2) ++r; print r }')
      rm -rf "$WORK/raw"
      "$TF" record -o "$WORK/on.tf" --raw-log "$WORK/raw" -- mpirun -np "$np" "$APPS/app_$prog" "$arg" \
        >/dev/null 2>"$WORK/on.err" || { echo "$prog at $np ranks failed" >&2; cat "$WORK/on.err" >&2; exit 1; }
      "$TF" diff "$WORK/raw" "$WORK/on.tf" >/dev/null || { echo "$prog at $np ranks: not lossless" >&2; exit 1; }
      TRACEFOLD_WALK=0 "$TF" record -o "$WORK/off-run.tf" -- mpirun -np "$np" "$APPS/app_$prog" "$arg" \
        >/dev/null 2>"$WORK/off.err" || { echo "$prog at $np ranks (walk off) failed" >&2; exit 1; }
      "$TF" fold "$WORK/raw" --no-walk -o "$WORK/off.tf" 2>/dev/null
      m_on=$(sed -nE 's/.*merged in ([0-9.]+) s.*/\1/p' "$WORK/on.err")
      m_off=$(sed -nE 's/.*merged in ([0-9.]+) s.*/\1/p' "$WORK/off.err")
      busy=$(sed -nE "s/.*, ([0-9.]+) s of it rank 0's processor time.*/\\1/p" "$WORK/on.err")
      # calls is the 6th column from the end (the call site has spaces)
      recvs=$("$TF" stats "$WORK/on.tf" | awk '$1 == "MPI_Recv" { s += $(NF - 5) } END { print s + 0 }')
      bytes=$(stat -c %s "$WORK/on.tf")
      printf '| %s %s | %d | %s / %s | %s / %s | %s | %.1f | %s / %s | %.1f / %.1f | %.1f |\n' "$prog" "$arg" "$np" \
        "$(nodes "$WORK/on.tf")" "$(nodes "$WORK/off.tf")" \
        "$bytes" "$(stat -c %s "$WORK/off.tf")" \
        "$recvs" "$(echo "$bytes / ($recvs + (${recvs} == 0))" | bc -l)" "$m_on" "$m_off" "$(echo "$m_on * 1000 / $rounds" | bc -l)" "$(echo "$m_off * 1000 / $rounds" | bc -l)" "$(echo "$busy * 1000" | bc -l)"
    done
  done
fi

if part lossy; then
  echo "## lossy traces (--histogram-threshold 16), $LOSSY_ROUNDS V-cycles or rounds, same raw logs"
  echo "hist pairs: value:count pairs of all hist(...) entries; hist entries: their number."
  echo
  echo "| program | ranks | build | nodes | trace B | hist pairs | hist entries |"
  echo "|---|---|---|---|---|---|---|"
  for prog in amg_like exchange_setup; do
    for np in $NPS; do
      rm -rf "$WORK/lraw"
      "$TF" record -o "$WORK/l.tf" --raw-log "$WORK/lraw" -- mpirun -np "$np" "$APPS/app_$prog" "$LOSSY_ROUNDS" \
        >/dev/null 2>"$WORK/l.err" || { echo "$prog at $np ranks failed" >&2; cat "$WORK/l.err" >&2; exit 1; }
      builds=("this:$TF")
      [[ -n $BASE_TF ]] && builds=("base:$BASE_TF" "this:$TF")
      for b in "${builds[@]}"; do
        name=${b%%:*} tf=${b#*:}
        "$tf" fold "$WORK/lraw" --histogram-threshold 16 -o "$WORK/l-$name.tf" 2>/dev/null
        "$tf" fold "$WORK/lraw" --histogram-threshold 16 --text -o "$WORK/l-$name.txt" 2>/dev/null
        pairs=$(grep -o 'hist([^)]*)' "$WORK/l-$name.txt" | tr ' ()' '\n\n\n' | grep -c ':' || true)
        entries=$(grep -o 'hist(' "$WORK/l-$name.txt" | wc -l)
        printf '| %s | %d | %s | %s | %s | %s | %s |\n' "$prog" "$np" "$name" \
          "$(sed -n 's/^nodes //p' "$WORK/l-$name.txt")" "$(stat -c %s "$WORK/l-$name.tf")" "$pairs" "$entries"
      done
    done
  done
fi
