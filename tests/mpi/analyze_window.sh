#!/usr/bin/env bash
# The parallel analysis's message replay keeps a window of messages in
# flight and waits, inside the walk, for the receives the recorded run had
# completed by then. With a window of 1 (TRACEFOLD_ANALYZE_WINDOW=1) it
# waits at every event where it can: on programs whose receives complete in
# other orders than they were posted (blocking wavefront pipelines,
# wildcard receives completed by Waitany/Waitsome, Sendrecv_replace, a
# halo of Irecv/Isend/Waitall) it must neither hang nor pair other
# messages than the serial analysis: the reports are compared byte for
# byte, and the walk must really have waited (the phase counts).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
export OMPI_MCA_mpi_yield_when_idle=1
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

windowed() {
  local app=$1 np=$2 steps=$3 d="$WORK/$1"
  mkdir -p "$d"
  CHECKS=$((CHECKS + 1))
  limited "$d/out.txt" "$d/err.txt" "$TF" record --timeline -o "$d/t.tf" -- \
    "$MPIRUN" -np "$np" "$APPS/app_$app" "$steps"
  if [[ $LRC -ne 0 ]]; then
    bad "$app: recording exited $LRC"
    show_run "$d/err.txt"
    return
  fi
  if ! "$TF" analyze "$d/t.tf" -o "$d/serial.json" 2>"$d/serial.err"; then
    bad "$app: serial analysis failed"
    show_run "$d/serial.err"
    return
  fi
  limited "$d/par.txt" "$d/par.err" env TRACEFOLD_ANALYZE_WINDOW=1 TRACEFOLD_ANALYZE_PHASES=1 \
    "$MPIRUN" -np "$np" "$TF" analyze "$d/t.tf" -o "$d/par.json"
  local waits
  waits=$(sed -n 's/^tracefold: phase count forward replay waits: //p' "$d/par.err")
  if [[ $LRC -ne 0 ]]; then
    bad "$app: parallel analysis with a window of 1 exited $LRC"
    show_run "$d/par.err"
  elif ! grep -q "on $np ranks written to" "$d/par.err"; then
    bad "$app: not the parallel analysis: $(head -n 2 "$d/par.err")"
  elif ! cmp -s "$d/serial.json" "$d/par.json"; then
    bad "$app: window 1: JSON differs: $(diff "$d/serial.json" "$d/par.json" | head -n 6)"
  elif [[ -z $waits || $waits -le 0 ]]; then
    bad "$app: the replay with a window of 1 never waited inside the walk (count '$waits')"
  else
    ok "$app ($np ranks): window 1 ($waits waits in the walk): JSON identical to serial"
  fi
}

windowed sweep3d 4 3
windowed misc_p2p 4 4
windowed stencil2d_nonperiodic 4 6
finish
