#!/usr/bin/env bash
# Runs that never reach MPI_Finalize keep what was recorded:
#  - segv: rank 3 of 4 dies of SIGSEGV after its 11th Sendrecv; its signal
#    handler saves TRACE.partial/rank-3.tf, the others save theirs when the
#    launcher terminates them;
#  - exit: every rank calls exit(4) after its 11th Sendrecv; the atexit
#    handler saves the part of each rank that gets there before the
#    launcher, seeing the first exit, kills the rest (SIGTERM, SIGKILL one
#    second later: a rank descheduled that long on 2 cores loses its part,
#    so not every rank is required here).
# In both, `tracefold record` exits as the untraced run does, and
# `tracefold merge` turns the parts into a trace in which each rank that
# saved its part at the crash point expands to 11 Sendrecv and 10
# Allreduce.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

HYDRA=no
is_hydra && HYDRA=yes
for mode in segv exit; do
  plain crash 4 20 "$mode"
  record crash 4 20 "$mode"
  if [[ $PRC -eq 0 || $PRC -eq 124 ]]; then
    bad "$mode: the untraced run exited $PRC; expected a failure status"
    show_run "$PDIR/plain-err.txt"
  fi
  if [[ $RC -ne $PRC && $mode == exit && $HYDRA == yes && " 4 9 137 " == *" $RC "* && " 4 9 137 " == *" $PRC "* ]]; then
    # MPICH's Hydra SIGKILLs every rank as soon as one has exited with an
    # error, and reports the kill (9) or the exit(4) depending on which it
    # saw first -- for the untraced run too (seen: traced 9 / untraced 4 and
    # traced 4 / untraced 9). Ranks still saving their part in the exit
    # handler die of the kill.
    ok "$mode: traced run exited $RC, untraced $PRC (Hydra: exit(4) or its kill of the other ranks)"
  elif [[ $RC -ne $PRC ]]; then
    bad "$mode: tracefold record exited $RC, the untraced run $PRC"
    show_run "$DIR/err.txt"
  else
    ok "$mode: traced and untraced runs both exited $RC"
  fi
  [[ -e $DIR/t.tf ]] && bad "$mode: a final trace was written although MPI_Finalize was never reached"
  P="$DIR/t.tf.partial"
  nparts=$(find "$P" -maxdepth 1 -name 'rank-*.tf' 2>/dev/null | wc -l)
  echo "$mode: partial traces of $nparts of 4 ranks"
  # The ranks that saved their part at the crash point, by their own word.
  if [[ $mode == segv ]]; then
    at_crash=$(sed -n 's/^tracefold: rank \([0-9]*\): killed by signal 11 .*/\1/p' "$DIR/err.txt")
    [[ $at_crash == 3 ]] || bad "$mode: want one line on stderr saying rank 3 was killed by signal 11, got '$at_crash'"
  else
    at_crash=$(sed -n 's/^tracefold: rank \([0-9]*\): the program exited without MPI_Finalize.*/\1/p' "$DIR/err.txt")
    [[ -n $at_crash ]] || bad "$mode: no rank said on stderr that the program exited without MPI_Finalize"
  fi
  grep -q "partial traces are in" "$DIR/err.txt" || bad "$mode: record did not point to the partial traces"
  mrc=0
  "$TF" merge "$P" -o "$WORK/$mode.tf" >"$WORK/merge.txt" 2>&1 || mrc=$?
  if [[ $mrc -ne 0 ]]; then
    bad "$mode: tracefold merge exited $mrc: $(cat "$WORK/merge.txt")"
    show_run "$DIR/err.txt"
    continue
  fi
  for r in $at_crash; do
    [[ -s $P/rank-$r.tf ]] || bad "$mode: rank $r said it saved its part, but $P/rank-$r.tf is missing"
    "$TF" expand "$WORK/$mode.tf" -r "$r" >"$WORK/rank.txt"
    n_sr=$(grep -c '^MPI_Sendrecv ' "$WORK/rank.txt" || true)
    n_ar=$(grep -c '^MPI_Allreduce ' "$WORK/rank.txt" || true)
    if [[ $n_sr -ne 11 || $n_ar -ne 10 ]]; then
      bad "$mode: rank $r expands to $n_sr Sendrecv and $n_ar Allreduce (want 11 and 10)"
    else
      ok "$mode: rank $r expands to 11 Sendrecv and 10 Allreduce"
    fi
  done
  # Every rank's part there: the merged trace holds exactly the raw logs.
  if [[ $nparts -eq 4 ]]; then
    d=$("$TF" diff "$DIR/raw" "$WORK/$mode.tf" 2>&1) || bad "$mode: merged partial trace differs from the raw logs: $d"
  fi
done
finish
