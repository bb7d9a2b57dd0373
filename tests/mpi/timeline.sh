#!/usr/bin/env bash
# Timeline mode (`tracefold record --timeline`): every rank writes the enter
# and exit time of every call next to the folded trace. Checks: the timeline
# holds exactly the folded trace's events per rank (export reads both and
# compares operation by operation), the Perfetto export uses the recorded
# times and is causal (no receive ends before its send starts), otf2-print
# reads the OTF2 archive, and a run that exceeds the size bound warns and
# still leaves files that read back.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
CHECK="$SRC/tests/data/export_checks.py"

# events in the folded trace, all ranks
events() {
  local t=$1 np=$2 r n=0
  for ((r = 0; r < np; r++)); do
    n=$((n + $("$TF" expand "$t" -r $r | grep -cv -E '^(site|rank|comm) ')))
  done
  echo $n
}

CHECKS=$((CHECKS + 1))
limited out.txt err.txt "$TF" record --timeline -o st.tf -- "$MPIRUN" -np 4 "$APPS/app_stencil2d_nonperiodic" 30
if [[ $LRC -ne 0 || ! -s st.tf ]]; then
  bad "recording with --timeline failed ($LRC)"; show_run out.txt err.txt
elif ! ls st.tf.timeline/rank-{0,1,2,3}.tft >/dev/null 2>&1; then
  bad "no timeline files in st.tf.timeline/"; ls -la st.tf.timeline >&2 || true
elif ! grep -q "timeline" err.txt; then
  bad "record did not say where the timeline went"; show_run err.txt
else
  n=$(events st.tf 4)
  mkdir -p expand
  for r in 0 1 2 3; do "$TF" expand st.tf -r $r >expand/rank-$r.txt; done
  if "$TF" export st.tf --perfetto st.json --otf2 st-otf2 2>export.txt &&
    grep -q "timeline recorded ($n events with timestamps)" export.txt &&
    python3 "$CHECK" perfetto st.json expand "$(grep -Eo '[0-9]+ matched messages' export.txt | head -n 1 | awk '{print $1}')" recorded &&
    otf2-print st-otf2/traces.otf2 >otf2.txt 2>otf2.err && [[ ! -s otf2.err ]] &&
    python3 "$CHECK" otf2 otf2.txt expand; then
    ok "timeline: $n events with timestamps, as many as the folded trace; exports causal and readable ($(du -b st.tf.timeline | cut -f1) bytes)"
  else
    bad "timeline exports"; cat export.txt otf2.err >&2 || true
  fi
  if "$TF" report st.tf -o st.html 2>rep.txt && grep -q "recorded timeline" st.html; then
    ok "report uses the recorded timeline"
  else
    bad "report does not use the recorded timeline"; cat rep.txt >&2
  fi
fi

# A bound far too small for the run: a warning, the application unharmed,
# files that read back with the dropped events counted.
CHECKS=$((CHECKS + 1))
limited out2.txt err2.txt "$TF" record --timeline --timeline-max 600 -o small.tf -- "$MPIRUN" -np 2 "$APPS/app_ring" 400
plain ring 2 400
if [[ $LRC -ne 0 ]]; then
  bad "bounded timeline run exited $LRC"; show_run out2.txt err2.txt
elif ! grep -q "timeline size bound" err2.txt; then
  bad "no warning when the timeline bound drops events"; show_run err2.txt
elif ! cmp -s out2.txt "$PDIR/plain.txt"; then
  bad "the bounded run's output differs from the untraced run's"
elif ! "$TF" export small.tf --perfetto small.json 2>export2.txt || ! grep -Eq "[0-9]+ dropped at the size bound" export2.txt; then
  bad "bounded timeline does not read back"; cat export2.txt >&2
else
  ok "bound: $(grep -m1 'timeline size bound' err2.txt | sed 's/^tracefold: //'); $(grep -Eo 'timeline recorded \([^)]*\)' export2.txt)"
fi
finish
