#!/usr/bin/env bash
# Clocks and `tracefold analyze`: the Late Sender run of
# tests/apps/waits_inject.c recorded with rank 1's timeline clock 5 s ahead
# and 20 ppm fast (TRACEFOLD_TEST_CLOCK_SKEW_NS, docs/recording.md) is
# corrected onto rank 0's clock, and the pattern comes out as without the
# skew: within 5 % of the injected waiting, on rank 1's MPI_Recv. The
# report says how many clock-condition violations it repaired. The same
# analysis as CUBE4 (-o x.cubex) is a tar archive with the pattern metrics.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"
needs_yielding_waits 2

export TRACEFOLD_TEST_CLOCK_SKEW_NS=1:5000000000:20000
if inject late_sender 2; then
  expect severity late_sender 1 MPI_Recv
  expect absent late_receiver
  CHECKS=$((CHECKS + 1))
  if grep -Eq '^wait-state analysis: .*clock condition: [0-9]+ violations repaired$' "$TEXT"; then
    ok "clock condition reported: $(grep -Eo 'clock condition: [0-9]+ violations repaired' "$TEXT")"
  else
    bad "no clock-condition count in the report"; head -n 3 "$TEXT" >&2
  fi
  CHECKS=$((CHECKS + 1))
  if "$TF" analyze "$WORK/late_sender/t.tf" -o ls.cubex 2>cube.err &&
    tar tf ls.cubex >cube.lst && grep -qx anchor.xml cube.lst &&
    tar xf ls.cubex anchor.xml && grep -q '<uniq_name>late_sender</uniq_name>' anchor.xml; then
    ok "CUBE4 output: $(wc -l <cube.lst) archive members, late_sender metric in anchor.xml"
  else
    bad "CUBE4 output"; cat cube.err >&2; head -n 5 cube.lst >&2 || true
  fi
fi
finish
