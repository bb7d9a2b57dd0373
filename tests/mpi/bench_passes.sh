#!/usr/bin/env bash
# Benchmark-generation passes on recorded programs (tracefold resolve):
#  - master_worker and lu (MPI_ANY_SOURCE receives, blocking and
#    nonblocking; master_worker also MPI_ANY_TAG): the resolved trace names
#    a source and tag in every receive, holds no recorded matches, is the
#    same bytes when resolved twice, equals the recording under
#    `diff --resolved` but not under plain `diff`; replaying it finishes,
#    and the replay's trace equals the recording under `diff --resolved`,
#    as does a `replay --deterministic` of the recording;
#  - the same two programs through `tracefold bench`: the generated C has no
#    MPI_ANY_SOURCE, two runs of it record the same trace, and each equals
#    the recording under `diff --resolved`;
#  - a lossy trace (misc_p2p folded with --histogram-threshold 1: its
#    wildcard sources become histograms) is refused without --lossy-ok,
#    naming the option, and leaves no file; with it, two generations are
#    the same bytes, the benchmark compiles cleanly and runs to its end at
#    4 ranks. Its MPI_Gatherv counts come from a histogram in an invented
#    order, so each rank may send more than the root's recorded count for
#    it: a lossy benchmark receives with the largest count a receive can
#    match (without that it stopped with MPI_ERR_TRUNCATE);
#  - coll_sites (one Allreduce and one Barrier reached from two lines):
#    `resolve --align` leaves one node per collective, and the trace's
#    events are unchanged but for call sites.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

# expect_diff WANT(0|1) WHAT ARGS...: `tracefold diff ARGS` must exit WANT.
expect_diff() {
  local want=$1 what=$2 out rc=0
  shift 2
  out=$("$TF" diff "$@" 2>&1) || rc=$?
  if [[ $rc -ne $want ]]; then
    bad "$what: tracefold diff $* exited $rc, want $want: $out"
    return 1
  fi
  ok "$what: $out"
}

check_wild() {
  local name=$1 np=$2 steps=$3
  local what="$name at $np ranks"
  CHECKS=$((CHECKS + 1))
  record "$name" "$np" "$steps"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what: record exited $RC"; show_run "$DIR/out.txt" "$DIR/err.txt"; return 0
  fi
  grep -Eq 'field (peer|rpeer) .*any' "$DIR/t.tf" || { bad "$what: recording has no wildcard"; return 0; }
  limited "$DIR/res.out" "$DIR/res.err" "$TF" resolve "$DIR/t.tf" -o "$DIR/r.tf" --text
  if [[ $LRC -ne 0 ]]; then
    bad "$what: resolve exited $LRC"; show_run "$DIR/res.err"; return 0
  fi
  grep -q "chosen by the traversal" "$DIR/res.err" || bad "$what: resolve printed no summary"
  if grep -Eq 'field (peer|rpeer|tag|rtag) .*any|field (list )?(src|mtag|srcs|mtags) ' "$DIR/r.tf"; then
    bad "$what: resolved trace still has wildcards or matches"
    grep -E 'field (peer|rpeer|tag|rtag) .*any|field (list )?(src|mtag|srcs|mtags) ' "$DIR/r.tf" | head -3 >&2
  fi
  "$TF" resolve "$DIR/t.tf" -o "$DIR/r2.tf" --text 2>/dev/null
  cmp -s "$DIR/r.tf" "$DIR/r2.tf" || bad "$what: two resolutions differ"
  expect_diff 0 "$what resolved vs recording (--resolved)" --resolved "$DIR/t.tf" "$DIR/r.tf"
  expect_diff 1 "$what resolved vs recording (plain)" "$DIR/t.tf" "$DIR/r.tf"
  # The resolved trace runs to its end, and matches as it says.
  limited "$DIR/rp.out" "$DIR/rp.err" "$TF" record -o "$DIR/rp.tf" -- "$MPIRUN" -np "$np" "$TF" replay "$DIR/r.tf"
  if [[ $LRC -ne 0 ]]; then
    bad "$what: replay of the resolved trace exited $LRC"; show_run "$DIR/rp.err"
  else
    expect_diff 0 "$what replay of resolved vs recording" --resolved --ignore-callsites --ignore-polls "$DIR/t.tf" "$DIR/rp.tf"
    expect_diff 0 "$what replay of resolved vs resolved" --ignore-callsites --ignore-polls "$DIR/r.tf" "$DIR/rp.tf"
  fi
  limited "$DIR/det.out" "$DIR/det.err" "$TF" record -o "$DIR/det.tf" -- "$MPIRUN" -np "$np" "$TF" replay --deterministic "$DIR/t.tf"
  if [[ $LRC -ne 0 ]]; then
    bad "$what: replay --deterministic exited $LRC"; show_run "$DIR/det.err"
  else
    expect_diff 0 "$what deterministic replay vs recording" --resolved --ignore-callsites --ignore-polls "$DIR/t.tf" "$DIR/det.tf"
  fi
}

