#!/usr/bin/env bash
# Replay refuses, before its first MPI call, a trace it cannot replay
# without hanging (issue 18): collectives whose order differs between the
# members of a communicator (an MPI_Gatherv without its `count` used to leave
# rank 0 in Gatherv and rank 1 in Scan forever), traces of programs that
# called MPI from several threads in one stream per rank, and threads whose
# collective calls on one communicator the trace cannot order. Every run is
# time-limited: a hang fails.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
RUN_TIMEOUT=30

# A text trace of WORLD ranks (default 2): MPI_Init, then NODES, then MPI_Finalize.
trace() {
  local init=$1 n=$2 body=$3
  printf 'tracefold-trace 2\nworld %d\nlossy -\nsites 1\nsite 0 app+0x10\ncomms 0\nnodes %d\n' "${WORLD:-2}" $((n + 2))
  printf 'node 0 %s site=0 ranks=*\n  count 1 @ *\n%s' "$init" "$body"
  printf 'node %d MPI_Finalize site=0 ranks=*\n  count 1 @ *\nend\n' $((n + 1))
}
COLL='  field comm 0 @ *\n  field count 4 @ *\n'

# 1. Rank 0 in Gatherv, rank 1 in Scan.
trace MPI_Init 2 "$(printf "node 1 MPI_Gatherv site=0 ranks=<0 0>\n  count 1 @ *\n${COLL}  field root 0 @ *\nnode 2 MPI_Scan site=0 ranks=<0 1>\n  count 1 @ *\n${COLL}")
" >mismatch.trace
CHECKS=$((CHECKS + 1))
limited out1 err1 "$MPIRUN" -np 2 "$TF" replay mismatch.trace
if [[ $LRC -ne 2 ]]; then
  bad "mismatched collectives: exit $LRC, expected 2"; show_run out1 err1
elif ! grep -q "communicator 0 (ranks <1 0 2 1>), collective call 1: rank 0 calls node #1 (MPI_Gatherv at [^)]*).*rank 1 calls node #2 (MPI_Scan at [^)]*)" err1; then
  bad "mismatched collectives: the error does not name both nodes"; show_run err1
fi

# 2. The same Gatherv without its count field: refused as incomplete.
trace MPI_Init 1 "$(printf "node 1 MPI_Gatherv site=0 ranks=*\n  count 1 @ *\n  field comm 0 @ *\n  field root 0 @ *\n")
" >nocount.trace
CHECKS=$((CHECKS + 1))
limited out2 err2 "$MPIRUN" -np 2 "$TF" replay nocount.trace
if [[ $LRC -ne 2 ]] || ! grep -q "nocount.trace:10: node 1: MPI_Gatherv needs field 'count'" err2; then
  bad "Gatherv without count: exit $LRC, expected 2 naming FILE:LINE and the node"; show_run out2 err2
fi

# 3. Rank 1 makes one Barrier less than rank 0.
trace MPI_Init 1 "$(printf "node 1 MPI_Barrier site=0 ranks=*\n  loop 0 members 1 @ *\n  loop 0 iters 2 @ <0 0> ; 1 @ <0 1>\n  count 1*2 @ <0 0> ; 1 @ <0 1>\n  field comm 0*2 @ <0 0> ; 0 @ <0 1>\n")
" >fewer.trace
CHECKS=$((CHECKS + 1))
limited out3 err3 "$MPIRUN" -np 2 "$TF" replay fewer.trace
if [[ $LRC -ne 2 ]] || ! grep -q "rank 0 makes 2 collective calls, rank 1 only 1" err3; then
  bad "missing Barrier: exit $LRC, expected 2 naming the ranks"; show_run out3 err3
fi

# 3b. Four ranks; ranks 2 and 3 make one Barrier less. Each process checks
# its own rank: the lowest that fails (2) reports, once, for all.
WORLD=4 trace MPI_Init 1 "$(printf "node 1 MPI_Barrier site=0 ranks=*\n  loop 0 members 1 @ *\n  loop 0 iters 2 @ <1 0 2 1> ; 1 @ <1 2 2 1>\n  count 1*2 @ <1 0 2 1> ; 1 @ <1 2 2 1>\n  field comm 0*2 @ <1 0 2 1> ; 0 @ <1 2 2 1>\n")
" >fewer4.trace
CHECKS=$((CHECKS + 1))
limited out3b err3b "$MPIRUN" -np 4 "$TF" replay fewer4.trace
if [[ $LRC -ne 2 ]] || [[ $(grep -c "rank 0 makes 2 collective calls, rank 2 only 1" err3b) -ne 1 ]] ||
  grep -q "rank 3 only" err3b; then
  bad "missing Barrier on ranks 2 and 3: exit $LRC, expected 2 and one message naming rank 2"; show_run out3b err3b
