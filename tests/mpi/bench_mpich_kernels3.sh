#!/usr/bin/env bash
# Benchmark generation under MPICH, part 3: the rest of the kernels (the
# bench_programs*.sh scripts use the MPI the project is built for, Open MPI
# by default; together the bench_mpich*.sh scripts run every program of their
# lists under MPICH). Each program is compiled from tests/apps with MPICH's
# own wrappers (mpicc.mpich, mpicxx.mpich, mpif90.mpich), recorded under
# mpiexec.mpich (record picks libtracefold-mpich.so, TRACEFOLD_MPI_FLAVOURS),
# generated, compiled with MPICH's `mpicc -std=c11 -Wall -Wextra -Werror`,
# run and recorded under mpiexec.mpich again, and the two traces compared
# with `diff --ignore-callsites` and the program's diff options from
# tests/mpi/bench_lib.bash, as under Open MPI (bench_mpich_lib.bash). Both
# MPIs are installed by scripts/install-deps.sh: a missing one fails.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/bench_lib.bash"
source "$SRC/tests/mpi/bench_mpich_lib.bash"
mpich_setup
mpich_part BENCH_KERNELS 10
finish
