#!/usr/bin/env bash
# Critical path and delay costs (`tracefold analyze`): in a 4-rank chain
# (tests/apps/waits_inject.c `chain`) where rank 2 alone computes 5 ms more
# per step, rank 3 waits (Late Sender), the delay cost of that waiting lands
# on rank 2's computation, and the critical path runs through it; the
# HTML report shows the analysis.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"
needs_yielding_waits 4

if inject chain 4; then
  expect severity late_sender 3 MPI_Recv
  expect delay 2 "computation before MPI_Send"
  expect critical 2 "computation before MPI_Send"
  if grep -q "^delay costs" "$TEXT" && grep -q "^critical path" "$TEXT"; then
    ok "text report has the critical path and delay costs"
  else
    bad "text report misses critical path or delay costs"; cat "$TEXT" >&2
  fi
  # The HTML report of the same recording has the analysis section, with
  # rank 3's Late Sender in the heatmap.
  CHECKS=$((CHECKS + 1))
  if "$TF" report "$WORK/chain/t.tf" -o chain.html 2>report.err &&
    grep -q '<h2>Analysis</h2>' chain.html && grep -q 'id="waits-heatmap"' chain.html &&
    grep -A1 -E '<tr><td>Late Sender</td>' chain.html | grep -q 'title=' &&
    grep -q 'id="waits-callpaths"' chain.html; then
    ok "tracefold report has the analysis section (heatmap, call paths)"
  else
    bad "tracefold report: no analysis section"; cat report.err >&2
  fi
fi
finish
