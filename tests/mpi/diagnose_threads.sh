#!/usr/bin/env bash
# `tracefold diagnose` of a run whose threads call MPI (tests/apps/
# thread_late.c, 2 ranks x 2 threads, MPI_THREAD_MULTIPLE) is refused,
# naming why, by the serial and by the parallel diagnosis (`mpirun -np 2
# tracefold diagnose`): for a folded trace, which counts its threads, and
# for a `--sample-only` run, whose event logs do not say which thread made
# a call but whose samples show thread 1 of rank 0 inside its MPI_Recv.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

# refused NAME WHAT CMD...: CMD fails and says that diagnose takes one
# thread per rank, and WHAT.
refused() {
  local name=$1 what=$2
  shift 2
  CHECKS=$((CHECKS + 1))
  limited "$name-out.txt" "$name-err.txt" "$@"
  if [[ $LRC -eq 0 || $LRC -eq 124 ]]; then
    bad "$name: exit $LRC, not refused"
    show_run "$name-out.txt" "$name-err.txt"
  elif ! grep -q "diagnose takes traces of one thread per rank calling MPI; .*$what" "$name-err.txt"; then
    bad "$name: the refusal does not say why ($what)"
    show_run "$name-err.txt"
  else
    ok "$name refused: $(grep -m1 -o "diagnose takes.*" "$name-err.txt" | cut -c1-160)"
  fi
}

for how in folded sample-only; do
  opts=(--sample 1ms)
  [[ $how == sample-only ]] && opts+=(--sample-only)
  limited "rec-$how-out.txt" "rec-$how-err.txt" "$TF" record "${opts[@]}" -o "$how.tf" -- \
    "$MPIRUN" -np 2 "$APPS/app_thread_late" 100
  if grep -q "not provided" "rec-$how-out.txt"; then
    echo "this MPI does not provide MPI_THREAD_MULTIPLE: not run"
    exit 77
  fi
  if [[ $LRC -ne 0 ]]; then
    bad "$how: recording exited $LRC"
    show_run "rec-$how-out.txt" "rec-$how-err.txt"
    continue
  fi
  if [[ $how == folded ]]; then
    what="this one has 2 threads per rank"
  else
    what="thread 1 of rank 0 was sampled inside an MPI call"
  fi
  refused "$how-serial" "$what" "$TF" diagnose "$how.tf"
  refused "$how-parallel" "$what" "$MPIRUN" -np 2 "$TF" diagnose "$how.tf"
done
finish
