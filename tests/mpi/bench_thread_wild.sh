#!/usr/bin/env bash
# The benchmark passes on every thread's stream (docs/bench.md "Threads"):
# thread_wild's second thread of rank 0 receives from MPI_ANY_SOURCE with
# statuses (the trace records each match), and the second threads meet in
# a barrier rank 0 calls from a line of its own. `tracefold bench` names
# every recorded source of thread 1 (no MPI_ANY_SOURCE left) and combines
# the two barrier lines; the benchmark compiles cleanly, runs, and its own
# trace is the program's under `diff --resolved`, rank by rank and thread
# by thread. `tracefold resolve --align` writes the same resolution.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
MPICC=${TRACEFOLD_MPICC:-mpicc}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout 120 "$TF" record -o w.tf -- "$MPIRUN" -np 3 "$APPS/app_thread_wild" 6 > w.out 2> w.err ||
  { cat w.err >&2; fail "recording thread_wild"; }
if grep -q "not provided" w.out; then
  echo "this MPI does not provide MPI_THREAD_MULTIPLE"; exit 77
fi
"$TF" print w.tf > w.txt
grep -q "2 threads per rank" w.txt || fail "not 2 threads per rank"
grep -A2 "MPI_Recv at gather_thread" w.txt | grep -q "peer (relative) = any" ||
  fail "thread 1's receive is not a wildcard"
grep -A2 "MPI_Recv at gather_thread" w.txt | grep -q "src (relative)" ||
  fail "thread 1's wildcard has no recorded match"

"$TF" bench w.tf -o w.c 2> w.gen || { cat w.gen >&2; fail "generation"; }
cat w.gen
grep -q "(12 wildcard calls resolved from recorded matches, 0 chosen by the traversal; 1 collective nodes combined)" w.gen ||
  fail "bench did not resolve thread 1's 12 wildcard receives and combine its barriers"
! grep -q MPI_ANY_SOURCE w.c || fail "the benchmark still receives from MPI_ANY_SOURCE"
"$MPICC" -std=c11 -Wall -Wextra -Werror -O1 w.c -o w-bench -lpthread 2> w.cc ||
  { head -n 20 w.cc >&2; fail "the benchmark does not compile cleanly"; }
timeout 60 "$TF" record -o b.tf -- "$MPIRUN" -np 3 ./w-bench > b.out 2> b.err ||
  { cat b.out b.err >&2; fail "running the benchmark"; }
grep -q "^bench: 3 ranks, wall time" b.out || fail "no wall time"
"$TF" diff --ignore-callsites --resolved w.tf b.tf | tee w.diff
grep -qx "same: 3 ranks x 2 threads" w.diff || fail "the benchmark's trace differs"

"$TF" resolve --align w.tf -o r.tf 2> r.err || { cat r.err >&2; fail "resolve --align"; }
grep -q "12 wildcard calls from recorded matches" r.err || fail "resolve: $(cat r.err)"
"$TF" print r.tf | grep -q "any" && fail "the resolved trace still has a wildcard"
"$TF" diff --ignore-callsites b.tf r.tf > r.diff || { cat r.diff >&2; fail "resolve and the benchmark differ"; }
echo "ok: thread 1's wildcards resolved and its barriers aligned; the benchmark re-traces equal"
