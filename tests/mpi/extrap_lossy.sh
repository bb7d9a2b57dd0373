#!/usr/bin/env bash
# Lossy extrapolation with the snippet filter: app_ring_minor is a ring
# whose ranks 0 and 1 also swap a message every step (a rank-dependent
# minor pattern, like NPB MG's extra partners). Extrapolating its traces
# as they are fails; with a snippet of the ring's exchange the swap is
# dropped on ranks 0 and 1 (STEPS events each, printed and asserted), the
# output is marked lossy, and its events are exactly the real 8-rank run's
# without the swap. The weighted LCS (--lcs) drops the same calls without
# being told the pattern.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=6
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 3 4 5 8; do rec rm "$n" ring_minor; done
printf '# the ring exchange of one step\nMPI_Irecv tag=7\nMPI_Isend tag=7\nMPI_Waitall\n' > ring.snip

fails_with "ring_minor: no lossless model explains ranks 0 and 1" "rm-[0-9].tf: .*ranks" \
  rm-3.tf rm-4.tf rm-5.tf --ranks 8 -o lossless.tf

CHECKS=$((CHECKS + 1))
if "$TF" extrapolate rm-3.tf rm-4.tf rm-5.tf --ranks 8 --snippet ring.snip -o x8.tf \
  > lossy.out 2> lossy.err; then
  ok "ring_minor: extrapolated with the snippet filter"
else
  bad "ring_minor: --snippet failed: $(cat lossy.err)"
fi

# Per input of P ranks: ranks 0 and 1 make 2 + 5*STEPS calls and lose the
# STEPS swaps, the others make 2 + 4*STEPS and lose nothing.
# expect_dropped WHAT FILTER ERRFILE: FILTER's report line per input.
expect_dropped() {
  local what=$1 filter=$2 err=$3 p r all per share want
  for p in 3 4 5; do
    CHECKS=$((CHECKS + 1))
    all=$((p * (2 + 4 * STEPS) + 2 * STEPS))
    per=" 0:$STEPS 1:$STEPS"
    for ((r = 2; r < p; r++)); do per+=" $r:0"; done
    share=$(awk -v d=$((2 * STEPS)) -v a=$all 'BEGIN { printf "%.2f", 100 * d / a }')
    want="tracefold: $filter: rm-$p.tf: dropped $((2 * STEPS)) of $all events ($share %); per rank:$per"
    if grep -qxF "$want" "$err"; then
      ok "$what: $p ranks: dropped share printed: $want"
    else
      bad "$what: $p ranks: expected '$want' in: $(cat "$err")"
    fi
  done
}
expect_dropped ring_minor "snippet filter" lossy.err

CHECKS=$((CHECKS + 1))
if "$TF" print x8.tf 2>&1 | head -1 | grep -q "snippet filter ring.snip"; then
  ok "ring_minor: the output's header names the snippet filter"
else
  bad "ring_minor: header: $("$TF" print x8.tf 2>&1 | head -1)"
fi

# Every rank's calls: the real 8-rank run's minus the swap (site numbers
# stripped: the two files number their sites differently).
strip() { grep -v -e '^rank ' -e '^site ' | sed 's/ site=[0-9]*//'; }
for r in 0 1 2 7; do
  "$TF" expand rm-8.tf -r "$r" 2>&1 | grep -v '^MPI_Sendrecv' | strip > want-$r.txt
done
# expect_real_without_swap WHAT TRACE: ranks 0, 1, 2, 7 of TRACE as above.
expect_real_without_swap() {
  local what=$1 trace=$2 r same=1
  CHECKS=$((CHECKS + 1))
  for r in 0 1 2 7; do
    "$TF" expand "$trace" -r "$r" 2>&1 | strip > "got-$trace-$r.txt"
    if ! cmp -s "got-$trace-$r.txt" want-$r.txt || [[ ! -s want-$r.txt ]]; then
      same=0
      bad "$what: rank $r differs from the real run without the swap: $(diff "got-$trace-$r.txt" want-$r.txt | head -5)"
    fi
  done
  [[ $same == 1 ]] && ok "$what: ranks 0, 1, 2, 7 = the real 8-rank run without the swap"
}
expect_real_without_swap ring_minor x8.tf

# The weighted LCS (--lcs) finds the swap without a snippet: it is what
# ranks 0 and 1 have and the others lack, so exactly those STEPS calls go
# on ranks 0 and 1 of every input, nothing elsewhere; the result is again
# the real 8-rank run without the swap, marked lossy.
CHECKS=$((CHECKS + 1))
if "$TF" extrapolate rm-3.tf rm-4.tf rm-5.tf --ranks 8 --lcs -o lcs8.tf > lcs.out 2> lcs.err; then
  ok "ring_minor: extrapolated with --lcs"
else
  bad "ring_minor: --lcs failed: $(cat lcs.err)"
fi
expect_dropped "ring_minor --lcs" "weighted LCS" lcs.err
CHECKS=$((CHECKS + 1))
if "$TF" print lcs8.tf 2>&1 | head -1 | grep -q "LOSSY: weighted LCS filter"; then
  ok "ring_minor --lcs: the output's header says weighted LCS"
else
  bad "ring_minor --lcs: header: $("$TF" print lcs8.tf 2>&1 | head -1)"
fi
expect_real_without_swap "ring_minor --lcs" lcs8.tf

printf 'MPI_Irecv tag=7\nMPI_Isnd tag=7\n' > typo.snip
fails_with "ring_minor: unknown operation in the snippet" "typo.snip:2: 'MPI_Isnd' is no MPI operation" \
  rm-3.tf rm-4.tf rm-5.tf --ranks 8 --snippet typo.snip -o typo.tf
# A snippet of the send and its wait only: the filter drops every Irecv,
# and with it the Waitall's link to it (docs/extrapolate.md, "Dropping a
# request"): each kept Waitall completes the one Isend, links=[1].
printf 'MPI_Isend tag=7\nMPI_Waitall\n' > send.snip
CHECKS=$((CHECKS + 1))
if "$TF" extrapolate rm-3.tf rm-4.tf rm-5.tf --ranks 8 --snippet send.snip -o send8.tf \
  > send.out 2> send.err; then
  "$TF" expand send8.tf -r 2 > send-r2.txt 2>&1 || true
  got=$(grep -c '^MPI_Irecv' send-r2.txt || true)
  waits=$(grep '^MPI_Waitall' send-r2.txt | grep -c 'links=\[1\]$' || true)
  if [[ $got == 0 && $waits == "$STEPS" ]] &&
    grep -q "rm-3.tf: dropped .*; $((3 * STEPS)) links to dropped requests cut from completions" send.err; then
    ok "ring_minor: a snippet without the Irecv drops it from the Waitall too (links=[1] on rank 2 of 8, $STEPS steps)"
  else
    bad "ring_minor: --snippet send.snip: Irecvs $got, Waitalls with one link $waits: $(cat send.err) $(grep -m 3 '^MPI_Waitall' send-r2.txt)"
  fi
else
  bad "ring_minor: --snippet send.snip failed: $(cat send.err)"
fi
finish
