#!/usr/bin/env bash
# The recorder's start-up does not show as waiting in the program's first
# call (docs/analyze.md#the-recordings-start-up): tests/apps/bcast_first.c
# broadcasts from rank 0 as its first call after MPI_Init, with nothing
# late by design, and `tracefold analyze` finds less than 1 ms of Late
# Broadcast in most of RUNS recordings at 4 ranks (without the recorder's
# barrier at the end of MPI_Init rank 0 left MPI_Init 3-5 ms after the
# others in every run, and the broadcast showed that as Late Broadcast).
# Most, not all: with 4 busy-polling MPICH ranks on 2 cores under the
# suite's load, rank 0 can lose its core for one time slice between the
# barrier and the broadcast (one CI run: 7.9 ms, ranks 1 and 2 waiting
# 3.9 ms each), which is the machine's doing, not the recorder's. The
# injected-waits program's Late Broadcast is still found.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"
RUNS=${RUNS:-5}
LIMIT=0.001
LATE=()

for run in $(seq 1 "$RUNS"); do
  d="$WORK/run$run"
  mkdir -p "$d"
  CHECKS=$((CHECKS + 1))
  limited "$d/out.txt" "$d/err.txt" "${PRIO[@]}" "$TF" record --timeline -o "$d/t.tf" -- \
    "$MPIRUN" -np 4 "$APPS/app_bcast_first" 10
  if [[ $LRC -ne 0 ]] || ! grep -q "^relaxation: 10 steps on 4 ranks" "$d/out.txt"; then
    bad "run $run: recording exited $LRC"
    show_run "$d/out.txt" "$d/err.txt"
    continue
  fi
  if ! "$TF" analyze "$d/t.tf" -o "$d/report.json" 2>"$d/analyze-err.txt"; then
    bad "run $run: tracefold analyze failed"
    show_run "$d/analyze-err.txt"
    continue
  fi
  if msg=$(python3 - "$d/report.json" "$LIMIT" <<'EOF' 2>&1
import json, sys
rep = json.load(open(sys.argv[1]))
limit = float(sys.argv[2])
labels = [c["label"] for c in rep["callpaths"]]
bcasts = [i for i, label in enumerate(labels) if label.startswith("MPI_Bcast ")]
if not bcasts or rep["collectives"] < 11:
    sys.exit(f"no analysed MPI_Bcast ({rep['collectives']} collective instances)")
late = {}
for c in rep["severity"]:
    if c["pattern"] == "late_broadcast":
        late[c["rank"]] = late.get(c["rank"], 0) + c["seconds"]
total = sum(late.values())
per_rank = ", ".join(f"rank {r} {v * 1e3:.3f} ms" for r, v in sorted(late.items()))
if total >= limit:
    sys.exit(f"Late Broadcast {total * 1e3:.3f} ms ({per_rank}), want below {limit * 1e3:g} ms")
print(f"Late Broadcast {total * 1e3:.3f} ms over 4 ranks ({per_rank or 'none'})")
EOF
  ); then
    ok "run $run: $msg"
  else
    echo "late: run $run: $msg"
    LATE+=("run $run: $msg")
  fi
done
CHECKS=$((CHECKS + 1))
if [[ $((2 * ${#LATE[@]})) -ge $RUNS ]]; then
  bad "${#LATE[@]} of $RUNS runs show Late Broadcast at the first call: $(printf '%s; ' "${LATE[@]}")"
else
  ok "${#LATE[@]} of $RUNS runs show Late Broadcast at the first call (fewer than half)"
fi

# Waiting that is there is still found: the root sleeps before each
# broadcast (tests/apps/waits_inject.c bcast).
if inject bcast 3; then
  expect severity late_broadcast 1,2 MPI_Bcast
fi
finish
