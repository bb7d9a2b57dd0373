#!/usr/bin/env bash
# Replay of traces with threads (docs/replay.md "Threads"): each thread's
# stream is replayed by a thread of its own, at the recorded thread level
# (MPI_THREAD_MULTIPLE for a trace without one).
# Recording the replay gives the same calls per location (thread t of rank
# r) as the program: the threads program (two pthreads per rank, each on its
# own communicator, which the main thread makes and frees) and omp_halo
# (OpenMP threads of a periodic ring, all on MPI_COMM_WORLD, tag = thread).
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMP_WAIT_POLICY=passive

# fixed_point NAME NP THREADS ARGS...: record the program, record its
# replay, compare location by location.
fixed_point() {
  local name=$1 np=$2 nt=$3; shift 3
  "$TF" record -o $name.tf -- "$MPIRUN" -np $np "$APPS/app_$name" "$@" > $name.out 2> $name.err ||
    { cat $name.err >&2; fail "$name: recording the program"; }
  if grep -q "not provided" $name.out; then
    echo "this MPI does not provide MPI_THREAD_MULTIPLE"; exit 77
  fi
  "$TF" print $name.tf | grep -q "$nt threads per rank" || fail "$name: not $nt threads per rank"
  "$TF" record -o $name-r.tf -- "$MPIRUN" -np $np "$TF" replay $name.tf > $name-r.out 2> $name-r.err ||
    { cat $name-r.out $name-r.err >&2; fail "$name: replaying"; }
  grep -Eq "^replay: $np ranks x $nt threads, wall [0-9.]+ s, [0-9]+ MPI calls" $name-r.out ||
    { cat $name-r.out >&2; fail "$name: no summary line"; }
  # The level is recorded (MULTIPLE): asked for again, without a note; the
  # diff below compares the replay's recorded level with the program's.
  grep -q "replayed under MPI_THREAD_MULTIPLE" $name-r.err && fail "$name: a note on a recorded level"
  # Call sites are the replayer's; poll outcomes and wildcard matches
  # follow timing, which threads change.
  "$TF" diff --ignore-callsites --ignore-polls --ignore-matched $name.tf $name-r.tf |
    tee $name.diff
  grep -qx "same: $np ranks x $nt threads" $name.diff || fail "$name: the replay differs"
}

fixed_point threads 2 3 100
# The trace of an older recorder, without the level: replayed under
# MPI_THREAD_MULTIPLE, and rank 0 says so.
"$TF" convert threads.tf --text -o - | grep -v "^  field \(provided\|required\) " > old.trace
"$TF" print old.trace | grep -q "thread level" && fail "the older trace still has its level"
"$MPIRUN" -np 2 "$TF" replay old.trace > old.out 2> old.err || { cat old.err >&2; fail "old trace"; }
grep -q "does not record the thread level its program asked for, so they are replayed under MPI_THREAD_MULTIPLE" old.err ||
  { cat old.err >&2; fail "old trace: the thread level is not said"; }
if [[ -x $APPS/app_omp_halo ]]; then
  fixed_point omp_halo 2 3 20 3
else
  echo "no OpenMP: app_omp_halo was not built, only the threads program was replayed"
fi

