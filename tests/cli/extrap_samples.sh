#!/usr/bin/env bash
# Sample counts of a time block absent from the smallest input
# (docs/extrapolate.md, "Timing"): adi_mp 4, 16, 25 -> 9 ranks, from the
# recorded traces in tests/data/extrap-adi-samples. A stage node's block
# after its own previous stage is absent at 4 ranks; its count, a curve
# through two inputs, came out 2 and its sibling's 898 where the real
# 9-rank run has 450 and 450. Every block of the extrapolation must hold
# the real run's samples, and the events must be the real run's.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
D=$SRC/tests/data/extrap-adi-samples

run_expect 0 "$TRACEFOLD" extrapolate "$D/adi-4.tf" "$D/adi-16.tf" "$D/adi-25.tf" --ranks 9 \
  -o "$WORK/x9.tf"
run_expect 0 "$TRACEFOLD" diff "$WORK/x9.tf" "$D/adi-9.tf"
[[ $OUT == "same: 9 ranks" ]] || fail "diff against the real 9-rank run: $OUT"

# "node N pred=OP/SITE: samples" for every time block; site ids differ
# between traces, so blocks are told apart by operation and listed in order.
blocks() {
  "$TRACEFOLD" convert --text "$1" -o - 2> /dev/null |
    awk '$1 == "node" { n = $2 }
         $1 == "time" { p = $2; sub(/\/.*/, "", p) }
         $1 == "compute" { for (i = 2; i <= NF; ++i) if ($i ~ /^n=/) print "node " n " " p ": " substr($i, 3) }' |
    sort
}
got=$(blocks "$WORK/x9.tf")
want=$(blocks "$D/adi-9.tf")
# The node of the stage exchange, whose two blocks both follow an
# MPI_Sendrecv in either trace.
g=$(grep -E '^node [0-9]+ pred=MPI_Sendrecv: ' <<< "$got" | awk '{print $1, $2}' | uniq -d)
[[ -n $g ]] || fail "no node with two blocks after MPI_Sendrecv in the extrapolation: $got"
for node in $(awk '{print $2}' <<< "$g"); do
  a=$(grep "^node $node pred=" <<< "$got")
  b=$(grep "^node $node pred=" <<< "$want")
  [[ $a == "$b" ]] || fail "node $node's blocks: extrapolated '$(tr '\n' ' ' <<< "$a")', real '$(tr '\n' ' ' <<< "$b")'"
done
echo "ok: adi_mp 4,16,25 -> 9: the stage node's blocks hold the real run's samples"
