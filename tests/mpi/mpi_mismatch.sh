#!/usr/bin/env bash
# The other MPI (issue 18, item 10): a program built with the MPI the
# recorder was NOT built for (MPICH for an Open MPI build, and the other way
# round), compiled here with that MPI's own compiler wrapper.
#  - preloaded by hand, the library must leave the program alone: same
#    output, same exit status, no trace, one line on stderr saying why;
#  - `tracefold record` must pick the library built for the program's MPI
#    when it is next to the main one (TRACEFOLD_MPI_FLAVOURS), and trace;
#    with the main library alone it must refuse before running anything,
#    naming the fix; and a launcher of the other MPI is refused too.
# Both MPIs are installed by scripts/install-deps.sh: a missing one fails.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
LIB=$(cd "$(dirname "$TF")/../record" && pwd)/libtracefold.so

if readelf -d "$LIB" | grep -q 'NEEDED.*libmpich'; then
  built=MPICH other=openmpi other_name="Open MPI" cc=mpicc.openmpi run=mpirun.openmpi
  run_args=(-np 2) own_run=mpiexec.mpich env_opt=(-genv)
else
  built="Open MPI" other=mpich other_name=MPICH cc=mpicc.mpich run=mpiexec.mpich
  run_args=(-n 2) own_run=mpirun.openmpi env_opt=(-x)
fi
for tool in "$cc" "$run" "$own_run"; do
  if ! command -v "$tool" >/dev/null; then
    bad "$tool not found: install both MPIs (scripts/install-deps.sh: libmpich-dev mpich libopenmpi-dev openmpi-bin)"
    finish
  fi
done
echo "library built for $built; program built with $cc, run by $run"

"$cc" -O1 -I"$SRC/tests/apps" "$SRC/tests/apps/ring.c" -o "$WORK/ring_other" 2>"$WORK/cc.err" ||
  { bad "$cc could not build the ring: $(cat "$WORK/cc.err")"; finish; }
limited "$WORK/plain.out" "$WORK/plain.err" "$run" "${run_args[@]}" "$WORK/ring_other" 20
prc=$LRC
grep -q '^ring: 2 ranks, 20 steps, checksum' "$WORK/plain.out" ||
  { bad "the untraced run failed ($prc): $(cat "$WORK/plain.out" "$WORK/plain.err")"; finish; }

# 1. Preloaded by hand: untraced, unchanged, one line.
mkdir -p "$WORK/hand"
if [[ $other == mpich ]]; then
  env_args=(-genv LD_PRELOAD "$LIB" -genv TRACEFOLD_OUTPUT "$WORK/hand/t.tf")
else
  env_args=(-x LD_PRELOAD="$LIB" -x TRACEFOLD_OUTPUT="$WORK/hand/t.tf")
fi
limited "$WORK/hand.out" "$WORK/hand.err" "$run" "${env_args[@]}" "${run_args[@]}" "$WORK/ring_other" 20
lines=$(grep -c "^tracefold: the program runs with $other_name.*, but $LIB was built for $built; the program runs untraced" "$WORK/hand.err" || true)
if [[ $LRC -ne $prc ]]; then
  bad "by hand: exit $LRC, untraced run $prc"
  show_run "$WORK/hand.err"
elif ! diff -q "$WORK/plain.out" "$WORK/hand.out" >/dev/null; then
  bad "by hand: the program's output changed: $(cat "$WORK/hand.out")"
elif [[ $lines -ne 1 ]]; then
  bad "by hand: want one line saying why, got $lines: $(cat "$WORK/hand.err")"
elif [[ -e $WORK/hand/t.tf || -e $WORK/hand/t.tf.partial ]]; then
  bad "by hand: a trace was written from a program the recorder does not understand"
elif grep -v '^tracefold: the program runs with' "$WORK/hand.err" | grep -q tracefold; then
  bad "by hand: more from the recorder: $(cat "$WORK/hand.err")"
else
  ok "by hand: $(cat "$WORK/hand.err")"
fi

# 2. record with the main library alone: refused up front.
mkdir -p "$WORK/lonely"
cp "$LIB" "$WORK/lonely/libtracefold.so"
TRACEFOLD_LIB=$WORK/lonely/libtracefold.so limited "$WORK/r1.out" "$WORK/r1.err" \
  "$TF" record -o "$WORK/r1.tf" -- "$run" "${run_args[@]}" "$WORK/ring_other" 20
