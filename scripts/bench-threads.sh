#!/usr/bin/env bash
# Recording cost per call with 1 and with THREADS threads calling MPI at
# once (MPI_THREAD_MULTIPLE, bench/mpi/thread_calls.c: one rank, CALLS
# MPI_Sendrecv to MPI_PROC_NULL per thread). Two measures, side by side in
# one run:
#   wall: the slowest thread's time for its calls, traced minus untraced,
#     over its calls (median of REPEATS runs): the latency a thread sees,
#     lock contention included. With more threads than cores it also holds
#     the time threads wait for a core: read it with the core count;
#   instructions: every instruction executed inside libtracefold.so
#     (callgrind, all threads) with CALLS calls per thread minus with none,
#     over all calls: the work per call, without waiting (callgrind runs
#     one thread at a time, so it sees no contention).
#   futex calls: the futex system calls of the THREADS-thread run (strace
#     -f -c), traced minus untraced: how often a thread found a lock of
#     the recorder taken and slept on it, or woke one that did. Unlike the
#     wall time it does not depend on free cores or the machine's load.
# The ratio THREADS/1 of the first two is printed; the target is <= 1.5.
#   BUILD_DIR=build CALLS=20000 THREADS=4 REPEATS=3 scripts/bench-threads.sh
# Needs valgrind for the instruction counts and strace for the futex
# calls (each skipped without it).
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BUILD_DIR="${BUILD_DIR:-build}"
CALLS="${CALLS:-20000}"
THREADS="${THREADS:-4}"
REPEATS="${REPEATS:-3}"
[[ -x $BUILD_DIR/src/cli/tracefold ]] || { echo "bench-threads: build first ($BUILD_DIR)" >&2; exit 2; }
TF=$(realpath "$BUILD_DIR/src/cli/tracefold")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpicc -O2 -g bench/mpi/thread_calls.c -o "$work/thread_calls" -lpthread
seconds() {  # TRACED CALLS THREADS [WRAPPER...] -> seconds of the slowest thread
  local traced=$1 calls=$2 threads=$3
  shift 3
  local cmd=(mpirun -np 1 "$@" "$work/thread_calls" "$calls" "$threads")
  if [[ $traced == yes ]]; then cmd=("$TF" record -o "$work/t.tf" -- "${cmd[@]}"); fi
  (cd "$work" && "${cmd[@]}" 2>"$work/err") | awk '$1 == "seconds" { print $2 }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
wall() {  # THREADS -> recording ns per call, as a thread sees it
  local p t
  p=$(for ((i = 0; i < REPEATS; ++i)); do seconds no "$CALLS" "$1"; done | median)
  t=$(for ((i = 0; i < REPEATS; ++i)); do seconds yes "$CALLS" "$1"; done | median)
  awk -v p="$p" -v t="$t" -v n="$CALLS" 'BEGIN { printf "%.0f\n", (t - p) * 1e9 / n }'
}
in_lib() {  # CALLGRIND FILE -> instructions in libtracefold.so
  callgrind_annotate --threshold=100 "$1" 2>/dev/null |
    awk '/\[.*libtracefold\.so\]$/ { gsub(",", "", $1); s += $1 } END { printf "%d\n", s }'
}
instructions() {  # THREADS -> instructions per call in libtracefold.so
  local a a0
  seconds yes "$CALLS" "$1" valgrind -q --tool=callgrind --callgrind-out-file="$work/cg.n" >/dev/null
  seconds yes 0 "$1" valgrind -q --tool=callgrind --callgrind-out-file="$work/cg.0" >/dev/null
  a=$(in_lib "$work/cg.n")
  a0=$(in_lib "$work/cg.0")
  awk -v a="$a" -v a0="$a0" -v n=$((CALLS * $1)) 'BEGIN { printf "%.0f\n", (a - a0) / n }'
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc), $CALLS calls per thread"
w1=$(wall 1)
wn=$(wall "$THREADS")
awk -v a="$w1" -v b="$wn" -v t="$THREADS" \
  'BEGIN { printf "wall, ns per call: 1 thread %d, %d threads %d, ratio %.2f\n", a, t, b, b / a }'
if command -v valgrind >/dev/null; then
  i1=$(instructions 1)
  in=$(instructions "$THREADS")
  awk -v a="$i1" -v b="$in" -v t="$THREADS" \
    'BEGIN { printf "instructions per call: 1 thread %d, %d threads %d, ratio %.2f\n", a, t, b, b / a }'
fi
futexes() {  # TRACED THREADS -> futex system calls of the whole run, median of REPEATS
  for ((i = 0; i < REPEATS; ++i)); do
    seconds "$1" "$CALLS" "$2" strace -f -c -e trace=futex -o "$work/st" >/dev/null
    awk '$NF == "total" { print $4 }' "$work/st"
  done | median
}
if command -v strace >/dev/null; then
  f0=$(futexes no "$THREADS")
  f1=$(futexes yes "$THREADS")
  echo "futex calls, $THREADS threads: untraced $f0, traced $f1, recorder's $((f1 - f0))"
fi
