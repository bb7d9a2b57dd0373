#!/usr/bin/env bash
# Recorder overhead, measured side by side: the same MPI micro-benchmark
# (bench/mpi/overhead.c: a loop of 8-byte Allreduce, a ping-pong, and polling
# loops of MPI_Test and MPI_Iprobe waiting for a late message) run
# alternately untraced, traced (folded trace only) and traced with
# --timeline, ROUNDS times each; prints the median microseconds per call,
# the added cost per call of each mode against the untraced run, the added
# cost of --timeline against folded-only recording, and the sizes on disk
# (trace; timeline files and their bytes per event).
#   BUILD_DIR=build ROUNDS=5 ITERS=200000 scripts/bench-record.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BUILD_DIR="${BUILD_DIR:-build}"
ROUNDS="${ROUNDS:-5}"
ITERS="${ITERS:-200000}"
if [[ ! -x "$BUILD_DIR/src/cli/tracefold" ]]; then
  ./scripts/install-deps.sh
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD_DIR" >/dev/null
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpicc -O2 bench/mpi/overhead.c -o "$work/overhead"
TF="$(realpath "$BUILD_DIR/src/cli/tracefold")"
for ((r = 0; r < ROUNDS; r++)); do
  mpirun -np 2 "$work/overhead" "$ITERS" >> "$work/plain.txt"
  (cd "$work" && "$TF" record -o "$work/t.tf" -- mpirun -np 2 "$work/overhead" "$ITERS" >> "$work/traced.txt" 2>>"$work/record.log")
  (cd "$work" && "$TF" record --timeline -o "$work/tl.tf" -- mpirun -np 2 "$work/overhead" "$ITERS" >> "$work/timeline.txt" 2>>"$work/record.log")
done
events=0
for r in 0 1; do events=$((events + $("$TF" expand "$work/tl.tf" -r $r | grep -cv -E '^(site|rank|comm) '))); done
python3 - "$work/plain.txt" "$work/traced.txt" "$work/timeline.txt" "$work/t.tf" "$work/tl.tf.timeline" "$events" <<'PY'
import os, statistics, sys
def load(path):
    d = {}
    for line in open(path):
        name, calls, secs, us = line.split()
        d.setdefault(name, []).append(float(us))
    return d
plain, traced, timeline = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
print("%-12s %6s %12s %11s %13s %11s %13s %15s" % ("kernel", "rounds", "untraced us", "traced us", "added us/call",
      "+timeline", "added us/call", "timeline extra"))
for k in plain:
    p, t, l = (statistics.median(x[k]) for x in (plain, traced, timeline))
    print("%-12s %6d %12.3f %11.3f %13.3f %11.3f %13.3f %15.3f" % (k, len(plain[k]), p, t, t - p, l, l - p, l - t))
tdir = sys.argv[5]
tbytes = sum(os.path.getsize(os.path.join(tdir, f)) for f in os.listdir(tdir))
events = int(sys.argv[6])
print("folded trace: %d bytes; timeline: %d bytes for %d events (%.2f bytes/event), 2 ranks, %s iterations" % (
    os.path.getsize(sys.argv[4]), tbytes, events, tbytes / max(events, 1), os.environ.get("ITERS", "200000")))
PY
