#!/usr/bin/env bash
# Fresh Debian 12 machine -> dependencies, build, record the bundled 2D
# stencil at 16 ranks, and show the trace: its size, `stats` and `print`;
# then replay it as an MPI program and check that recording the replay gives
# the same calls back.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target tracefold tracefold_record tracefold_replay_exe
TF="$PWD/$BUILD_DIR/src/cli/tracefold"
out="${DEMO_DIR:-$PWD/demo-output}"
mkdir -p "$out"
mpicc -O2 -g examples/stencil2d/stencil2d.c -o "$out/stencil2d"
# Open MPI refuses root without these; 16 ranks on a small machine need oversubscription.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cd "$out"
echo "== recording: mpirun -np 16 ./stencil2d 200"
"$TF" record -o stencil2d.tf --raw-log raw -- mpirun -np 16 ./stencil2d 200
echo
echo "== size: folded trace vs raw per-rank logs"
printf '%-28s %12s\n' "folded trace (stencil2d.tf)" "$(stat -c %s stencil2d.tf) bytes"
printf '%-28s %12s\n' "raw logs (raw/, 16 files)" "$(cat raw/*.txt | wc -c) bytes"
"$TF" diff raw stencil2d.tf
echo
echo "== tracefold stats stencil2d.tf"
"$TF" stats stencil2d.tf
echo
echo "== tracefold print stencil2d.tf"
"$TF" print stencil2d.tf
echo
echo "== replay: mpirun -np 16 tracefold replay stencil2d.tf (recorded computation, random payloads)"
mpirun -np 16 "$TF" replay stencil2d.tf
echo
echo "== fixed point: recording the replay gives the same calls (call sites aside)"
"$TF" record -o replayed.tf -- mpirun -np 16 "$TF" replay stencil2d.tf >/dev/null 2>&1
"$TF" diff --ignore-callsites stencil2d.tf replayed.tf
