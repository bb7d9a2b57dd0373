#!/usr/bin/env bash
# Issue 30, timing of an extrapolated trace, measured without the wall
# clock: on a shared machine the wall times of runs of 8 ranks on 2 cores
# spread by a factor of 3 and more, which is how an extrapolated FFT once
# looked 24 % faster to replay than the real trace. What replaying a trace
# costs is the processor time its computation gaps ask for (replay
# --compute-clock cpu spins for the compute_cpu statistic), and that is
# what is compared:
#  - the slab FFT (app_fft3d, strong scaling, WORK units a step) recorded
#    with --stats compute_cpu at 2, 4, 16 and 8 ranks; 2, 4, 16 -> 8 must
#    `diff` same as the real 8-rank trace and ask for the same processor
#    time in all (the compute_cpu sums of its time histograms) within 10 %;
#  - each of the two traces replayed under mpirun and the replay recorded
#    with --stats compute_cpu: the processor time the replay of the
#    extrapolation spent between calls is the replay of the real trace's
#    within 10 % (replayed_cpu_ns: without the replay's own set-up after
#    MPI_Init and summary before MPI_Finalize, whose untraced waits spin
#    under MPICH and once made the two differ by 10.4 %).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
STEPS=20
WORK=2000
source "$SRC/tests/mpi/extrap_lib.bash"
source "$SRC/scripts/lib/stats.bash"  # trace_cpu_ns, replayed_cpu_ns

# recc NAME NP CMD...: records CMD under mpirun -np NP with compute_cpu.
recc() {
  limited "rec-$1.out" "rec-$1.err" "$TF" record --stats compute_cpu -o "$1.tf" -- \
    "${TRACEFOLD_MPIRUN:-mpirun}" -np "$2" "${@:3}"
  if [[ $LRC -ne 0 || ! -s $1.tf ]]; then
    bad "record $1 at $2 ranks: exit $LRC"
    show_run "rec-$1.out" "rec-$1.err"
  fi
}
# within WHAT A B PERCENT: A is B within PERCENT %.
within() {
  CHECKS=$((CHECKS + 1))
  if awk -v a="$2" -v b="$3" -v p="$4" 'BEGIN { exit !(b > 0 && (a > b ? a - b : b - a) <= p / 100 * b) }'; then
    ok "$1: $2 ns against $3 ns (within $4 %)"
  else
    bad "$1: $2 ns against $3 ns (not within $4 %)"
  fi
}

for n in 2 4 16 8; do recc "ft-$n" "$n" "$APPS/app_fft3d" "$STEPS" "$WORK"; done
same_as_real "fft3d strong, compute_cpu: 2,4,16 -> 8" x-ft-8.tf ft-8.tf ft-2.tf ft-4.tf ft-16.tf
within "fft3d: processor time the extrapolated trace asks for, against the real trace" \
  "$(trace_cpu_ns "$TF" x-ft-8.tf)" "$(trace_cpu_ns "$TF" ft-8.tf)" 10

for t in ft-8 x-ft-8; do
  recc "replayed-$t" 8 "$TF" replay --compute-clock cpu "$t.tf"
done
within "fft3d: processor time of the replay of the extrapolation, against the real trace's replay" \
  "$(replayed_cpu_ns "$TF" replayed-x-ft-8.tf)" "$(replayed_cpu_ns "$TF" replayed-ft-8.tf)" 10
finish
