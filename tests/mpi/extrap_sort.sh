#!/usr/bin/env bash
# A bucketed integer sort (app_isort) whose MPI_Alltoallv counts
# come from random keys, so they differ from rank to rank and step to step
# and no law of the grid gives them at another rank count. Recorded at 4, 8
# and 16 ranks (strong: 65,536 keys in all; weak: 2,048 a rank) and
# extrapolated to 12: without --model-counts the refusal must name the
# option and say why, without a list of numbers; with it the output is
# marked lossy with the share of events modelled, every rank's counts agree
# with what its peers expect, and the bytes of the strong extrapolation's
# replay under mpirun and of the weak extrapolation are within 5 % of the
# real 12-rank runs'.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=3
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 4 8 16 12; do
  rec sort "$n" isort 0 65536
  rec sortw "$n" isort 0 -2048
done

# within5 WHAT GOT WANT: GOT is within 5 % of WANT.
within5() {
  CHECKS=$((CHECKS + 1))
  if [[ -n $2 && -n $3 && $3 -gt 0 ]] && (($2 * 100 >= $3 * 95 && $2 * 100 <= $3 * 105)); then
    ok "$1: $2 against $3 bytes"
  else
    bad "$1: '$2' against '$3' bytes (more than 5 % apart)"
  fi
}

# total_bytes TRACE: the bytes column of tracefold stats, summed.
total_bytes() {
  "$TF" stats --json "$1" 2> /dev/null | sed -n 's/^ *"bytes": \([0-9]*\),$/\1/p' |
    awk '{ s += $1 } END { print s + 0 }'
}

# replay_bytes NP TRACE: replays TRACE under mpirun; RB = the bytes it sent.
replay_bytes() {
  RB=
  CHECKS=$((CHECKS + 1))
  limited "replay-$2.out" "replay-$2.err" "${TRACEFOLD_MPIRUN:-mpirun}" -np "$1" "$TF" replay \
    --no-compute "$2"
  if [[ $LRC -ne 0 ]]; then
    bad "isort: replay of $2 at $1 ranks: exit $LRC"
    show_run "replay-$2.out" "replay-$2.err"
    return 0
  fi
  RB=$(sed -n 's/.* \([0-9]*\) bytes sent.*/\1/p' "replay-$2.out")
  ok "isort: replay of $2: $(cat "replay-$2.out")"
}

# The node is named by its function and line, as tracefold print names it.
fails_with "isort: refused without --model-counts" \
  "node [0-9]+ \(MPI_Alltoallv at main \(isort\.c:[0-9]+\)\), field counts: the per-peer counts differ from rank to rank and from call to call \(sort-4.tf: .* to one peer, 16384 a rank in all; .*\): they follow the program's data, not the grid, so no law gives them at 12 ranks\. --model-counts draws them from a statistical model" \
  sort-4.tf sort-8.tf sort-16.tf --ranks 12 -o x-refused.tf
CHECKS=$((CHECKS + 1))
if grep -Eq '([0-9]+[ *)]+){12}' err.txt; then
  bad "isort: the refusal holds a list of numbers: $(cat err.txt)"
else
  ok "isort: the refusal holds no list of numbers"
fi
# A power-of-two target: no plugin is tried after the refusal (their
# errors would list the values).
fails_with "isort: refused without --model-counts at 32 ranks" \
  "no law gives them at 32 ranks\. --model-counts draws them" \
  sort-4.tf sort-8.tf sort-16.tf --ranks 32 -o x-refused.tf
CHECKS=$((CHECKS + 1))
if grep -Eq '([0-9]+[ *)]+){12}|plugin' err.txt; then
  bad "isort: the refusal at 32 ranks holds a list of numbers or a plugin's error: $(cat err.txt)"
else
  ok "isort: the refusal at 32 ranks holds no list of numbers"
fi
# 65,536 keys over 16,384 ranks are 4 a rank: 64 draws repeated 256 times
# cannot give that.
fails_with "isort: too few keys a peer at 16384 ranks" \
  "field counts: at 16384 ranks the count model's 64 draws repeated 256 times give a rank a multiple of 256 elements, 0 against the fitted 4 .*: too few elements a peer for the model" \
  sort-4.tf sort-8.tf sort-16.tf --ranks 16384 --model-counts -o x-sparse.tf

