#!/usr/bin/env bash
# Extrapolation through a plugin: the CG-like kernel (tests/apps/cg.c, NPB
# CG's power-of-two row partners and transpose partner) is no row-major
# stencil, so the stencil path fails and the built-in cg plugin explains
# it. Recorded at 2, 4, 8, 16 ranks, extrapolated to 32 (one more row
# partner than any input has) and, from 2, 4, 16, 32, to 8 in between;
# both must `tracefold diff` same as real runs, call sites included. A
# count the plugin cannot take (12: not a power of two) is an error.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=2
source "$SRC/tests/mpi/extrap_lib.bash"

for n in 2 4 8 16 32; do rec cg "$n" cg; done
same_as_real "cg: 2,4,8,16 -> 32" x-cg-32.tf cg-32.tf cg-2.tf cg-4.tf cg-8.tf cg-16.tf
same_as_real "cg: 2,4,16,32 -> 8 (between)" b-cg-8.tf cg-8.tf cg-2.tf cg-4.tf cg-16.tf cg-32.tf

# --explain says the stencil path failed and which plugin sequence
# explained which field.
CHECKS=$((CHECKS + 1))
"$TF" extrapolate cg-2.tf cg-4.tf cg-8.tf cg-16.tf --ranks 32 -o e.tf --explain \
  > cg-explain.txt 2>&1 || true
if grep -q "row-major stencil path failed .*plugin cg explains the pattern" cg-explain.txt &&
  grep -q "field peer: plugin cg: (<row-down>)" cg-explain.txt &&
  grep -q "field peer: plugin cg: (<transpose>)" cg-explain.txt &&
  grep -q "field peer: plugin cg: (<row-up>)" cg-explain.txt; then
  ok "cg: --explain names the plugin and its sequences"
else
  bad "cg: --explain does not name the plugin's sequences: $(head -c 2000 cg-explain.txt)"
fi

# Named explicitly, the plugin gives the same trace.
CHECKS=$((CHECKS + 1))
if "$TF" extrapolate cg-2.tf cg-4.tf cg-8.tf cg-16.tf --ranks 32 --plugin cg -o p.tf \
  > p.log 2>&1 && [[ $("$TF" diff p.tf cg-32.tf 2>&1) == "same: 32 ranks" ]]; then
  ok "cg: --plugin cg -> 32 same as the real run"
else
  bad "cg: --plugin cg: $(cat p.log)"
fi

fails_with "cg: 12 ranks are no power of two" \
  "--ranks 12: plugin cg: 12 ranks: the cg pattern needs a power of two" \
  cg-2.tf cg-4.tf cg-8.tf cg-16.tf --ranks 12 --plugin cg -o twelve.tf
fails_with "cg: 12 ranks, plugins tried" \
  "also tried; plugin cg: --ranks 12: plugin cg: 12 ranks: the cg pattern needs a power of two" \
  cg-2.tf cg-4.tf cg-8.tf cg-16.tf --ranks 12 -o twelve.tf
fails_with "cg: --no-plugins keeps the stencil path's error, on CG's 4x4 grid" \
  "no row-major grid of up to 3 dimensions .* on the 4x4 grid MPI_Dims_create makes" \
  cg-2.tf cg-4.tf cg-8.tf cg-16.tf --ranks 32 --no-plugins -o np.tf
fails_with "cg: unknown plugin" "--plugin nope: no such extrapolation plugin \(registered: cg" \
  cg-2.tf cg-4.tf cg-8.tf cg-16.tf --ranks 32 --plugin nope -o nope.tf
finish
