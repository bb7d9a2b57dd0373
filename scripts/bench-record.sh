#!/usr/bin/env bash
# Recorder overhead, measured side by side: the same MPI micro-benchmark run
# alternately without and with libtracefold.so, ROUNDS times each; prints the
# median microseconds per call and the added cost per call.
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
TF="$BUILD_DIR/src/cli/tracefold"
for ((r = 0; r < ROUNDS; r++)); do
  mpirun -np 2 "$work/overhead" "$ITERS" >> "$work/plain.txt"
  (cd "$work" && "$OLDPWD/$TF" record -o "$work/t.tf" -- mpirun -np 2 "$work/overhead" "$ITERS" >> "$work/traced.txt" 2>>"$work/record.log")
done
python3 - "$work/plain.txt" "$work/traced.txt" "$work/t.tf" <<'PY'
import statistics, sys, os
def load(path):
    d = {}
    for line in open(path):
        name, calls, secs, us = line.split()
        d.setdefault(name, []).append(float(us))
    return d
plain, traced = load(sys.argv[1]), load(sys.argv[2])
print("%-12s %8s %14s %14s %14s %8s" % ("kernel", "rounds", "untraced us", "traced us", "added us/call", "ratio"))
for k in plain:
    p, t = statistics.median(plain[k]), statistics.median(traced[k])
    print("%-12s %8d %14.3f %14.3f %14.3f %8.2f" % (k, len(plain[k]), p, t, t - p, t / p))
print("trace file: %d bytes for %s calls per rank" % (os.path.getsize(sys.argv[3]), "2x" + os.environ.get("ITERS", "")))
PY
