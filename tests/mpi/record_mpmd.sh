#!/usr/bin/env bash
# A multiple-program launch (`mpirun A : B`) is recorded on every rank, and a
# rank whose tracing turns off leaves a trace that says so. Open MPI applies
# `-x` to one app context only: before record passed its variables to every
# context, the second context ran untraced and the traced rank waited for it
# in the recorder's start-up until killed. A rank whose own set-up failed
# (here a bad TRACEFOLD_POLL_FASTPATH in its environment alone) recorded
# nothing, and the merged trace was labelled lossless without it.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$MPIRUN" -np 1 "$APPS/app_ring" 5 : -np 1 "$APPS/app_ring" 5 > plain.txt

# Both contexts traced: the run ends, the output is the program's, every rank
# has its events, and the trace is lossless.
timeout 120 "$TF" record -o t.tf --raw-log raw -- \
  "$MPIRUN" -np 1 "$APPS/app_ring" 5 : -np 1 "$APPS/app_ring" 5 > traced.txt 2> err.txt ||
  { cat err.txt >&2; fail "record of a two-context launch failed or hung (exit $?)"; }
cmp plain.txt traced.txt || fail "the traced run's output differs"
for r in 0 1; do
  n=$("$TF" expand t.tf --rank "$r" | grep -c '^MPI_' || true)
  [[ $n -gt 2 ]] || fail "rank $r has $n events in the trace of a two-context launch"
done
"$TF" print t.tf | head -n 1 | grep -q ", lossless" || fail "the trace is not lossless: $("$TF" print t.tf | head -n 1)"
"$TF" diff raw t.tf > /dev/null || fail "the trace differs from its raw logs"

# Rank 0's tracing off from the start: the program still runs unchanged, rank
# 1 is recorded, and the trace says which rank is missing and why.
timeout 120 "$TF" record -o off.tf -- "$MPIRUN" -np 1 env TRACEFOLD_POLL_FASTPATH=bogus \
  "$APPS/app_ring" 5 : -np 1 "$APPS/app_ring" 5 > off.txt 2> off.err ||
  { cat off.err >&2; fail "record with one rank's tracing off failed or hung"; }
cmp plain.txt off.txt || fail "the output changed when one rank's tracing was off"
grep -q "rank 0: initialization failed: TRACEFOLD_POLL_FASTPATH" off.err ||
  { cat off.err >&2; fail "no message for rank 0's failed set-up"; }
head=$("$TF" print off.tf | head -n 1)
[[ $head == *"LOSSY: rank 0 recorded nothing (initialization failed: TRACEFOLD_POLL_FASTPATH"* ]] ||
  fail "the trace does not say that rank 0 is missing: $head"
n=$("$TF" expand off.tf --rank 1 | grep -c '^MPI_' || true)
[[ $n -gt 2 ]] || fail "rank 1 has $n events with rank 0's tracing off"
echo "ok: both contexts recorded; with rank 0 off: $head"
