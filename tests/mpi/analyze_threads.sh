#!/usr/bin/env bash
# `tracefold analyze` per (rank, thread) location (tests/apps/thread_late.c,
# MPI_THREAD_MULTIPLE): thread 1 of rank 1 sends DELAY ms late to thread 1
# of rank 0, while thread 0 of rank 0 never waits. The Late Sender must be
# on location 0.1 (within 25 % of the sleep the program measured), none on
# any other location above 5 % of the sleep (measured times show the
# workers' opening MPI_Sendrecv waiting a little for the other rank's
# worker to start), its delay cost on 1.1; the report names the
# locations rank.thread, and its times are each thread's recorded ones
# (no note of times laid out from means).
# The parallel analysis and diagnose refuse the trace, naming why
# (extrapolation of traces with threads is tests/mpi/extrap_threads.sh's).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
record_thread_late 400

CHECKS=$((CHECKS + 1))
if "$TF" analyze t.tf -o report.json 2>a-err.txt && "$TF" analyze t.tf >report.txt 2>>a-err.txt; then
  if msg=$(python3 - report.json "$SLEPT" <<'PY' 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
slept = float(sys.argv[2])
names = [l["name"] for l in r.get("locations", [])]
assert names == ["0.0", "1.0", "0.1", "1.1"], f"locations {names}"
ls = {}
for c in r["severity"]:
    if c["pattern"] in ("late_sender", "wrong_order"):
        assert c["location"] == f'{c["rank"]}.{c["thread"]}', c
        if c["pattern"] == "late_sender":
            ls[c["location"]] = ls.get(c["location"], 0) + c["seconds"]
got = ls.pop("0.1", 0.0)
assert abs(got - slept) <= 0.25 * slept, f"Late Sender on 0.1: {got:.3f} s, slept {slept:.3f} s"
# Measured times also show the workers' opening MPI_Sendrecv waiting a
# few ms for the other rank's worker to start: far below the sleep.
big = {k: v for k, v in ls.items() if v > 0.05 * slept}
assert not big, f"Late Sender on other locations: {big}"
dc = {}
for c in r["delay_costs"]:
    dc[c["location"]] = dc.get(c["location"], 0) + c["seconds"]
assert max(dc, key=dc.get) == "1.1", f"delay costs {dc}"
assert not any("laid out from" in n for n in r["notes"]), r["notes"]
print(f"Late Sender {got:.3f} s on 0.1 (slept {slept:.3f} s), none elsewhere above 5 % of it; delay cost on 1.1")
PY
  ); then
    ok "$msg"
  else
    bad "$msg"
  fi
  grep -q "s  rank 0\.1$" report.txt || { bad "the text report does not name location 0.1"; show_run report.txt; }
  grep -q "4 locations, named rank.thread" report.txt || bad "the text report's header"
else
  bad "tracefold analyze failed"
  show_run a-err.txt
fi

CHECKS=$((CHECKS + 1))
limited p-out.txt p-err.txt "$MPIRUN" -np 2 "$TF" analyze t.tf
if [[ $LRC -eq 0 ]]; then
  bad "the parallel analysis took a trace with threads"
elif grep -q "threads a rank: the parallel analysis takes one thread per rank" p-err.txt p-out.txt; then
  ok "the parallel analysis refuses, naming the threads"
else
  bad "the parallel analysis's refusal"
  show_run p-out.txt p-err.txt
fi

CHECKS=$((CHECKS + 1))
if "$TF" diagnose t.tf >d-out.txt 2>d-err.txt; then
  bad "diagnose took a trace with threads"
elif grep -q "diagnose takes traces of one thread per rank" d-err.txt; then
  ok "diagnose refuses traces with threads"
else
  bad "diagnose's refusal"
  show_run d-err.txt
fi

finish
