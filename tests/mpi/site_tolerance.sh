#!/usr/bin/env bash
# Approximate call-site matching (seed 000, 5.2.3): the same exchange made
# from two solver functions has different call stacks. Exact signatures keep
# them apart; --site-tolerance merges them, and the trace says it is
# lossy. Both traces stay faithful to their own raw logs.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
"$TF" record --text -o exact.tf --raw-log raw-exact -- "$MPIRUN" -np 2 "$APPS/app_bt_like" 20 > out1.txt 2> err1.txt
"$TF" record --text -o approx.tf --raw-log raw-approx --site-tolerance 3 -- \
  "$MPIRUN" -np 2 "$APPS/app_bt_like" 20 > out2.txt 2> err2.txt
cmp out1.txt out2.txt
"$TF" diff raw-exact exact.tf
"$TF" diff raw-approx approx.tf
exact_sites=$(awk '/^sites /{print $2}' exact.tf)
approx_sites=$(awk '/^sites /{print $2}' approx.tf)
echo "call sites: exact $exact_sites, with tolerance $approx_sites"
grep -q '^lossy -$' exact.tf
grep -q '^lossy .*call sites matched within 3 differing frames' approx.tf
if (( approx_sites >= exact_sites )); then
  echo "FAIL: tolerance did not merge call sites" >&2
  exit 1
fi
# The events themselves are the same apart from their call sites.
"$TF" diff --ignore-callsites exact.tf approx.tf
