#!/usr/bin/env bash
# `record --sample-only`: no folded trace, an event log per rank beside the
# timeline and the samples; `tracefold diagnose` on such a run finds what
# it finds on a `--sample` run of the same designed problem
# (examples/diagnose/diag_problems.c): the same kind, cause function and
# rank, the severity within 10 % of the designed value. The late sender
# needs the receive's peer from the event log to name the late rank.
# The parallel diagnosis gives the serial report. A command that needs the
# folded trace says what is missing and which option records it.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"

# The symptom and the first cause (its place and rank) of the most severe
# diagnosis of KIND in two reports are the same.
same_diagnosis() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
def top(path):
    d = [d for d in json.load(open(path))["diagnoses"] if d["kind"] == sys.argv[3]][0]
    c = d["causes"][0]
    return d["kind"], d["symptom"]["label"], c["label"], c.get("rank")
a, b = top(sys.argv[1]), top(sys.argv[2])
print(f"--sample: {a}; --sample-only: {b}")
sys.exit(0 if a == b else 1)
EOF
}

for mode in imbalance:4 late:2; do
  what=${mode%:*} np=${mode#*:}
  TAG=$what-sample designed "$what" "$np" --sample 1ms || continue
  full=$JSON
  TAG=$what-only designed "$what" "$np" --sample 1ms --sample-only || continue
  d="$WORK/$what-only"
  CHECKS=$((CHECKS + 1))
  if [[ -e $d/t.tf ]]; then
    bad "$what: --sample-only wrote a folded trace $d/t.tf"
  elif ! ls "$d"/t.tf.timeline/events-*.tfe >/dev/null 2>&1 ||
    [[ $(ls "$d"/t.tf.timeline/events-*.tfe | wc -l) -ne $np ]]; then
    bad "$what: not one event log per rank in $d/t.tf.timeline: $(ls "$d/t.tf.timeline")"
  else
    ok "$what: no folded trace, $np event logs"
  fi
  kind=load_imbalance
  [[ $what == late ]] && kind=wait_for_partner
  if [[ $what == imbalance ]]; then
    expect load_imbalance --symptom MPI_Allreduce --cause work_a --cause-rank 3
  else
    expect wait_for_partner --symptom MPI_Recv --cause "rank 0" --cause work_a --cause-rank 0
  fi
  CHECKS=$((CHECKS + 1))
  if msg=$(same_diagnosis "$full" "$JSON" $kind 2>&1); then ok "$what: $msg"; else bad "$what: $msg"; fi
  CHECKS=$((CHECKS + 1))
  if grep -q "recorded with --sample-only" "$TEXT"; then
    ok "$what: the report says where its calls came from"
  else
    bad "$what: the report does not say it read a --sample-only run"
  fi
done

d="$WORK/imbalance-only"
# The parallel diagnosis reads the event logs too, and writes the same report.
CHECKS=$((CHECKS + 1))
if ! "$MPIRUN" -np 2 "$TF" diagnose "$d/t.tf" -o "$d/par.json" >"$d/par.out" 2>&1; then
  bad "parallel diagnose of a --sample-only run failed: $(tail -3 "$d/par.out")"
elif cmp -s "$d/report.json" "$d/par.json"; then
  ok "parallel diagnose (2 analysis ranks) of a --sample-only run: the serial report"
else
  bad "parallel and serial reports of a --sample-only run differ"
fi

# Commands that need the folded trace name what is missing and the option.
for cmd in analyze print; do
  CHECKS=$((CHECKS + 1))
  if "$TF" "$cmd" "$d/t.tf" >"$d/$cmd.out" 2>"$d/$cmd.err"; then
    bad "$cmd on a --sample-only run succeeded"
  elif grep -q "sample-only" "$d/$cmd.err" && grep -q "record with --sample" "$d/$cmd.err"; then
    ok "$cmd: $(head -c 160 "$d/$cmd.err")"
  else
    bad "$cmd: unclear error: $(cat "$d/$cmd.err")"
  fi
done
finish
