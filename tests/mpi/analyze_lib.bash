# Helpers of tests/mpi/analyze_*.sh (not a test itself; sourced after
# tests/apps/mpi_test_lib.bash).
#
#   inject SCENARIO NP        records app_waits_inject STEPS SCENARIO with
#                             --timeline into $WORK/SCENARIO/t.tf, analyses it
#                             to report.json and report.txt; sets $INJECTED
#                             (the late rank's measured sleeping, seconds),
#                             $WAITS_OUT (the program's output, with each
#                             waiting rank's measured waiting) and
#                             $JSON; returns 1 (after `bad`) if a step failed
#   expect WHAT ARGS...       python3 analyze_check.py WHAT $JSON $INJECTED ARGS...
#                             -> ok/bad with its message
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
# Ranks waiting in MPI give up the processor: with more ranks than cores a
# polling rank would otherwise delay the one it waits for.
export OMPI_MCA_mpi_yield_when_idle=1
STEPS=${STEPS:-40}
# Measured waits are only as exact as the ranks are scheduled: where this
# user may (root), the recorded runs get a higher priority than the rest of
# a busy machine (compilers of a parallel build), else they run as they are.
PRIO=()
if nice -n -15 true 2>/dev/null; then PRIO=(nice -n -15); fi
ACHECK="$SRC/tests/mpi/analyze_check.py"

inject() {
  local what=$1 np=$2
  local d="$WORK/$what"
  mkdir -p "$d"
  CHECKS=$((CHECKS + 1))
  limited "$d/out.txt" "$d/err.txt" env WAITS_TIMES_DIR="$d" "${PRIO[@]}" "$TF" record \
    --timeline -o "$d/t.tf" -- \
    "$MPIRUN" -np "$np" "$APPS/app_waits_inject" "$STEPS" "$what"
  if [[ $LRC -ne 0 ]]; then
    bad "$what: recording exited $LRC"
    show_run "$d/out.txt" "$d/err.txt"
    return 1
  fi
  INJECTED=$(sed -n 's/^waits: .* injected \([0-9.]*\) s by rank .*/\1/p' "$d/out.txt")
  if [[ -z $INJECTED ]]; then
    bad "$what: the program did not print what it injected"
    show_run "$d/out.txt"
    return 1
  fi
  # What each waiting rank really waited (analyze_check.py).
  export WAITS_OUT="$d/out.txt"
  JSON="$d/report.json"
  if ! "$TF" analyze "$d/t.tf" -o "$JSON" 2>"$d/analyze-err.txt" ||
    ! "$TF" analyze "$d/t.tf" >"$d/report.txt" 2>>"$d/analyze-err.txt"; then
    bad "$what: tracefold analyze failed"
    show_run "$d/analyze-err.txt"
    return 1
  fi
  TEXT="$d/report.txt"
  return 0
}

expect() {
  local msg
  if msg=$(python3 "$ACHECK" "$1" "$JSON" "$INJECTED" "${@:2}" 2>&1); then
    ok "$msg"
  else
    bad "$msg"
  fi
}
