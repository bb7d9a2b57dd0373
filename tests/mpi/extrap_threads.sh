#!/usr/bin/env bash
# Extrapolation of a trace with threads keeps the thread count: omp_halo
# (tests/apps/omp_halo.c, MPI_THREAD_MULTIPLE, 3 OpenMP threads a rank,
# each sending its slab to the same thread of the next rank of a ring,
# tag = its thread number) recorded at 3, 4 and 5 ranks and extrapolated to
# 6 must `tracefold diff` same as a real 6-rank run, thread by thread, with
# each thread's OpenMP number in the `omp` table; so must `threads`
# (pthreads, each on a communicator the main thread duplicated, talking to
# the same thread of rank ^ 1) at 4, 6, 8 -> 10. Inputs with different
# thread counts are refused.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=6
source "$SRC/tests/mpi/extrap_lib.bash"
[[ -x $APPS/app_omp_halo ]] || { echo "no OpenMP: app_omp_halo was not built"; exit 77; }
export OMP_WAIT_POLICY=passive

for n in 3 4 5 6; do rec h "$n" omp_halo 3; done
grep -q "not provided" rec-h-3.out && { echo "no MPI_THREAD_MULTIPLE here"; exit 77; }

CHECKS=$((CHECKS + 1))
if ! "$TF" extrapolate h-3.tf h-4.tf h-5.tf --ranks 6 -o x-6.tf > x.log 2>&1; then
  bad "omp_halo 3,4,5 -> 6: extrapolate failed: $(cat x.log)"
else
  d=$("$TF" diff x-6.tf h-6.tf 2>&1) || true
  if [[ $d == "same: 6 ranks x 3 threads" ]]; then
    ok "omp_halo 3,4,5 -> 6: $d"
  else
    bad "omp_halo 3,4,5 -> 6: extrapolated trace differs from the real run: $d"
  fi
fi

# The OpenMP numbers of the threads: the real run's table.
CHECKS=$((CHECKS + 1))
omp_line() { "$TF" convert --text "$1" -o - 2> /dev/null | grep "^omp "; }
if [[ -n $(omp_line h-6.tf) && $(omp_line x-6.tf) == "$(omp_line h-6.tf)" ]]; then
  ok "omp_halo 3,4,5 -> 6: omp table $(omp_line x-6.tf)"
else
  bad "omp_halo 3,4,5 -> 6: omp table '$(omp_line x-6.tf)' against the real run's '$(omp_line h-6.tf)'"
fi

for n in 4 6 8 10; do rec t "$n" threads; done
CHECKS=$((CHECKS + 1))
if ! "$TF" extrapolate t-4.tf t-6.tf t-8.tf --ranks 10 -o x-10.tf > x10.log 2>&1; then
  bad "threads 4,6,8 -> 10: extrapolate failed: $(cat x10.log)"
else
  d=$("$TF" diff x-10.tf t-10.tf 2>&1) || true
  if [[ $d == "same: 10 ranks x 3 threads" ]]; then
    ok "threads 4,6,8 -> 10: $d"
  else
    bad "threads 4,6,8 -> 10: extrapolated trace differs from the real run: $d"
  fi
fi

rec h2 4 omp_halo 2
fails_with "inputs with 3 and 2 threads a rank" \
  "h2-4.tf has 2 threads per rank calling MPI and h-3.tf has 3: extrapolation keeps the thread count" \
  h-3.tf h2-4.tf h-5.tf --ranks 6 -o y-6.tf
finish
