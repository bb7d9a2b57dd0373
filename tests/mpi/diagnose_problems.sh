#!/usr/bin/env bash
# `tracefold diagnose` on programs with designed problems
# (examples/diagnose/diag_problems.c), recorded with --timeline (no samples: the
# causes are the MPI call paths the computation ends at). Each diagnosis's
# severity is within 10 % of what the program measured it built in, and
# names the right call and rank; the balanced control has no diagnosis and
# a few long collectives are not frequent communication.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"
needs_yielding_waits 4

if designed imbalance 4; then
  expect load_imbalance --symptom MPI_Allreduce --cause MPI_Allreduce --cause-rank 3
  # The HTML report opens with the findings: rendered by Chromium, its DOM
  # has the diagnosis, the picture with a layer per view, and ranks as
  # people write them.
  CHECKS=$((CHECKS + 1))
  CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
  if [[ -z $CHROMIUM ]]; then
    bad "chromium not found (scripts/install-deps.sh installs it)"
  elif ! "$TF" report "$WORK/imbalance/t.tf" -o "$WORK/r.html" 2>"$WORK/report.err" ||
    ! timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
      --user-data-dir="$WORK/profile" --dump-dom "file://$WORK/r.html" >"$WORK/dom.html" 2>/dev/null; then
    bad "report of the imbalance run"; show_run "$WORK/report.err"
  elif msg=$(python3 - "$WORK/dom.html" "$WORK/imbalance/report.json" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
h2 = re.findall(r"<h2>([^<]*)</h2>", dom)
assert h2[:3] == ["Summary", "Findings", "Time by operation"], h2
rows = re.findall(r'<tr class="diagnosis" data-kind="(\w+)"', dom)
assert rows and rows[0] == "load_imbalance", rows
views = re.findall(r'<g class="view" data-view="(\w+)"', dom)
assert views == ["labels"] + ["d%d" % i for i in range(len(rows))], views
assert 'fill="#1f4e9c"' in dom and 'fill="#d62728"' in dom, "no symptom or cause cells"
sites = dom.split('id="callsites"', 1)[1].split("</table>", 1)[0]
assert "<td>0\u20133</td>" in sites, "ranks not written 0-3"
import json
save = re.findall(r'<span class="could-save">([0-9.]+) %</span>', dom)
want = json.load(open(sys.argv[2]))["summary"][0]["could_save"] * 100
assert save and abs(float(save[0]) - want) < 0.051, ("phase #0 could save", save, want)
print("report: sections %s, diagnoses %s, %d picture views" % (h2[:3], rows, len(views)))
PY
  ); then
    ok "$msg"
  else
    bad "report DOM: $msg"
  fi
fi
designed serial 4 && expect serialisation --symptom MPI_Bcast --cause MPI_Bcast --cause-rank 0
# Frequent communication needs the ranks to enter the calls together (the
# program's untraced barrier); a loaded machine that keeps them apart makes
# the calls mostly waiting, which the rule rightly leaves to an imbalance.
# The program measures that waiting itself: a run whose ranks waited more
# than twice the calls' own time is recorded again (3 attempts), and only
# then does the report have to name frequent communication.
for attempt in 1 2 3; do
  designed frequent 4 || break
  apart=$(sed -n 's/^diag: frequent entered apart: waiting \([0-9.]*\) of \([0-9.]*\)$/\1 \2/p' \
    "$WORK/frequent/out.txt")
  if [[ -z $apart ]]; then
    CHECKS=$((CHECKS + 1)); bad "frequent: the program did not print its waiting"; break
  fi
  read -r waited total <<<"$apart"
  if python3 -c "import sys; sys.exit(0 if $waited <= 2 * ($total - $waited) else 1)"; then
    expect frequent_communication --symptom MPI_Allreduce
    break
  fi
  echo "frequent: attempt $attempt: the ranks waited $waited s of $total s in the calls: recording again"
  [[ $attempt -eq 3 ]] && { CHECKS=$((CHECKS + 1)); bad "frequent: 3 runs whose ranks did not enter together"; }
done
designed few 4 && expect absent frequent_communication
designed late 2 && expect wait_for_partner --symptom MPI_Recv --cause "rank 0" --cause-rank 0
designed large 2 && expect large_transfer --symptom MPI_Send
# The program writes (and deletes on close) a file in the working directory.
cd "$WORK" && designed io 2 && expect large_io --symptom MPI_File_write_at
designed mpmd 4 && expect mpmd_imbalance --symptom MPI_Allreduce --detail "ranks 0–1 | ranks 2–3"
# Long enough steps that a loaded machine's scheduling jitter at each
# synchronisation (a few hundred microseconds) stays below 1 % of the run.
UNIT_MS=100 designed balanced 4 && expect none
finish
