# Helpers of tests/mpi/diagnose_*.sh (not a test itself; sourced after
# tests/apps/mpi_test_lib.bash).
#
#   designed MODE NP [RECORD-OPTIONS...]
#       records app_diag_problems STEPS MODE UNIT_MS (default 20) with
#       --timeline (and the
#       options) into $WORK/MODE/t.tf, diagnoses it to report.json and
#       report.txt; sets $DESIGNED (what the program says the diagnosis
#       should find) and $JSON; returns 1 (after `bad`) if a step failed
#   expect ARGS...   python3 diagnose_check.py $JSON $DESIGNED ARGS... -> ok/bad
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
# Waiting ranks give up the processor, so the late one is not slowed down.
export OMPI_MCA_mpi_yield_when_idle=1
STEPS=${STEPS:-10}
PRIO=()
if nice -n -15 true 2>/dev/null; then PRIO=(nice -n -15); fi
DCHECK="$SRC/tests/mpi/diagnose_check.py"

designed() {
  local what=$1 np=$2 tag=${TAG:-$1}
  shift 2
  local d="$WORK/$tag"
  mkdir -p "$d"
  CHECKS=$((CHECKS + 1))
  limited "$d/out.txt" "$d/err.txt" "${PRIO[@]}" "$TF" record --timeline "$@" -o "$d/t.tf" -- \
    "$MPIRUN" -np "$np" "$APPS/app_diag_problems" "$STEPS" "$what" "${UNIT_MS:-20}"
  if [[ $LRC -ne 0 ]]; then
    bad "$tag: recording exited $LRC"
    show_run "$d/out.txt" "$d/err.txt"
    return 1
  fi
  DESIGNED=$(sed -n "s/^diag: $what designed \([0-9.]*\)$/\1/p" "$d/out.txt")
  if [[ -z $DESIGNED ]]; then
    bad "$tag: the program did not print its designed value"
    show_run "$d/out.txt"
    return 1
  fi
  JSON="$d/report.json"
  TEXT="$d/report.txt"
  if ! "$TF" diagnose "$d/t.tf" -o "$JSON" 2>"$d/diag-err.txt" ||
    ! "$TF" diagnose "$d/t.tf" >"$TEXT" 2>>"$d/diag-err.txt"; then
    bad "$tag: tracefold diagnose failed"
    show_run "$d/diag-err.txt"
    return 1
  fi
  return 0
}

expect() {
  local msg
  CHECKS=$((CHECKS + 1))
  if msg=$(python3 "$DCHECK" "$JSON" "$DESIGNED" "$@" 2>&1); then
    ok "$msg"
  else
    bad "$msg"
    sed -n '/^Diagnoses/,$p' "$TEXT" >&2
  fi
}
