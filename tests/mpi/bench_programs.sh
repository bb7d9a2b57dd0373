#!/usr/bin/env bash
# Benchmark generation over the project's MPI test programs, part 1: the
# stencils and application kernels. Each program is recorded at 4 ranks (3
# or 8 where it needs them); `tracefold bench` generates the C benchmark,
# `mpicc -std=c11 -Wall -Wextra -Werror` compiles it, it runs at the
# recorded count under the recorder, and `tracefold diff --ignore-callsites`
# must find the same calls on every rank (tests/mpi/bench_lib.bash has the
# lists; bench_programs_features*.sh and bench_programs_others.sh the rest).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"
bench_check_lists
LIST=("${BENCH_KERNELS[@]}")
for p in "${LIST[@]}"; do
  # shellcheck disable=SC2086
  bench_one $p
done
finish
