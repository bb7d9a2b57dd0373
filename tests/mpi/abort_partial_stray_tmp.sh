#!/usr/bin/env bash
# A rank that mpirun kills (SIGKILL after SIGTERM) while it is saving its
# partial trace leaves TRACE.partial/rank-R.tf.tmp.PID behind, often empty
# (seen in about 1 of 10 runs of abort_partial.sh). `tracefold merge
# TRACE.partial` must still merge the complete rank-R.tf files instead of
# failing on the leftover. This reproduces that state deterministically:
# a real MPI_Abort run, plus an empty leftover next to its partial traces.
# Which ranks saved a part depends on the launcher: Open MPI's mpirun sends
# the others SIGTERM first (they save), MPICH's Hydra SIGKILLs them at once
# (only the aborting rank saves), so the ranks the merge must name as
# missing are read from the directory.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

record abort 4 20
P="$DIR/t.tf.partial"
if [[ $RC -ne 3 || ! -s $P/rank-3.tf ]]; then
  bad "abort: record exited $RC (want 3) or left no $P/rank-3.tf"
  show_run "$DIR/err.txt"
  finish
fi
find "$P" -name '*.tmp.*' -delete
: >"$P/rank-1.tf.tmp.12345"

# missing_line: the merge's line for the ranks without rank-R.tf in $P
# (empty when all four are there).
missing_line() {
  local r ranks=() list
  for r in 0 1 2 3; do [[ -s $P/rank-$r.tf ]] || ranks+=("$r"); done
  ((${#ranks[@]})) || return 0
  list=$(IFS=,; echo "${ranks[*]}")
  echo "merge: $P has no trace of ${#ranks[@]} of 4 ranks ($list): they saved nothing before they stopped"
}

echo "partial traces: $(cd "$P" && ls rank-*.tf | tr '\n' ' ')"
want=$(missing_line)
mrc=0
"$TF" merge "$P" -o "$WORK/merged.tf" >"$WORK/merge.txt" 2>&1 || mrc=$?
if [[ $mrc -ne 0 ]]; then
  bad "merge of a partial directory with a leftover rank-1.tf.tmp.12345 exited $mrc: $(cat "$WORK/merge.txt")"
else
  ok "merge ignored the leftover temporary file: $(cat "$WORK/merge.txt")"
  "$TF" print "$WORK/merged.tf" | grep -q ' MPI_Abort at ' || bad "merged trace has no MPI_Abort"
  grep -q "merge: skipped $P/rank-1.tf.tmp.12345 (0 bytes): a rank was stopped while saving it" \
    "$WORK/merge.txt" || bad "merge did not report the leftover temporary: $(cat "$WORK/merge.txt")"
  if [[ -z $want ]]; then
    grep -q 'has no trace of' "$WORK/merge.txt" && bad "merge reported missing ranks of a complete set"
  else
    grep -qF "$want" "$WORK/merge.txt" || bad "merge did not name exactly the ranks without a part: $(cat "$WORK/merge.txt")"
  fi
fi
# A rank that saved nothing: the merge goes on with the others and says which.
rm -f "$P/rank-2.tf"
want=$(missing_line)
"$TF" merge "$P" -o "$WORK/merged3.tf" >"$WORK/merge3.txt" 2>&1 || bad "merge without rank 2's part failed"
grep -qF "$want" "$WORK/merge3.txt" && ok "merge named the ranks without a partial: ${want#*has no trace of }" ||
  bad "merge did not name the missing rank 2: $(cat "$WORK/merge3.txt")"
finish
