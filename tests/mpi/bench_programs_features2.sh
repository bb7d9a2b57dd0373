#!/usr/bin/env bash
# Benchmark generation, part 3: the rest of the programs built around MPI
# features (polling, wildcards and their statuses, collectives from several
# lines, derived datatypes, Cartesian and graph topologies), from the 11th
# entry of the list to its end, so that a program added to the list runs
# here; see bench_programs.sh and bench_programs_features.sh.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"
LIST=("${BENCH_FEATURES[@]:10}")
for p in "${LIST[@]}"; do
  # shellcheck disable=SC2086
  bench_one $p
done
finish