for kind in sort sortw; do
  CHECKS=$((CHECKS + 1))
  if ! "$TF" extrapolate $kind-4.tf $kind-8.tf $kind-16.tf --ranks 12 --model-counts \
    -o x-$kind-12.tf --explain > $kind-explain.txt 2> $kind-model.txt; then
    bad "$kind: extrapolate --model-counts failed: $(cat $kind-model.txt)"
    continue
  fi
  # 3 steps: 3 MPI_Alltoallv a rank are modelled.
  line=$(grep '^tracefold: count model:' $kind-model.txt || true)
  if [[ $line =~ count\ model:\ 36\ of\ ([0-9]+)\ events\ \(([0-9.]+)\ %\) ]]; then
    share=$(awk -v a=36 -v b="${BASH_REMATCH[1]}" 'BEGIN { printf "%.2f", 100 * a / b }')
    if [[ $share == "${BASH_REMATCH[2]}" ]]; then
      ok "$kind: $line"
    else
      bad "$kind: share ${BASH_REMATCH[2]} % is not 36 of ${BASH_REMATCH[1]} ($share %)"
    fi
  else
    bad "$kind: no count model line with 36 modelled events: $(cat $kind-model.txt)"
  fi
  CHECKS=$((CHECKS + 1))
  head1=$("$TF" print x-$kind-12.tf 2>&1 | sed -n 1p)
  if [[ $head1 == *"LOSSY: statistical count model (${BASH_REMATCH[2]:-?} % of events modelled)"* ]]; then
    ok "$kind: print: $head1"
  else
    bad "$kind: print's first line is not the lossy mark: $head1"
  fi
done
# bench refuses the modelled trace without --lossy-ok, saying what that
# would do with count vectors (no histograms to draw from).
CHECKS=$((CHECKS + 1))
if "$TF" bench x-sort-12.tf -o x-sort-12.c 2> bench.err || [[ -e x-sort-12.c ]]; then
  bad "isort: bench of the modelled trace without --lossy-ok was not refused: $(cat bench.err)"
elif grep -q 'statistical count model (.*): the benchmark needs exact values (--lossy-ok generates it from the values the trace holds' bench.err &&
  ! grep -q histogram bench.err; then
  ok "isort: $(cat bench.err)"
else
  bad "isort: bench's refusal does not say what --lossy-ok does with modelled counts: $(cat bench.err)"
fi
CHECKS=$((CHECKS + 1))
if grep -q 'counts: modelled (lossy): a rank sends \[65536/n\] elements a call' sort-explain.txt &&
  grep -q 'counts: modelled (lossy): a rank sends \[2048\] elements a call' sortw-explain.txt; then
  ok "isort: --explain shows the totals 65536/n (strong) and 2048 (weak)"
else
  bad "isort: --explain: $(grep -h 'counts' sort-explain.txt sortw-explain.txt)"
fi

# What rank i sends to rank j in the model is what j expects from i: the
# counts of every rank against the rcounts of every other, call by call.
CHECKS=$((CHECKS + 1))
for r in $(seq 0 11); do "$TF" expand x-sort-12.tf -r "$r" | grep '^MPI_Alltoallv' > "v$r.txt"; done
if awk '
  function list(s, name, out,   m) {
    match(s, name "=\\[[^]]*\\]"); m = substr(s, RSTART + length(name) + 2, RLENGTH - length(name) - 3)
    return split(m, out, ",")
  }
  FNR == 1 { r = FILENAME; sub(/^v/, "", r); sub(/\.txt$/, "", r) }
  { n = list($0, " counts", c); list($0, "rcounts", rc)
    for (j = 1; j <= n; ++j) { send[r, j - 1, FNR] = c[j]; recv[j - 1, r, FNR] = rc[j] } }
  END { for (k in send) { if (send[k] != recv[k]) { bad++ } else { good++ } }
        if (bad || good != 12 * 12 * 3) { print bad " mismatches, " good " agree"; exit 1 } }
' v{0..11}.txt > agree.txt; then
  ok "isort: every rank's modelled counts equal what its peers expect (432 pairs and calls)"
else
  bad "isort: modelled counts and receive counts disagree: $(cat agree.txt)"
fi

# The bytes: both extrapolations' against the real runs' (tracefold stats),
# and the strong one's replay under mpirun at 12 ranks against the replay
# of the real 12-rank trace (the bytes both send).
within5 "isort weak: stats of the extrapolation against the real run" \
  "$(total_bytes x-sortw-12.tf)" "$(total_bytes sortw-12.tf)"
within5 "isort strong: stats of the extrapolation against the real run" \
  "$(total_bytes x-sort-12.tf)" "$(total_bytes sort-12.tf)"
replay_bytes 12 x-sort-12.tf
xb=$RB
replay_bytes 12 sort-12.tf
within5 "isort strong: replay of the extrapolation against the replay of the real run" "$xb" "$RB"
finish
