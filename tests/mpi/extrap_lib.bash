# Shared by the extrap_*.sh tests (sourced after mpi_test_lib.bash):
# recording at several rank counts, extrapolating and diffing against a
# real run, and checking the errors.
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
STEPS=${STEPS:-12}

# rec VARIANT NP [APP [ARGS...]]: records app_stencil2d_VARIANT (or
# app_APP, given STEPS and ARGS) at NP ranks into VARIANT-NP.tf.
rec() {
  limited "rec-$1-$2.out" "rec-$1-$2.err" "$TF" record -o "$1-$2.tf" -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$2" "$APPS/app_${3:-stencil2d_$1}" "$STEPS" "${@:4}"
  if [[ $LRC -ne 0 || ! -s $1-$2.tf ]]; then
    bad "record $1 at $2 ranks: exit $LRC"
    show_run "rec-$1-$2.out" "rec-$1-$2.err"
  fi
}

# same_as_real WHAT OUT REAL INPUTS...: extrapolates INPUTS to REAL's rank
# count and diffs the result against the real trace.
same_as_real() {
  local what=$1 out=$2 real=$3 ranks
  shift 3
  CHECKS=$((CHECKS + 1))
  ranks=$(basename "$real" .tf)
  ranks=${ranks##*-}
  if ! "$TF" extrapolate "$@" --ranks "$ranks" -o "$out" > "$out.log" 2>&1; then
    bad "$what: extrapolate failed: $(cat "$out.log")"
    return 0
  fi
  local d drc=0
  d=$("$TF" diff "$out" "$real" 2>&1) || drc=$?
  if [[ $drc -ne 0 || $d != "same: $ranks ranks" ]]; then
    bad "$what: extrapolated trace differs from the real run: $d"
    return 0
  fi
  ok "$what: $d"
}

# replays_back WHAT TRACE: TRACE (an extrapolated VARIANT-NP.tf) replays
# under mpirun at its NP ranks, and recording that replay gives its calls
# back (call sites aside: the replay's are its own).
replays_back() {
  local what=$1 trace=$2 np d
  np=$(basename "$trace" .tf)
  np=${np##*-}
  CHECKS=$((CHECKS + 1))
  limited replay.out replay.err "$TF" record -o replayed.tf -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$TF" replay "$trace"
  if [[ $LRC -ne 0 ]]; then
    bad "$what: replay of the extrapolated $np-rank trace: exit $LRC"
    show_run replay.out replay.err
  elif d=$("$TF" diff --ignore-callsites replayed.tf "$trace" 2>&1); then
    ok "$what: replay of the extrapolated $np-rank trace, re-recorded: $d"
  else
    bad "$what: replay of the extrapolated $np-rank trace differs from it: $d"
  fi
}

# fails_with WHAT PATTERN ARGS...: extrapolate ARGS exits 2, says PATTERN,
# and writes no output file (the last two ARGS are -o OUT).
fails_with() {
  local what=$1 pattern=$2 out=${*: -1} rc=0
  shift 2
  CHECKS=$((CHECKS + 1))
  "$TF" extrapolate "$@" > err.out 2> err.txt || rc=$?
  if [[ $rc -ne 2 ]]; then
    bad "$what: exit $rc, expected 2"
  elif ! grep -Eq -e "$pattern" err.txt; then
    bad "$what: message does not match /$pattern/: $(cat err.txt)"
  elif [[ -e $out ]] || compgen -G "$out.*" > /dev/null; then
    bad "$what: $out (or a temporary) was written"
  else
    ok "$what: $(cat err.txt)"
  fi
}


# samples_per_node TRACE: "node N: S" lines, S the computation samples of
# node N's time blocks (one a call in a recorded trace).
samples_per_node() {
  "$TF" convert --text "$1" -o - 2> /dev/null |
    awk '$1 == "node" { n = $2 }
         $1 == "compute" { for (i = 2; i <= NF; ++i) if ($i ~ /^n=/) s[n] += substr($i, 3) }
         END { for (k in s) print "node " k ": " s[k] }' | sort -k2n
}

# same_samples WHAT OUT REAL: the time blocks of every node of OUT hold as
# many samples as REAL's, the calls the node makes.
same_samples() {
  CHECKS=$((CHECKS + 1))
  local d
  if d=$(diff <(samples_per_node "$2") <(samples_per_node "$3")); then
    ok "$1: every node's time samples are the real run's"
  else
    bad "$1: time samples per node (< extrapolated, > real): $(echo "$d" | tr '\n' ' ')"
  fi
}

# samples_per_block TRACE: "node N OPS: S1 S2 ..." lines, OPS the
# operations its time blocks follow (pred=other and start included), S the
# computation samples of each, in the same order.
samples_per_block() {
  "$TF" convert --text "$1" -o - 2> /dev/null |
    awk '$1 == "node" { n = $2 }
         $1 == "time" { p = $2; sub(/\/.*/, "", p) }
         $1 == "compute" { for (i = 2; i <= NF; ++i) if ($i ~ /^n=/) print n, p, substr($i, 3) }' |
    sort -k1,1n -k2,2 -k3,3n |
    awk '$1 != n { if (n != "") print "node " n " " ops ": " s; n = $1; ops = ""; s = "" }
         { ops = ops (ops == "" ? "" : ",") $2; s = s (s == "" ? "" : " ") $3 }
         END { if (n != "") print "node " n " " ops ": " s }'
}

# same_block_samples WHAT OUT REAL: where a node of OUT has time blocks
# after the same operations as REAL's, each holds as many samples (a node
# whose blocks the inputs fold differently, into pred=other, is skipped).
same_block_samples() {
  CHECKS=$((CHECKS + 1))
  local d
  d=$(join -t: <(samples_per_block "$2" | sort -t: -k1,1) <(samples_per_block "$3" | sort -t: -k1,1) |
    awk -F: '$2 != $3')
  if [[ -z $(samples_per_block "$3") ]]; then
    bad "$1: no time blocks in $3"
  elif [[ -z $d ]]; then
    ok "$1: every time block's samples are the real run's"
  else
    bad "$1: time samples per block (node ops: extrapolated: real): $(echo "$d" | tr '\n' ' ')"
  fi
}
