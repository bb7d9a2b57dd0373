#!/usr/bin/env bash
# `tracefold analyze` on input it cannot take whole: a trace recorded
# without --timeline (refused, saying to record with --timeline; serial
# and under mpirun), an
# analysis under mpirun with another rank count than the recording (refused
# with both numbers), and a timeline cut at its size bound (analysed up to
# the bound, and the report says so).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"

CHECKS=$((CHECKS + 1))
limited out.txt err.txt "$TF" record -o plain.tf -- "$MPIRUN" -np 2 "$APPS/app_waits_inject" 5 late_sender
if [[ $LRC -ne 0 ]]; then
  bad "recording without timeline exited $LRC"; show_run err.txt
else
  rc=0
  "$TF" analyze plain.tf >a.txt 2>a.err || rc=$?
  if [[ $rc -eq 2 ]] && grep -q "plain.tf.timeline: no timeline directory" a.err &&
    grep -q "record --timeline" a.err; then
    ok "no timeline: $(head -n 1 a.err)"
  else
    bad "no timeline: exit $rc, $(cat a.err)"
  fi
  # The same under mpirun (the parallel analysis): one clear message.
  CHECKS=$((CHECKS + 1))
  limited pa.txt pa.err "$MPIRUN" -np 2 "$TF" analyze plain.tf -o pa.json
  if [[ $LRC -ne 0 ]] && [[ $(grep -c "no timeline directory" pa.err) -eq 1 ]] &&
    grep -q "record --timeline" pa.err && [[ ! -e pa.json ]]; then
    ok "no timeline under mpirun: $(grep -m1 'no timeline' pa.err)"
  else
    bad "no timeline under mpirun: exit $LRC, $(head -n 3 pa.err)"
  fi
fi

if inject late_sender 2; then
  CHECKS=$((CHECKS + 1))
  limited m.txt m.err "$MPIRUN" -np 3 "$TF" analyze "$WORK/late_sender/t.tf"
  if [[ $LRC -ne 0 ]] && grep -q "analysis started with 3 ranks, the recording has 2" m.err; then
    ok "other rank count refused: $(grep -m1 'started with' m.err)"
  else
    bad "mpirun -np 3 on a 2-rank recording: exit $LRC, $(head -n 3 m.err)"
  fi
fi

CHECKS=$((CHECKS + 1))
limited b.txt b.err "$TF" record --timeline --timeline-max 600 -o bound.tf -- \
  "$MPIRUN" -np 2 "$APPS/app_waits_inject" 300 late_sender
if [[ $LRC -ne 0 ]]; then
  bad "bounded recording exited $LRC"; show_run b.err
# Every rank is cut where the first timeline ends: a later call may have
# waited for a call of that rank's that has no time.
elif "$TF" analyze bound.tf >bound.txt 2>bound.err &&
  grep -Eq "^note: the timeline reached its size bound: [1-9][0-9]* later events .*; every rank is analysed up to [0-9.]+ s into the run, where rank [01]'s timeline ends" bound.txt &&
  grep -Eq "^wait-state analysis: 2 ranks, .* [1-9][0-9]* events" bound.txt; then
  ok "bounded timeline analysed up to the bound: $(grep '^note: the timeline' bound.txt)"
else
  bad "bounded timeline: $(cat bound.err; head -n 3 bound.txt)"
fi

# Progress (TRACEFOLD_PROGRESS=1): the steps up to 100%, the same report;
# none when stderr is a file and it is not asked for.
# --bundle without mpirun: nothing to bundle, and the message says where it
# applies instead of CLI11's "argument was not expected".
CHECKS=$((CHECKS + 1))
rc=0
"$TF" analyze --bundle bound.tf >bu.txt 2>bu.err || rc=$?
if [[ $rc -ne 0 ]] && grep -q "bundle applies to the parallel analysis only: mpirun -np P" bu.err &&
  [[ ! -s bu.txt ]]; then
  ok "--bundle in the serial analysis refused: $(head -n 1 bu.err)"
else
  bad "--bundle serial: exit $rc, $(head -n 2 bu.err)"
fi

CHECKS=$((CHECKS + 1))
if [[ -s bound.tf ]] && TRACEFOLD_PROGRESS=1 "$TF" analyze bound.tf >p.txt 2>p.err &&
  grep -q "^tracefold: analyzing bound.tf: step 6/6 (100%)$" p.err && cmp -s p.txt bound.txt &&
  ! grep -q "analyzing" bound.err; then
  ok "analyze progress to 100%, same report"
else
  bad "analyze progress: $(tail -n 2 p.err)"
fi
finish