# After check_wild: the benchmark of $DIR/t.tf names every source and is
# deterministic.
check_bench_wild() {
  local name=$1 np=$2 what="$1 benchmark at $2 ranks"
  CHECKS=$((CHECKS + 1))
  if ! "$TF" bench "$DIR/t.tf" -o "$DIR/bench.c" 2>"$DIR/gen.err"; then
    bad "$what: tracefold bench failed: $(cat "$DIR/gen.err")"; return 0
  fi
  grep -Eq '[1-9][0-9]* wildcard calls resolved from recorded matches' "$DIR/gen.err" ||
    bad "$what: no wildcard resolved: $(cat "$DIR/gen.err")"
  if grep -q 'MPI_ANY_SOURCE\|MPI_ANY_TAG' "$DIR/bench.c"; then
    bad "$what: the generated C still has a wildcard: $(grep -m1 -n 'MPI_ANY_' "$DIR/bench.c")"
  fi
  "$TF" bench --keep-wildcards "$DIR/t.tf" -o "$DIR/kept.c" 2>/dev/null
  grep -q 'MPI_ANY_SOURCE' "$DIR/kept.c" || bad "$what: --keep-wildcards lost the wildcards"
  if ! "$MPICC" -std=c11 -Wall -Wextra -Werror -O1 "$DIR/bench.c" -o "$DIR/bench" 2>"$DIR/cc.err"; then
    bad "$what: does not compile"; head -n 20 "$DIR/cc.err" >&2; return 0
  fi
  local k
  for k in 1 2; do
    limited "$DIR/b$k.out" "$DIR/b$k.err" "$TF" record -o "$DIR/b$k.tf" -- "$MPIRUN" -np "$np" "$DIR/bench"
    if [[ $LRC -ne 0 ]]; then
      bad "$what: run $k exited $LRC"; show_run "$DIR/b$k.err"; return 0
    fi
  done
  expect_diff 0 "$what: run 1 vs run 2" "$DIR/b1.tf" "$DIR/b2.tf"
  expect_diff 0 "$what: run 1 vs recording (--resolved)" --resolved --ignore-callsites "$DIR/t.tf" "$DIR/b1.tf"
}

check_wild master_worker 4 20
check_bench_wild master_worker 4
check_wild lu 4 3
check_bench_wild lu 4

CHECKS=$((CHECKS + 1))
record misc_p2p 4 5
L=$DIR
if [[ $RC -ne 0 ]]; then
  bad "misc_p2p: record exited $RC"; show_run "$L/err.txt"
else
  "$TF" fold --text --histogram-threshold 1 "$L/raw" -o "$L/lossy.tf" 2>/dev/null
  grep -q '^lossy histogram' "$L/lossy.tf" && grep -q 'hist(' "$L/lossy.tf" ||
    bad "misc_p2p folded with --histogram-threshold 1 has no histogram"
  lrc=0
  "$TF" bench "$L/lossy.tf" -o "$L/lossy.c" 2>"$L/lossy.err" || lrc=$?
  if [[ $lrc -ne 2 ]] || ! grep -q 'lossy.*--lossy-ok' "$L/lossy.err" || [[ -e $L/lossy.c ]]; then
    bad "lossy misc_p2p without --lossy-ok: exit $lrc, file $(ls "$L"/lossy.c 2>/dev/null), $(cat "$L/lossy.err")"
  else
    ok "lossy misc_p2p refused: $(cat "$L/lossy.err")"
  fi
  "$TF" bench --lossy-ok "$L/lossy.tf" -o "$L/lossy.c" 2>"$L/lossy.err" || bad "--lossy-ok: $(cat "$L/lossy.err")"
  "$TF" bench --lossy-ok "$L/lossy.tf" -o "$L/lossy2.c" 2>/dev/null
  cmp -s "$L/lossy.c" "$L/lossy2.c" || bad "--lossy-ok: two generations differ"
  if ! "$MPICC" -std=c11 -Wall -Wextra -Werror -O1 "$L/lossy.c" -o "$L/lossy" 2>"$L/lcc.err"; then
    bad "--lossy-ok: does not compile"; head -n 20 "$L/lcc.err" >&2
  else
    ok "lossy misc_p2p with --lossy-ok: generated twice the same, compiles"
    limited "$L/lrun.out" "$L/lrun.err" "$MPIRUN" -np 4 "$L/lossy"
    if [[ $LRC -ne 0 ]] || ! grep -q '^bench: 4 ranks, wall time' "$L/lrun.out"; then
      bad "lossy misc_p2p: the benchmark did not run to its end ($LRC)"
      show_run "$L/lrun.out" "$L/lrun.err"
    else
      ok "lossy misc_p2p: the benchmark runs ($(grep '^bench: 4 ranks' "$L/lrun.out"))"
    fi
  fi
fi

CHECKS=$((CHECKS + 1))
record coll_sites 4 5
if [[ $RC -ne 0 ]]; then
  bad "coll_sites: record exited $RC"; show_run "$DIR/err.txt"
else
  before=$(grep -c '^node .* MPI_Allreduce ' "$DIR/t.tf" || true)
  [[ $before -ge 2 ]] || bad "coll_sites: recording has $before Allreduce nodes, want 2 (two lines)"
  limited "$DIR/al.out" "$DIR/al.err" "$TF" resolve --align "$DIR/t.tf" -o "$DIR/a.tf" --text
  if [[ $LRC -ne 0 ]]; then
    bad "coll_sites: resolve --align exited $LRC"; show_run "$DIR/al.err"
  else
    for op in MPI_Allreduce MPI_Barrier; do
      n=$(grep -c "^node .* $op " "$DIR/a.tf" || true)
      [[ $n -eq 1 ]] || bad "coll_sites: $n $op nodes after alignment, want 1"
    done
    grep -q "collective nodes combined" "$DIR/al.err" || bad "coll_sites: no alignment summary"
    expect_diff 0 "coll_sites aligned vs recording" --ignore-callsites "$DIR/t.tf" "$DIR/a.tf"
    expect_diff 1 "coll_sites aligned vs recording (sites)" "$DIR/t.tf" "$DIR/a.tf"
  fi
fi
finish