fi

# 4. MPI_Init_thread without a recorded thread level: refused, unless
# --single-thread says one thread called MPI.
trace MPI_Init_thread 1 "$(printf "node 1 MPI_Barrier site=0 ranks=*\n  loop 0 members 1 @ *\n  loop 0 iters 3 @ *\n  count 1*3 @ *\n  field comm 0*3 @ *\n")
" >thread.trace
CHECKS=$((CHECKS + 1))
limited out4 err4 "$MPIRUN" -np 2 "$TF" replay thread.trace
if [[ $LRC -ne 2 ]] || ! grep -q "MPI_Init_thread.*--single-thread" err4; then
  bad "MPI_Init_thread trace: exit $LRC, expected 2 with the hint"; show_run out4 err4
fi
CHECKS=$((CHECKS + 1))
limited out5 err5 "$MPIRUN" -np 2 "$TF" replay --single-thread thread.trace
if [[ $LRC -ne 0 ]] || ! grep -q "^replay: 2 ranks, .* 6 MPI calls" out5; then
  bad "--single-thread: exit $LRC, expected a replay of 6 Barrier calls"; show_run out5 err5
fi
# 4b. The same trace with the thread level its recorder stores on
# MPI_Init_thread (FUNNELED): a recorder that gives each thread its own
# stream, so one stream is one thread; replayed without --single-thread.
sed '0,/^  count 1 @ \*$/s//  count 1 @ *\n  field provided 1 @ *\n  field required 1 @ */' thread.trace >level.trace
CHECKS=$((CHECKS + 1))
limited out5b err5b "$MPIRUN" -np 2 "$TF" replay level.trace
if [[ $LRC -ne 0 ]] || ! grep -q "^replay: 2 ranks, .* 6 MPI calls" out5b; then
  bad "MPI_Init_thread trace with its level: exit $LRC, expected a replay of 6 Barrier calls"
  show_run out5b err5b
fi

# 5. A real MPI_THREAD_MULTIPLE program (tests/apps/threads.c): its trace has
# three threads per rank, which replay runs on three threads
# (replay_threads.sh), but not probabilistically: refused at once.
record threads 2 50
CHECKS=$((CHECKS + 1))
if [[ $RC -ne 0 ]]; then
  bad "recording app_threads failed ($RC)"; show_run "$DIR/err.txt"
else
  limited out6 err6 "$MPIRUN" -np 2 "$TF" replay --probabilistic "$DIR/t.tf"
  if [[ $LRC -ne 2 ]] || ! grep -q "3 threads per rank called MPI; probabilistic replay" err6; then
    bad "app_threads trace, probabilistic: exit $LRC, expected 2 (refused, not hung)"
    show_run out6 err6
  fi
fi

# 6. Two threads make collective calls on MPI_COMM_WORLD (call_paths: the
# main thread before and after a second thread's MPI_Allreduces): the trace
# does not order them across threads, so the replay refuses at once.
record call_paths 2 3
CHECKS=$((CHECKS + 1))
if [[ $RC -ne 0 ]]; then
  bad "recording app_call_paths failed ($RC)"; show_run "$DIR/err.txt"
elif ! grep -q "^threads 2$" "$DIR/t.tf"; then
  echo "call_paths ran with one thread calling MPI (no MPI_THREAD_SERIALIZED): case 6 not run"
else
  limited out7 err7 "$MPIRUN" -np 2 "$TF" replay "$DIR/t.tf"
  if [[ $LRC -ne 2 ]] ||
    [[ $(grep -c "threads 0 and 1 both make collective calls on communicator 0" err7) -ne 1 ]]; then
    bad "call_paths trace: exit $LRC, expected 2 and one message"; show_run out7 err7
  fi
fi
finish
