#!/usr/bin/env bash
# Folding makes the trace of a regular (SPMD, fixed-pattern) program
# independent of its step count: recorded at S and 4*S steps, the trace
# must have the same number of nodes. (Programs whose pattern depends on
# run-time events -- nbc's Test polling, master_worker's ANY_SOURCE farm,
# pop's step-dependent branches -- are not checked here.)
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

same_nodes() {
  local name=$1 np=$2 steps=$3
  local what="$name at $np ranks" n1 n4 b1 b4
  CHECKS=$((CHECKS + 1))
  record "$name" "$np" "$steps"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what, $steps steps: record exited $RC, no trace"
    show_run "$DIR/err.txt"
    return 0
  fi
  n1=$(awk '/^nodes /{print $2}' "$DIR/t.tf")
  b1=$(stat -c %s "$DIR/t.tf")
  record "$name" "$np" $((4 * steps))
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what, $((4 * steps)) steps: record exited $RC, no trace"
    show_run "$DIR/err.txt"
    return 0
  fi
  n4=$(awk '/^nodes /{print $2}' "$DIR/t.tf")
  b4=$(stat -c %s "$DIR/t.tf")
  if [[ $n1 -ne $n4 ]]; then
    bad "$what: $n1 nodes ($b1 B) at $steps steps but $n4 nodes ($b4 B) at $((4 * steps)) steps"
  else
    ok "$what: $n1 nodes at $steps and $((4 * steps)) steps ($b1 B, $b4 B)"
  fi
}

same_nodes ring 4 20
same_nodes stencil2d_periodic 4 20
same_nodes stencil2d_nonperiodic 6 20
same_nodes stencil3d 8 10
same_nodes stencil_cxx 4 20
same_nodes cg 4 5
same_nodes ft 4 10
same_nodes lu 6 6
same_nodes comms 6 10
same_nodes persistent 5 20
same_nodes stencil_mpif 4 20
same_nodes collectives_usempi 4 10
# Sweep3D settles after its first steps (41 nodes at 5 steps, 52 from 10 on).
same_nodes sweep3d 4 10
same_nodes sweep3d 6 10
finish
