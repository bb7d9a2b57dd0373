#!/usr/bin/env bash
# A `--sample-only` recording whose event logs meet their size bound before
# their timelines do: `diag_problems varied` (the imbalance program whose
# every MPI_Allreduce has a new count, so no call is stored as a repeat)
# under a small --timeline-max. The recorder warns once per rank whose log
# is cut, naming the bound and the option that raises it; `tracefold
# diagnose` analyses the run up to where the first log ends, names the cut
# (ranks, calls with parameters of those timed, why), and still finds the
# designed load imbalance of the steps it analysed, at the Allreduce, on
# rank 3, within 10 % of the program's own measure of those steps; the
# samples files keep samples up to the same bound (small bounds get small
# blocks), the report says where they end, and the computation after is
# named by call site; the parallel diagnosis writes the serial report.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/diagnose_lib.bash"
needs_yielding_waits 2

STEPS=${CUT_STEPS:-80}
BOUND=${CUT_BOUND:-1000}
TAG=cut UNIT_MS=12 designed varied 4 --sample 2ms --sample-only --timeline-max "$BOUND" || finish
d="$WORK/cut"

CHECKS=$((CHECKS + 1))
warned=$(grep -c "^tracefold: rank [0-3]: event log size bound reached ($BOUND bytes) after [0-9]* events.*--timeline-max BYTES" "$d/err.txt" || true)
if [[ $warned -ge 1 && $warned -le 4 ]] &&
  [[ $(grep "event log size bound" "$d/err.txt" | sed 's/ after.*//' | sort | uniq -d) == "" ]]; then
  ok "the recorder warned on $warned ranks, once each: $(grep -m1 'event log size bound' "$d/err.txt")"
else
  bad "want one event log bound warning per cut rank naming $BOUND bytes and --timeline-max, got:"
  grep "tracefold:" "$d/err.txt" >&2
fi

# The samples file is bounded too, with blocks small enough that samples
# are kept before the bound; the report says they end early.
CHECKS=$((CHECKS + 1))
kept=$(sed -n 's/^tracefold: samples of 4 ranks every 2ms in .*: \([0-9]*\) kept of \([0-9]*\) taken (\([0-9]*\) dropped).*/\1 \3/p' "$d/err.txt")
if [[ -z $kept || ${kept% *} -eq 0 || ${kept#* } -eq 0 ]]; then
  bad "want samples kept and dropped under --timeline-max $BOUND, got '${kept:-no samples line}'"
  grep "tracefold:" "$d/err.txt" >&2
elif ! grep -q "samples of ranks\? [0-9,–]* end before their computation does, the first [0-9.]* s into the run (the samples file reached its size bound, raise it with --timeline-max" "$TEXT"; then
  bad "the report does not say where the samples end"
  sed -n '/^Notes/,$p' "$TEXT" >&2
else
  ok "${kept% *} samples kept, ${kept#* } dropped at the bound; $(grep -o 'samples of ranks\? [0-9,–]* end before[^(]*' "$TEXT")"
fi

# The note: per cut rank, the calls it has parameters for of those timed.
CHECKS=$((CHECKS + 1))
if note=$(python3 -c '
import json, re, sys
notes = [n for n in json.load(open(sys.argv[1]))["notes"] if n.startswith("event logs end before")]
if len(notes) != 1: sys.exit("no note on the cut event logs")
n = notes[0]
if not re.search(r"ranks? [0-9,–]+ reached the size bound \(record with a larger --timeline-max", n):
    sys.exit("the note does not say the size bound cut the logs: " + n)
cuts = re.findall(r"rank (\d+) (\d+) of (\d+)", n)
if not cuts or any(int(k) >= int(t) for _, k, t in cuts): sys.exit("no rank with fewer calls than timed: " + n)
if not re.search(r"every rank is analysed up to [0-9.]+ s into the run, where rank \d+.s first call without parameters began", n):
    sys.exit("the note does not say up to where: " + n)
print(n)' "$JSON" 2>&1); then
  ok "the report names the cut: $note"
else
  bad "$note"
fi

# The designed value of the steps analysed: the first INSTANCES steps.
CHECKS=$((CHECKS + 1))
if ! part=$(python3 -c '
import json, re, sys
rep = json.load(open(sys.argv[1]))
n = rep["phases"][0]["instances"]
steps = [float(v) for v in re.findall(r"^diag: step \d+ designed ([0-9.]+)$", open(sys.argv[2]).read(), re.M)]
if len(steps) != int(sys.argv[3]): sys.exit(f"the program printed {len(steps)} steps, ran {sys.argv[3]}")
if not 2 <= n < len(steps): sys.exit(f"phase #0 has {n} instances of {len(steps)} steps: not a cut run")
print(n, sum(steps[:n]))' "$JSON" "$d/out.txt" "$STEPS" 2>&1); then
  bad "$part"
  finish
fi
ok "phase #0 covers ${part% *} of $STEPS steps; their designed imbalance is ${part#* } s"
DESIGNED=${part#* }
expect load_imbalance --symptom MPI_Allreduce --cause "computation before MPI_Allreduce" --cause-rank 3

# The parallel diagnosis (rank 0 reads the event logs, rank 1 only the
# world size) cuts the same way.
CHECKS=$((CHECKS + 1))
if ! "$MPIRUN" -np 2 "$TF" diagnose "$d/t.tf" -o "$d/par.json" >"$d/par.out" 2>&1; then
  bad "parallel diagnose of the cut run failed: $(tail -3 "$d/par.out")"
elif cmp -s "$JSON" "$d/par.json"; then
  ok "parallel diagnose (2 analysis ranks) of the cut run: the serial report"
else
  bad "parallel and serial reports of the cut run differ"
fi
finish
