#!/usr/bin/env bash
# Benchmark generation, part 4: C++ and Fortran programs (mpif.h, use mpi,
# mpi_f08), and the programs the generator refuses: the refusal names a node
# and leaves no file behind; see bench_programs.sh.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"
LIST=("${BENCH_OTHERS[@]}")
for p in "${LIST[@]}"; do
  # shellcheck disable=SC2086
  bench_one $p
done
for p in "${BENCH_REFUSED[@]}"; do
  # shellcheck disable=SC2086
  refused_one $p
done
finish
