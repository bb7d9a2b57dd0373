#!/usr/bin/env bash
# Records the ring under mpirun and checks the trace expands to the raw logs.
set -euo pipefail
TF=$1; APPS=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
"$TF" record -o ring.tf --raw-log raw -- "${TRACEFOLD_MPIRUN:-mpirun}" -np 4 "$APPS/app_ring" 40 > out.txt 2> err.txt
grep -q "ring: 4 ranks, 40 steps" out.txt
"$TF" diff raw ring.tf
# Folded, the 40 steps are one loop: 6 nodes regardless of the step count.
grep -q "^nodes 6$" ring.tf
