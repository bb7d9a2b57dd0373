#!/usr/bin/env bash
# tracefold bench --lang conceptual on recorded programs:
#  - coll_sites (one Allreduce and one Barrier reached from two call sites):
#    the program has one REDUCE and one SYNCHRONIZE statement, the ring
#    exchange, and the step loop as FOR 5 REPETITIONS;
#  - comm_self (the last rank also runs collectives on MPI_COMM_SELF and on
#    a duplicate of it): written, with the world's collectives only (a
#    collective of one task moves nothing);
#  - master_worker (the master's resolved sources change from one receive
#    to the next, which this output cannot express): exit status 2, an
#    error naming the node, and no file written.
# tests/unit/conceptual_grammar_test.cpp checks the language's grammar.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

CHECKS=$((CHECKS + 1))
record coll_sites 4 5
if [[ $RC -ne 0 ]]; then
  bad "coll_sites: record exited $RC"; show_run "$DIR/err.txt"
else
  limited "$DIR/b.out" "$DIR/b.err" "$TF" bench --lang conceptual "$DIR/t.tf" -o "$DIR/b.ncptl"
  if [[ $LRC -ne 0 ]]; then
    bad "coll_sites: bench --lang conceptual exited $LRC"; show_run "$DIR/b.err"
  else
    f=$DIR/b.ncptl
    [[ $(grep -c 'REDUCE .* TO ALL TASKS' "$f") -eq 1 ]] || bad "coll_sites: want one REDUCE statement"
    [[ $(grep -c 'SYNCHRONIZE' "$f") -eq 1 ]] || bad "coll_sites: want one SYNCHRONIZE statement"
    grep -q '^FOR 5 REPETITIONS {' "$f" || bad "coll_sites: no step loop"
    grep -q 'ASYNCHRONOUSLY SENDS A 8 BYTE MESSAGE USING TAG 1 TO UNSUSPECTING TASK (t + 1) mod num_tasks' "$f" ||
      bad "coll_sites: no ring send"
    grep -q 'collective nodes combined' "$DIR/b.err" || bad "coll_sites: no summary"
    ok "coll_sites: $(wc -l <"$f") lines of coNCePTuaL"
  fi
fi

CHECKS=$((CHECKS + 1))
record comm_self 4 3
if [[ $RC -ne 0 ]]; then
  bad "comm_self: record exited $RC"; show_run "$DIR/err.txt"
else
  limited "$DIR/b.out" "$DIR/b.err" "$TF" bench --lang conceptual "$DIR/t.tf" -o "$DIR/b.ncptl"
  if [[ $LRC -ne 0 ]]; then
    bad "comm_self: bench --lang conceptual exited $LRC"; show_run "$DIR/b.err"
  else
    f=$DIR/b.ncptl
    # The world's MPI_Allreduce and final MPI_Reduce; none of the solo ones.
    [[ $(grep -c 'REDUCE' "$f") -eq 2 ]] || bad "comm_self: want two REDUCE statements: $(cat "$f")"
    [[ $(grep -c 'SYNCHRONIZE' "$f") -eq 1 ]] ||
      bad "comm_self: want the world barrier only as SYNCHRONIZE: $(cat "$f")"
    grep -q '^FOR 3 REPETITIONS {' "$f" || bad "comm_self: no step loop"
    ok "comm_self: $(wc -l <"$f") lines of coNCePTuaL"
  fi
fi

CHECKS=$((CHECKS + 1))
record master_worker 4 10
if [[ $RC -ne 0 ]]; then
  bad "master_worker: record exited $RC"; show_run "$DIR/err.txt"
else
  limited "$DIR/b.out" "$DIR/b.err" "$TF" bench --lang conceptual "$DIR/t.tf" -o "$DIR/b.ncptl"
  if [[ $LRC -ne 2 ]]; then
    bad "master_worker: bench --lang conceptual exited $LRC, want 2"
  elif ! grep -Eq 'error: node #[0-9]+ \(MPI_[A-Za-z]+ at .*\): ' "$DIR/b.err"; then
    bad "master_worker: the error names no node"; show_run "$DIR/b.err"
  elif [[ -e $DIR/b.ncptl || -e $DIR/b.ncptl.tmp ]]; then
    bad "master_worker: a file was written despite the error"
  else
    ok "master_worker: refused ($(cat "$DIR/b.err"))"
  fi
fi
finish
