#!/usr/bin/env bash
# What noting the order of calls across threads costs a program that asks
# for MPI_THREAD_MULTIPLE but calls MPI from one thread: rank 0 of a 2-rank
# omp_halo run with one OpenMP thread (an MPI_Sendrecv a step) under
# callgrind, counting inside the recorder's end-of-call work
# (tracefold::record::Call::~Call, inclusive) and, of that, inside
# note_thread_order. Two runs (STEPS1, STEPS2 steps) per build give the
# steady state: the difference in instructions over the difference in
# calls. Each build given is measured in turn, so two builds compare side
# by side:   scripts/bench-thread-order.sh /path/to/other/build build
# Instruction counts do not move with the machine's load.
# Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
STEPS1="${STEPS1:-1000}"
STEPS2="${STEPS2:-3000}"
(($# > 0)) || set -- build
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat >"$work/rank0.sh" <<'SH'
#!/bin/bash
# Only rank 0 runs under callgrind; the other rank runs as is.
if [[ ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-}} == 0 ]]; then
  exec valgrind -q --tool=callgrind --callgrind-out-file="$CG_OUT" \
    '--toggle-collect=tracefold::record::Call::~Call()' "$@"
fi
exec "$@"
SH
chmod +x "$work/rank0.sh"
# Prints "calls total note" for one run.
run() {
  local b=$1 steps=$2
  (cd "$work" && OMP_NUM_THREADS=1 CG_OUT="$work/cg" "$b/src/cli/tracefold" record -o "$work/t.tf" -- \
    mpirun -np 2 "$work/rank0.sh" "$b/tests/apps/app_omp_halo" "$steps" 1 >/dev/null 2>"$work/err")
  local calls total note
  calls=$("$b/src/cli/tracefold" expand "$work/t.tf" -r 0 | grep -c -E '^MPI_' || true)
  total=$(callgrind_annotate "$work/cg" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
  note=$(callgrind_annotate --inclusive=yes "$work/cg" 2>/dev/null |
    awk '!done && /thread_order.cpp:tracefold::record::note_thread_order/{gsub(",", "", $1); print $1; done = 1}')
  echo "$calls $total ${note:-0}"
}
printf '%-40s %14s %14s\n' build "per call" "noting order"
for b in "$@"; do
  B=$(realpath "$b")
  [[ -x $B/src/cli/tracefold && -x $B/tests/apps/app_omp_halo ]] || { echo "bench-thread-order: build $b first" >&2; exit 2; }
  read -r c1 t1 n1 < <(run "$B" "$STEPS1")
  read -r c2 t2 n2 < <(run "$B" "$STEPS2")
  awk -v b="$b" -v c="$((c2 - c1))" -v t="$((t2 - t1))" -v n="$((n2 - n1))" \
    'BEGIN{printf "%-40s %14.0f %14.0f\n", b, t / c, n / c}'
done
