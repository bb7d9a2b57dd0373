#!/usr/bin/env bash
# Benchmark generation, part 2: the programs built around particular MPI
# features (communicators, Cartesian topologies, persistent requests,
# nonblocking collectives, intercommunicators, polling, wildcards); see
# bench_programs.sh.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"
LIST=("${BENCH_FEATURES[@]}")
for p in "${LIST[@]}"; do
  # shellcheck disable=SC2086
  bench_one $p
done
finish