if [[ $LRC -ne 2 || -s $WORK/r1.out ]]; then
  bad "lonely library: record exited $LRC, program output '$(cat "$WORK/r1.out")'"
elif ! grep -q "uses $other_name, but $WORK/lonely/libtracefold.so was built for $built.*TRACEFOLD_MPI_FLAVOURS.*(nothing was run)" "$WORK/r1.err"; then
  bad "lonely library: message: $(cat "$WORK/r1.err")"
else
  ok "lonely library: $(cat "$WORK/r1.err")"
fi

# 3. The other MPI's launcher for this program: refused.
limited "$WORK/r2.out" "$WORK/r2.err" "$TF" record -o "$WORK/r2.tf" -- \
  "$own_run" -np 2 "$WORK/ring_other" 20
if [[ $LRC -ne 2 || -s $WORK/r2.out ]]; then
  bad "wrong launcher: record exited $LRC, program output '$(cat "$WORK/r2.out")'"
elif ! grep -q "uses $other_name (.*), but the launcher $own_run is $built's" "$WORK/r2.err"; then
  bad "wrong launcher: message: $(cat "$WORK/r2.err")"
else
  ok "wrong launcher: $(cat "$WORK/r2.err")"
fi

# 4. A launcher that is a script (its file shows no MPI): record asks it
# `--version` and passes the variables the way that launcher understands.
# Named like the other MPI's launcher but running this build's own, so the
# name cannot be what decides.
mkdir -p "$WORK/wrap"
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v "$own_run")" > "$WORK/wrap/$run"
chmod +x "$WORK/wrap/$run"
PATH="$WORK/wrap:$PATH" limited "$WORK/r4.out" "$WORK/r4.err" "$TF" record -o "$WORK/r4.tf" -- \
  "$run" -np 2 "$APPS/app_ring" 20
if [[ $LRC -ne 0 ]] || ! grep -q '^ring: 2 ranks, 20 steps' "$WORK/r4.out"; then
  bad "launcher script: record exited $LRC: $(cat "$WORK/r4.out" "$WORK/r4.err")"
elif ! grep -q "trace of 2 ranks written to $WORK/r4.tf" "$WORK/r4.err"; then
  bad "launcher script: no trace: $(cat "$WORK/r4.err")"
else
  ok "launcher script: $(grep 'written to' "$WORK/r4.err")"
fi

# 5. With the other flavour built next to the main library: traced with it.
sibling=$(dirname "$LIB")/libtracefold-$other.so
if [[ ! -f $sibling ]]; then
  if [[ ,${TRACEFOLD_MPI_FLAVOURS:-}, == *,$other,* ]]; then
    bad "$sibling was asked for (TRACEFOLD_MPI_FLAVOURS=$TRACEFOLD_MPI_FLAVOURS) but not built (see cmake's warning)"
  else
    echo "note: this build was configured without $other (TRACEFOLD_MPI_FLAVOURS=${TRACEFOLD_MPI_FLAVOURS:-}): choosing its library is not tested"
  fi
else
  TRACEFOLD_VERBOSE=1 limited "$WORK/r3.out" "$WORK/r3.err" "$TF" record -o "$WORK/r3.tf" \
    --raw-log "$WORK/r3raw" -- "$run" "${run_args[@]}" "$WORK/ring_other" 20
  d=$("$TF" diff "$WORK/r3raw" "$WORK/r3.tf" 2>&1 || true)
  if [[ $LRC -ne 0 ]] || ! diff -q "$WORK/plain.out" "$WORK/r3.out" >/dev/null; then
    bad "both built: record exited $LRC: $(cat "$WORK/r3.out" "$WORK/r3.err")"
  elif ! grep -q "runs with $other_name: recording with $sibling" "$WORK/r3.err"; then
    bad "both built: record did not say it chose $sibling: $(cat "$WORK/r3.err")"
  elif [[ $d != "same: 2 ranks" ]]; then
    bad "both built: trace and raw logs disagree: $d"
  else
    ok "both built: traced with $sibling, $d"
  fi
fi
finish
