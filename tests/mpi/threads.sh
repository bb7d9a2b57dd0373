#!/usr/bin/env bash
# MPI_THREAD_MULTIPLE: two threads per rank call MPI at the same time. Each
# thread that calls MPI has its own stream in the trace (docs/format.md "The
# thread dimension"): the trace is lossless per thread (the raw log's
# events of each thread, in order), two recordings give the same trace,
# the program's output does not change, the thread level is recorded, and
# coNCePTuaL output refuses it with a message naming the threads (its
# replay: replay_threads.sh, its C benchmark: bench_threads.sh).
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$MPIRUN" -np 2 "$APPS/app_threads" 200 > plain.txt
"$TF" record -o t.tf --raw-log raw -- "$MPIRUN" -np 2 "$APPS/app_threads" 200 > traced.txt 2> err.txt
cmp plain.txt traced.txt
if grep -q "not provided" plain.txt; then
  echo "this MPI does not provide MPI_THREAD_MULTIPLE: only the unchanged output was checked"
  exit 77
fi
if grep -q "tracing is off" err.txt; then cat err.txt >&2; exit 1; fi
# Lossless per thread: every location against its thread's raw-log events.
"$TF" diff raw t.tf | tee diff.txt
grep -qx "same: 2 ranks x 3 threads" diff.txt || fail "expected 2 ranks x 3 threads"
# Each worker: 200 Sendrecvs and 200 Barriers on its own communicator.
for r in 0 1; do
  for t in 1 2; do
    "$TF" expand t.tf -r $r -t $t > e.txt
    [[ $(grep -c "^MPI_Sendrecv " e.txt) -eq 200 ]] || fail "rank $r thread $t: not 200 Sendrecvs"
    [[ $(grep -c "^MPI_Barrier " e.txt) -eq 200 ]] || fail "rank $r thread $t: not 200 Barriers"
    # One tag per thread: a thread's stream holds no other thread's calls.
    [[ $(grep -o " tag=[0-9]*" e.txt | sort -u | wc -l) -eq 1 ]] || fail "rank $r thread $t: mixed tags"
  done
  "$TF" expand t.tf -r $r -t 0 | grep -q "^MPI_Sendrecv " && fail "rank $r thread 0 has a worker's call"
done
# Alike threads fold across ranks: as many nodes as one rank's three threads.
"$TF" print t.tf > print.txt
grep -q "3 threads per rank" print.txt || fail "print does not show the threads"
grep -q "thread 1 ranks" print.txt || fail "print does not name thread 1"
"$TF" stats t.tf > stats.txt
head -1 stats.txt | grep -q "2 ranks x 3 threads" || fail "stats does not show the threads"
# The thread level asked for and given, as the program itself saw them.
level="thread level: required MPI_THREAD_MULTIPLE, provided MPI_THREAD_MULTIPLE"
grep -qx "$level" print.txt || fail "print does not show '$level'"
grep -qx "$level" stats.txt || fail "stats does not show '$level'"
# Recorded again: the same trace, whichever worker called MPI first.
"$TF" record -o t2.tf -- "$MPIRUN" -np 2 "$APPS/app_threads" 200 > /dev/null 2>&1
"$TF" diff t.tf t2.tf
# coNCePTuaL has one thread per rank: refused with a reason (the C
# benchmark runs a thread per stream: bench_threads.sh).
if "$TF" bench --lang conceptual t.tf -o b.ncptl 2> bench.txt; then
  fail "bench --lang conceptual took a trace with threads"
fi
grep -q "3 threads per rank called MPI" bench.txt || { cat bench.txt >&2; fail "bench's refusal"; }
