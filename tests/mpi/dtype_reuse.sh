#!/usr/bin/env bash
# Datatypes freed and re-created with other sizes (tests/apps/dtype_reuse.c):
# the recorder caches each handle's size, and MPI_Type_free must drop it,
# or a reused handle would be recorded with the freed type's size. Every
# MPI_Bcast of step s must record dsize = 4 * (1 + s % 4).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

check_lossless dtype_reuse 2 24 '^dtype_reuse: 2 ranks, 24 steps, checksum'
got=$(grep '^MPI_Bcast ' "$DIR/raw/rank-0.txt" | sed -E 's/.* dsize=([0-9]+).*/\1/' | tr '\n' ' ')
want=$(for ((s = 0; s < 24; s++)); do printf '%d ' $((4 * (1 + s % 4))); done)
if [[ $got == "$want" ]]; then
  ok "dtype_reuse: dsize follows the re-created types"
else
  bad "dtype_reuse: dsize per step is '$got', expected '$want'"
fi
finish
