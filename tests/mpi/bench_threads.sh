#!/usr/bin/env bash
# Benchmarks of traces with threads (docs/bench.md "Threads"): `tracefold
# bench` writes one function per recorded thread, run by a pthread of its
# own under MPI_THREAD_MULTIPLE. The benchmark compiles cleanly, runs, and
# its own trace is the program's, location by location (thread t of rank
# r): the threads program (two pthreads per rank, each on a communicator
# the main thread makes and frees), thread_requests (one thread's
# requests completed by another) and omp_halo (OpenMP threads of a ring,
# all on MPI_COMM_WORLD, tag = thread).
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
MPICC=${TRACEFOLD_MPICC:-mpicc}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# bench_threads NAME NP THREADS ARGS...: record, generate, build, record
# the benchmark, compare.
bench_threads() {
  local name=$1 np=$2 nt=$3; shift 3
  "$TF" record -o $name.tf -- "$MPIRUN" -np $np "$APPS/app_$name" "$@" > $name.out 2> $name.err ||
    { cat $name.err >&2; fail "$name: recording the program"; }
  if grep -q "not provided" $name.out; then
    echo "this MPI does not provide MPI_THREAD_MULTIPLE"; exit 77
  fi
  "$TF" print $name.tf | grep -q "$nt threads per rank" || fail "$name: not $nt threads per rank"
  "$TF" bench $name.tf -o $name.c 2> $name.gen || { cat $name.gen >&2; fail "$name: generation"; }
  [[ $(grep -c "pthread_create(" $name.c) -eq $((nt - 1)) ]] || fail "$name: not $((nt - 1)) pthreads"
  grep -q "MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE" $name.c || fail "$name: no MULTIPLE"
  "$MPICC" -std=c11 -Wall -Wextra -Werror -O1 $name.c -o $name-bench -lpthread 2> $name.cc ||
    { head -n 20 $name.cc >&2; fail "$name: the benchmark does not compile cleanly"; }
  # A benchmark whose threads wait for each other wrongly hangs.
  timeout 60 "$TF" record -o $name-b.tf -- "$MPIRUN" -np $np ./$name-bench > $name-b.out 2> $name-b.err ||
    { cat $name-b.out $name-b.err >&2; fail "$name: running the benchmark"; }
  grep -q "^bench: $np ranks, wall time" $name-b.out || fail "$name: no wall time"
  "$TF" diff --ignore-callsites $name.tf $name-b.tf | tee $name.diff
  grep -qx "same: $np ranks x $nt threads" $name.diff || fail "$name: the benchmark's trace differs"
}

bench_threads threads 2 3 20
bench_threads thread_requests 2 2 6
if [[ -x $APPS/app_omp_halo ]]; then
  OMP_WAIT_POLICY=passive bench_threads omp_halo 2 3 10 3
else
  echo "no OpenMP: app_omp_halo was not built, its benchmark was not checked"
fi
