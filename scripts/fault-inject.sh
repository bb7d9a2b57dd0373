#!/usr/bin/env bash
# Fault injection during recording (issue 18 item 8): runs each fault N
# times (default 20) under `tracefold record` and counts the runs whose
# saved traces are complete. Not part of CI (slow: about a minute per 20 runs
# of one fault on an idle 2-core machine).
#
#   scripts/fault-inject.sh [BUILD_DIR] [N]
#
# Faults, 4 ranks, Open MPI:
#   segv    the last rank writes through a null pointer (app_crash segv):
#           complete = rank-0..3.tf in TRACE.partial/, each readable
#   abort   the last rank calls MPI_Abort (app_abort): the same
#   kill    the last rank gets SIGKILL (app_crash kill): complete =
#           rank-0..2.tf (the killed rank cannot save anything)
#   outdir  the output directory is moved away before MPI_Finalize
#           (app_outdir_gone): complete = the merged trace of all 4 ranks
#           saved elsewhere and named by `record`
#   badout  -o in a missing directory: complete = refused before the run
# "stray" counts runs that left *.tmp.* files behind.
set -uo pipefail
BUILD=${1:-build}
N=${2:-20}
TF=$BUILD/src/cli/tracefold
APPS=$BUILD/tests/apps
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"

# partials_ok DIR FIRST LAST: every rank-R.tf for R in FIRST..LAST exists and loads.
partials_ok() {
  local r
  for ((r = $2; r <= $3; ++r)); do
    "$TF" stats "$1/rank-$r.tf" >/dev/null 2>&1 || return 1
  done
}

run_fault() {
  local fault=$1 i good=0 stray=0 d
  for ((i = 1; i <= N; ++i)); do
    d=$WORK/$fault-$i
    mkdir -p "$d"
    case $fault in
      segv) timeout 120 "$TF" record -o "$d/t.tf" -- mpirun -np 4 "$APPS/app_crash" 40 segv >"$d/log" 2>&1
        partials_ok "$d/t.tf.partial" 0 3 && good=$((good + 1)) ;;
      abort) timeout 120 "$TF" record -o "$d/t.tf" -- mpirun -np 4 "$APPS/app_abort" 40 >"$d/log" 2>&1
        partials_ok "$d/t.tf.partial" 0 3 && good=$((good + 1)) ;;
      kill) timeout 120 "$TF" record -o "$d/t.tf" -- mpirun -np 4 "$APPS/app_crash" 40 kill >"$d/log" 2>&1
        partials_ok "$d/t.tf.partial" 0 2 && good=$((good + 1)) ;;
      outdir) mkdir -p "$d/out"
        timeout 120 "$TF" record -o "$d/out/t.tf" -- mpirun -np 4 "$APPS/app_outdir_gone" 40 "$d/out" >"$d/log" 2>&1
        local saved
        saved=$(sed -n 's/^tracefold: the merged trace of the whole run is in \(.*\) (it could not.*/\1/p' "$d/log")
        [[ -n $saved ]] && "$TF" stats "$saved" 2>/dev/null | grep -q . && good=$((good + 1)) ;;
      badout) timeout 120 "$TF" record -o "$d/missing/t.tf" -- mpirun -np 4 "$APPS/app_ring" 40 >"$d/log" 2>&1
        grep -q 'does not exist (nothing was run)' "$d/log" && ! grep -q '^ring' "$d/log" && good=$((good + 1)) ;;
    esac
    [[ -n $(find "$d" -name '*.tmp.*' 2>/dev/null) ]] && stray=$((stray + 1))
  done
  printf '%-7s %2d/%d complete, %d with stray temporaries\n' "$fault" "$good" "$N" "$stray"
}

echo "fault   complete runs (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for f in ${FAULTS:-segv abort kill outdir badout}; do run_fault "$f"; done
