#!/usr/bin/env bash
# A `--sample-only` run one of whose ranks is killed hard: app_crash's
# `kill` mode has its last rank send itself SIGKILL half way (as the OOM
# killer would), before it wrote a block of any file. Its files still
# begin with their headers, so `tracefold diagnose` reads them as empty and
# analyses the other ranks: the report names the rank whose event log has
# no trailer, puts it in a rank group of its own (it made no call), and
# leaves the messages it would have sent unmatched. (Under MPICH's Hydra
# the other ranks are killed too, see below.)
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"

d="$WORK/killed"
mkdir -p "$d"
CHECKS=$((CHECKS + 1))
limited "$d/out.txt" "$d/err.txt" "$TF" record --sample-only -o "$d/t.tf" -- \
  "$MPIRUN" -np 4 "$APPS/app_crash" 20 kill
if [[ $LRC -eq 0 ]]; then
  bad "the run whose rank 3 killed itself exited 0"
else
  ok "the run exited $LRC (rank 3 killed itself)"
fi
CHECKS=$((CHECKS + 1))
if ! "$TF" diagnose "$d/t.tf" -o "$d/report.json" 2>"$d/diag-err.txt"; then
  bad "tracefold diagnose refused the run: $(cat "$d/diag-err.txt")"
  finish
fi
ok "diagnose analysed the run"
CHECKS=$((CHECKS + 1))
if is_hydra; then
  # MPICH's Hydra SIGKILLs the other ranks as soon as one is killed, so no
  # rank writes a trailer and where each stopped is chance: what is left to
  # check is that every log is read as cut.
  echo "Hydra kills every rank with rank 3: only the note on four cut logs is checked"
  if msg=$(python3 -c '
import json, sys
notes = json.load(open(sys.argv[1]))["notes"]
if not any(n.startswith("the event logs of ranks 0\u20133 end without a trailer") for n in notes):
    sys.exit("no note names the four logs without a trailer: %s" % notes)
print("every rank'"'"'s event log read as cut")' "$d/report.json" 2>&1); then
    ok "$msg"
  else
    bad "$msg"
  fi
  finish
  exit 0
fi
if msg=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
notes = d["notes"]
if not any(n.startswith("the event log of rank 3 ends without a trailer") for n in notes):
    sys.exit("no note names rank 3 event log without a trailer: %s" % notes)
if not any("receives found no matching send" in n for n in notes):
    sys.exit("no note on the receives whose sends died with rank 3: %s" % notes)
groups = d["phases"][-1]["groups"]
if groups != [[0, 1, 2], [3]]:
    sys.exit("rank groups %s, want [[0, 1, 2], [3]]" % groups)
print("rank 3 named, groups %s" % groups)' "$d/report.json" 2>&1); then
  ok "$msg"
else
  bad "$msg"
fi
finish
