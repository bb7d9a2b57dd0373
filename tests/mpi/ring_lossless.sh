#!/usr/bin/env bash
# Records the ring under mpirun and checks the trace expands to the raw logs.
set -euo pipefail
TF=$1; APPS=$3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
"$TF" record --text -o ring.tf --raw-log raw -- "${TRACEFOLD_MPIRUN:-mpirun}" -np 4 "$APPS/app_ring" 40 > out.txt 2> err.txt
grep -q "ring: 4 ranks, 40 steps" out.txt
"$TF" diff raw ring.tf
# Folded, the 40 steps are one loop: 6 nodes regardless of the step count.
grep -q "^nodes 6$" ring.tf
# Without `--` the command starts at the first word that is not one of
# record's options or their values; -np etc. still reach the launcher.
"$TF" record --text -o nodash.tf --stack-depth 6 "${TRACEFOLD_MPIRUN:-mpirun}" -np 2 "$APPS/app_ring" 5 > out2.txt 2> err2.txt
grep -q "ring: 2 ranks, 5 steps" out2.txt
grep -q "^world 2$" nodash.tf
# A `--` after the command has started belongs to the command.
"$TF" record -o dd.tf "${TRACEFOLD_MPIRUN:-mpirun}" -np 2 "$APPS/app_ring" 3 -- extra > out3.txt 2> err3.txt
grep -q "ring: 2 ranks, 3 steps" out3.txt
