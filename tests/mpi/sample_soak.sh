#!/usr/bin/env bash
# Signal safety of the sampler (docs/sampling.md): app_sample_soak at 2
# ranks, each with a thread that allocates and frees, one that loads and
# unloads libm, one that throws C++ exceptions and a main thread that calls
# MPI, sampled every 250us, a few times over. Every run must end (no
# deadlock, no crash) with the untraced run's output, every rank's samples
# must read back whole, and the samples taken (kept, each counted for the
# period it was taken at, + dropped, which only a full ring
# drops) must be within 10 % of the threads' running time / period. The main thread also starts and joins
# some 400 short-lived threads: at the end no more than its own timer may
# be left (/proc/self/timers). The 20-run, 100,000-sample version is
# scripts/bench-sample-soak.sh.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
RUNS=${SOAK_RUNS:-3}
STEPS=${SOAK_STEPS:-4}

plain sample_soak 2 "$STEPS"
[[ $PRC -eq 0 ]] || bad "untraced soak run exited $PRC"
total=0
for ((k = 1; k <= RUNS; k++)); do
  CHECKS=$((CHECKS + 1))
  rm -rf s.tf s.tf.timeline
  limited out.txt err.txt "$TF" record --sample=250us -o s.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_soak" "$STEPS"
  if [[ $LRC -ne 0 ]]; then
    bad "soak run $k exited $LRC"; show_run out.txt err.txt
    continue
  fi
  if ! cmp -s out.txt "$PDIR/plain.txt"; then
    bad "soak run $k: output differs from the untraced run's"; diff out.txt "$PDIR/plain.txt" >&2 || true
    continue
  fi
  if ! "$APPS/samples_check" s.tf.timeline >check.txt 2>check.err; then
    bad "soak run $k: samples do not read back"; cat check.err >&2
    continue
  fi
  for r in 0 1; do
    line=$(grep "^rank $r trailer 1 " check.txt || true)
    secs=$(sed -n "s/^sample_soak: rank $r seconds //p" err.txt)
    if [[ -z $line || -z $secs ]]; then
      bad "soak run $k rank $r: no samples trailer or no thread times"; cat check.txt >&2
      continue
    fi
    dropped=$(awk '{ for (i = 1; i < NF; ++i) if ($i == "dropped") print $(i + 1) }' <<<"$line")
    kept=$(awk '{ for (i = 1; i < NF; ++i) if ($i == "samples") print $(i + 1) }' <<<"$line")
    # Samples taken, in periods of 250us: the kept ones each count for the
    # period it was taken at (a thread may lower its rate when its handler
    # costs more than 5 %), the dropped ones for 250us.
    taken=$(awk -v r="$r" -v d="$dropped" '$1 == "rank" && $2 == r && $5 == "sampled_ns" { s += $6 } END { printf "%d", s / 250000 + d }' check.txt)
    want=$(awk '{ s = 0; for (i = 1; i <= NF; ++i) s += $i; printf "%d", s / 0.00025 }' <<<"$secs")
    total=$((total + kept))
    if ! awk -v n="$taken" -v e="$want" 'BEGIN { exit !(n >= 0.9 * e && n <= 1.1 * e) }'; then
      bad "soak run $k rank $r: $taken periods of samples taken, want within 10 % of $want (threads ran $secs s)"
    fi
  done
  for r in 0 1; do
    left=$(sed -n "s/^sample_soak: rank $r timers //p" err.txt)
    [[ -n $left && $left -le 1 ]] || bad "soak run $k rank $r: ${left:-?} POSIX timers left at the end (want at most 1)"
  done
  grep -q "threads got no timer" err.txt && bad "soak run $k: threads got no timer: $(grep 'no timer' err.txt)"
  ok "soak run $k: output unchanged; $(grep -o '[0-9]* kept of [0-9]* taken ([0-9]* dropped)' err.txt)"
done
ok "$total samples kept over $RUNS runs"
finish
