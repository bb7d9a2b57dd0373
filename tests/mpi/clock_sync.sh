#!/usr/bin/env bash
# Clock synchronisation of timelines (docs/recording.md#clocks). One host
# has one clock, so the test hook TRACEFOLD_TEST_CLOCK_SKEW_NS makes rank 1's
# timeline clock read 5 s ahead and run 5 % fast, as another host's would.
# Checks: the skew reaches the file (rank 1's measured offsets are -5 s at
# MPI_Init and drift by the rate), the export corrects it and says so, the
# corrected timeline is causal (no receive ends before its send began, by
# more than the error bound of the clock estimate: half its round trip), and
# rank 1's corrected clock advances with rank 0's through the ring's
# lockstep steps (uncorrected, its 5 % rate would show) and spans what the
# unskewed run's ranks span. A plain run on one host reports no correction
# and stores exact zero offsets. The checks are in tests/data/clock_checks.py.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
CHECK="$SRC/tests/data/export_checks.py"
CLOCK="$SRC/tests/data/clock_checks.py"
NP=4
# The drift is measured from ping-pong offsets: under MPICH, whose waits
# spin, 4 ranks on fewer cores stretch them (-48,675 ppm measured against
# -47,619 in a clean-clone CI).
needs_yielding_waits $NP
STEPS=200
UNITS=500  # ~0.5 ms of computation per step and rank
SKEW_NS=5000000000
SKEW_PPM=50000

run() {  # run NAME [ENV...]: record the ring with --timeline into NAME.tf
  local name=$1
  shift
  limited "$name-out.txt" "$name-err.txt" env "$@" "$TF" record --timeline -o "$name.tf" -- \
    "$MPIRUN" -np $NP "$APPS/app_ring" $STEPS $UNITS
}

# exports NAME [TOLERANCE_NS]: Perfetto export, checked against the
# expansion and causal (within the clock error bound when one is given)
exports() {
  local name=$1 tol=${2:-0} r
  mkdir -p "$name-expand"
  for ((r = 0; r < NP; r++)); do "$TF" expand "$name.tf" -r $r >"$name-expand/rank-$r.txt"; done
  "$TF" export "$name.tf" --perfetto "$name.json" 2>"$name-export.txt" &&
    python3 "$CHECK" perfetto "$name.json" "$name-expand" \
      "$(grep -Eo '[0-9]+ matched messages' "$name-export.txt" | head -n 1 | awk '{print $1}')" \
      recorded "$tol" >"$name-check.txt" 2>&1
}

# ------------------------------------------------------------ unskewed run
CHECKS=$((CHECKS + 1))
run plain
if [[ $LRC -ne 0 ]]; then
  bad "recording the ring with --timeline failed ($LRC)"; show_run plain-out.txt plain-err.txt
elif ! exports plain; then
  bad "export of the unskewed timeline"; cat plain-export.txt plain-check.txt >&2
elif grep -q "clocks:" plain-export.txt; then
  bad "one host, one clock, yet a correction was reported"; cat plain-export.txt >&2
elif ! python3 "$CLOCK" zero plain.tf.timeline/rank-1.tft >plain-clock.txt 2>&1; then
  bad "rank 1 on rank 0's host"; cat plain-clock.txt >&2
else
  ok "unskewed: zero offsets on one host, no correction reported, timeline causal"
fi

# ------------------------------------------------------------ skewed run
CHECKS=$((CHECKS + 1))
run skew TRACEFOLD_TEST_CLOCK_SKEW_NS=1:$SKEW_NS:$SKEW_PPM
if [[ $LRC -ne 0 ]]; then
  bad "recording with the clock skew hook failed ($LRC)"; show_run skew-out.txt skew-err.txt
elif ! cmp -s plain-out.txt skew-out.txt; then
  bad "the skew hook changed the program's output"; show_run plain-out.txt skew-out.txt
elif ! python3 "$CLOCK" skewed skew.tf.timeline/rank-1.tft $SKEW_NS $SKEW_PPM >skew-clock.txt 2>&1; then
  bad "rank 1's clock samples do not show the skew"; cat skew-clock.txt >&2
elif ! BOUND=$(python3 "$CLOCK" bound skew.tf.timeline 2>&1); then
  bad "clock samples unreadable: $BOUND"
elif ! exports skew "$BOUND"; then
  bad "the corrected timeline is not causal within the clocks' error bound ($BOUND ns) or does not export"
  cat skew-export.txt skew-check.txt >&2
elif ! grep -Eq "clocks: [0-9]+ ranks? corrected by up to 5(\.[0-9]+)? s" skew-export.txt; then
  bad "the export does not report the 5 s correction"; cat skew-export.txt >&2
else
  ok "skewed: rank 1 $(cat skew-clock.txt); corrected, causal within $BOUND ns ($(grep -o 'clocks:.*' skew-export.txt))"
fi

# ------------------------------------------------------------ durations
CHECKS=$((CHECKS + 1))
if [[ ! -s skew.json || ! -s plain.json ]]; then
  bad "no exports to compare durations"
elif python3 "$CLOCK" lockstep $((2 * NP)) skew.json plain.json >durations.txt 2>&1; then
  ok "durations: $(head -n 1 durations.txt)"
else
  bad "durations differ after correction"; cat durations.txt >&2
fi

finish
