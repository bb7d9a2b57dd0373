#!/usr/bin/env bash
# What noting the order of calls across threads costs a program that asks
# for MPI_THREAD_MULTIPLE but calls MPI from one thread: rank 0 of a 2-rank
# omp_halo run with one OpenMP thread (an MPI_Sendrecv a step) under
# callgrind, counting inside the recorder's end-of-call work
# (tracefold::record::Call::~Call, inclusive), of that inside
# note_thread_order, and of that in reading the call's keys from its fields
# (order_keys; 0 if the compiler inlined it). Two runs (STEPS1, STEPS2
# steps) per build give the steady state: the difference in instructions
# over the difference in calls. Each build given is measured in turn, so
# two builds compare side by side:
#   scripts/bench-thread-order.sh /path/to/other/build build
# Instruction counts do not move with the machine's load.
# Needs valgrind (Debian package valgrind; installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
STEPS1="${STEPS1:-1000}"
STEPS2="${STEPS2:-3000}"
(($# > 0)) || set -- build
source scripts/lib/callgrind.bash
callgrind_need
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
callgrind_rank0 "$work/rank0.sh"
# Prints "calls total note keys" for one run.
run() {
  local b=$1 steps=$2
  (cd "$work" && OMP_NUM_THREADS=1 CG_OUT="$work/cg" "$b/src/cli/tracefold" record -o "$work/t.tf" -- \
    mpirun -np 2 "$work/rank0.sh" "$b/tests/apps/app_omp_halo" "$steps" 1 >/dev/null 2>"$work/err")
  local calls
  calls=$("$b/src/cli/tracefold" expand "$work/t.tf" -r 0 | grep -c -E '^MPI_' || true)
  echo "$calls $(callgrind_total "$work/cg")" \
    "$(callgrind_inclusive "$work/cg" 'thread_order.cpp:tracefold::record::note_thread_order')" \
    "$(callgrind_inclusive "$work/cg" 'thread_order.cpp:tracefold::order_keys')"
}
printf '%-40s %14s %14s %14s\n' build "per call" "noting order" "order keys"
for b in "$@"; do
  B=$(realpath "$b")
  [[ -x $B/src/cli/tracefold && -x $B/tests/apps/app_omp_halo ]] || { echo "bench-thread-order: build $b first" >&2; exit 2; }
  read -r c1 t1 n1 k1 < <(run "$B" "$STEPS1")
  read -r c2 t2 n2 k2 < <(run "$B" "$STEPS2")
  awk -v b="$b" -v c="$((c2 - c1))" -v t="$((t2 - t1))" -v n="$((n2 - n1))" -v k="$((k2 - k1))" \
    'BEGIN{printf "%-40s %14.0f %14.0f %14.0f\n", b, t / c, n / c, k / c}'
done
