#!/usr/bin/env bash
# Tracing must not change what a program does: for several programs the
# stdout and the exit status of `tracefold record -- mpirun ...` equal those
# of the plain `mpirun ...` run (including a run that ends in MPI_Abort
# with error code 3, and a Fortran program).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

same_run() {
  local name=$1 np=$2 steps=$3 want_rc=$4
  local what="$name at $np ranks, $steps steps"
  CHECKS=$((CHECKS + 1))
  plain "$name" "$np" "$steps"
  record "$name" "$np" "$steps"
  if [[ $PRC -ne $want_rc ]]; then
    bad "$what: the plain run exited $PRC, expected $want_rc"
    show_run "$PDIR/plain.txt" "$PDIR/plain-err.txt"
  fi
  if [[ $RC -ne $PRC ]]; then
    bad "$what: exit status $PRC without tracing, $RC with tracing"
    show_run "$DIR/err.txt"
  fi
  if ! cmp -s "$PDIR/plain.txt" "$DIR/out.txt"; then
    bad "$what: stdout differs with tracing"
    diff "$PDIR/plain.txt" "$DIR/out.txt" | head -n 10 >&2 || true
    return 0
  fi
  if [[ $want_rc -eq 0 && ! -s $PDIR/plain.txt ]]; then
    bad "$what: no output at all"
    return 0
  fi
  ok "$what: same stdout ($(head -c 60 "$PDIR/plain.txt" | head -n 1)...), exit status $RC"
}

same_run stencil2d_periodic 4 50 0
same_run stencil2d_nonperiodic 6 50 0
same_run pop 6 30 0
same_run master_worker 4 40 0
same_run comms 6 10 0
same_run nbc 4 20 0
same_run stencil_mpif 4 30 0
same_run abort 4 20 3
finish
