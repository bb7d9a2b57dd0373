#!/usr/bin/env bash
# Benchmark generation, part 2: the first programs built around particular
# MPI features (communicators, persistent requests, nonblocking
# collectives, intercommunicators, request links); see bench_programs.sh.
# The rest of the list is part 3 (bench_programs_features2.sh): 21 programs
# took past CTest's 240 s under load.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"
LIST=("${BENCH_FEATURES[@]:0:10}")
for p in "${LIST[@]}"; do
  # shellcheck disable=SC2086
  bench_one $p
done
finish
