#!/usr/bin/env bash
# A run that ends in MPI_Abort (rank 3 of 4, error code 3, half way through
# 20 steps): `tracefold record` passes the exit status through, writes no
# final trace but TRACE.partial/rank-R.tf files (always the aborting rank's;
# the others are killed by mpirun and save theirs from the SIGTERM handler),
# `tracefold merge TRACE.partial -o merged.tf` combines them, and
# `tracefold print` shows what happened before the abort.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

record abort 4 20
if [[ $RC -ne 3 ]]; then
  bad "abort: tracefold record exited $RC, expected the application's 3"
  show_run "$DIR/err.txt"
else
  ok "abort: tracefold record exited 3"
fi
if [[ -e $DIR/t.tf ]]; then
  bad "abort: a final trace was written although MPI_Finalize was never reached"
fi
P="$DIR/t.tf.partial"
if [[ ! -d $P ]]; then
  bad "abort: no $P/ directory"
  show_run "$DIR/err.txt"
  finish
fi
ls -l "$P"
if [[ ! -s $P/rank-3.tf ]]; then
  bad "abort: the aborting rank left no rank-3.tf"
fi
nparts=$(find "$P" -maxdepth 1 -name 'rank-*.tf' | wc -l)
echo "partial traces: $nparts of 4 ranks"
grep -q "partial traces are in" "$DIR/err.txt" || bad "abort: record did not point to the partial traces on stderr"

mrc=0
"$TF" merge "$P" -o "$WORK/merged.tf" >"$WORK/merge.txt" 2>&1 || mrc=$?
if [[ $mrc -ne 0 ]]; then
  bad "abort: tracefold merge $P exited $mrc: $(cat "$WORK/merge.txt")"
  finish
fi
ok "abort: merged: $(cat "$WORK/merge.txt")"
"$TF" print "$WORK/merged.tf" >"$WORK/print.txt"
for op in MPI_Init MPI_Sendrecv MPI_Allreduce MPI_Abort; do
  grep -q "^ *#[0-9]* $op at " "$WORK/print.txt" || bad "abort: print of the merged trace has no $op node"
done
grep -Eq '^ *#[0-9]+ MPI_Abort at .*ranks <0 3>$' "$WORK/print.txt" ||
  bad "abort: the MPI_Abort node should belong to rank 3 only"
grep -q 'code = 3 @ <0 3>' "$WORK/print.txt" || bad "abort: MPI_Abort's error code 3 is not in the trace"
# Rank 3 made 11 Sendrecvs (steps 0..10) and 10 Allreduces before aborting.
"$TF" expand "$WORK/merged.tf" -r 3 >"$WORK/rank3.txt"
n_sr=$(grep -c '^MPI_Sendrecv ' "$WORK/rank3.txt" || true)
n_ar=$(grep -c '^MPI_Allreduce ' "$WORK/rank3.txt" || true)
last=$(grep '^MPI_' "$WORK/rank3.txt" | tail -n 1 | cut -d' ' -f1)
if [[ $n_sr -ne 11 || $n_ar -ne 10 || $last != MPI_Abort ]]; then
  bad "abort: rank 3 expands to $n_sr Sendrecv, $n_ar Allreduce, last $last (want 11, 10, MPI_Abort)"
else
  ok "abort: rank 3 expands to 11 Sendrecv, 10 Allreduce, then MPI_Abort"
fi
# When every rank saved its part, the merged trace equals the raw logs.
if [[ $nparts -eq 4 ]]; then
  d=$("$TF" diff "$DIR/raw" "$WORK/merged.tf" 2>&1) || bad "abort: merged partial trace differs from the raw logs: $d"
  ok "abort: merged partial trace vs raw logs: $d"
fi
finish
