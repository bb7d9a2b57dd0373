#!/usr/bin/env bash
# Where the recording goes (issue 18, items 5 and 6):
#  - `record` proves the output, raw-log and timeline places writable before
#    it starts the launcher, and refuses at once, naming the place and the
#    reason, without running the program;
#  - when the output cannot be written at the end although every rank
#    merged, the merged trace of all ranks is saved elsewhere and the
#    messages say so (not "the run did not reach MPI_Finalize").
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
LIB=$(dirname "$TF")/../record/libtracefold.so
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

# refused WHAT REGEX ARGS...: record must exit non-zero before running the
# ring (its result line must not appear) with a message matching REGEX.
refused() {
  local what=$1 want=$2
  shift 2
  limited "$WORK/r.out" "$WORK/r.err" "$TF" record "$@" -- "$MPIRUN" -np 2 "$APPS/app_ring" 5
  if [[ $LRC -eq 0 ]]; then
    bad "$what: record exited 0"
  elif grep -q 'ring' "$WORK/r.out"; then
    bad "$what: the program ran although the output place was refused"
  elif ! grep -Eq "$want" "$WORK/r.err"; then
    bad "$what: message does not match /$want/: $(cat "$WORK/r.err")"
  else
    ok "$what: $(head -1 "$WORK/r.err")"
  fi
}

touch "$WORK/plainfile"
mkdir -p "$WORK/isdir/t.tf/inside"
refused "missing output directory" "output directory $WORK/nodir does not exist \(nothing was run\)" \
  -o "$WORK/nodir/t.tf"
refused "output directory is a file" "output directory $WORK/plainfile is not a directory" \
  -o "$WORK/plainfile/t.tf"
refused "output is a directory" "output $WORK/isdir/t.tf is a directory" -o "$WORK/isdir/t.tf"
refused "raw-log under a file" "cannot create the raw-log directory $WORK/plainfile/raw: Not a directory" \
  -o "$WORK/ok.tf" --raw-log "$WORK/plainfile/raw"
[[ -e $WORK/ok.tf ]] && bad "a refused run left $WORK/ok.tf"

# A reference trace of the same run, written normally.
mkdir -p "$WORK/ref"
limited "$WORK/ref.out" "$WORK/ref.err" "$TF" record -o "$WORK/ref/t.tf" -- \
  "$MPIRUN" -np 4 "$APPS/app_outdir_gone" 12
[[ $LRC -eq 0 && -s $WORK/ref/t.tf ]] || bad "reference run failed ($LRC): $(cat "$WORK/ref.err")"

# The output directory moves away before MPI_Finalize: record must report
# the merged trace's new place, and it must be the whole run.
mkdir -p "$WORK/out"
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"
limited "$WORK/g.out" "$WORK/g.err" "$TF" record -o "$WORK/out/t.tf" -- \
  "$MPIRUN" -np 4 "$APPS/app_outdir_gone" 12 "$WORK/out"
saved=$(sed -n 's/^tracefold: the merged trace of the whole run is in \(.*\) (it could not be written to .*/\1/p' "$WORK/g.err")
if [[ $LRC -ne 0 ]]; then
  bad "output gone: record exited $LRC: $(cat "$WORK/g.err")"
elif [[ -z $saved || ! -s $saved ]]; then
  bad "output gone: record did not name a saved merged trace: $(cat "$WORK/g.err")"
elif grep -q 'did not reach MPI_Finalize' "$WORK/g.err"; then
  bad "output gone: record blamed the run: $(cat "$WORK/g.err")"
elif ! grep -q 'all 4 ranks were merged, but writing the trace failed' "$WORK/g.err"; then
  bad "output gone: the recorder did not say what failed: $(cat "$WORK/g.err")"
else
  "$TF" diff "$WORK/ref/t.tf" "$saved" >"$WORK/diff.txt" 2>&1 || true
  if grep -q '^same' "$WORK/diff.txt"; then
    ok "output gone: whole-run trace saved to $saved, same as the reference"
  else
    bad "output gone: saved trace differs from the reference: $(head -5 "$WORK/diff.txt")"
  fi
fi
[[ -d $WORK/out.moved ]] || bad "the program did not move its directory (test broken)"

# Preloaded directly (no `tracefold record`, so no prepared fallback): the
# merged trace goes to the working directory.
mkdir -p "$WORK/cwd"
cd "$WORK/cwd"
rank_env LD_PRELOAD="$LIB" TRACEFOLD_OUTPUT="$WORK/gone/t.tf"
limited "$WORK/d.out" "$WORK/d.err" "$MPIRUN" -np 4 "${RANK_ENV[@]}" "$APPS/app_outdir_gone" 12
cd "$WORK"
shopt -s nullglob
files=("$WORK"/cwd/unsaved-*-t.tf)
if [[ $LRC -ne 0 || ${#files[@]} -ne 1 ]]; then
  bad "preloaded: exit $LRC, ${#files[@]} saved files in the working directory: $(cat "$WORK/d.err")"
elif ! grep -q "the merged trace was saved to ${files[0]} instead" "$WORK/d.err"; then
  bad "preloaded: message does not name ${files[0]}: $(cat "$WORK/d.err")"
elif [[ -e $WORK/gone.partial ]]; then
  bad "preloaded: a partial directory was written although the merge succeeded"
else
  "$TF" diff "$WORK/ref/t.tf" "${files[0]}" >"$WORK/diff2.txt" 2>&1 || true
  grep -q '^same' "$WORK/diff2.txt" && ok "preloaded: whole-run trace in the working directory" ||
    bad "preloaded: saved trace differs: $(head -5 "$WORK/diff2.txt")"
fi
finish
