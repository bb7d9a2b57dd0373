#!/usr/bin/env bash
# Samples name threads as the trace does (docs/sampling.md "Threads"), on
# app_sample_threads: 2 ranks, MPI_THREAD_MULTIPLE, each with a thread C
# that never calls MPI and threads A and B, started in that order after
# the main thread, of which one waits in MPI_Recv while the other computes.
# The sampler meets the threads in the order main, C, A, B; the recorder
# numbers their streams main, B, A by first call; the trace orders A and
# B by what they recorded, which differs from the first-call order on one
# rank. Checks: output of an untraced run; 3 threads in the trace per
# rank, C numbered after them (3) with no location in the trace and
# samples standing for its running time within 10 %; on every thread, all
# but 10 % and 3 of its samples inside MPI lie in one of that thread's own
# calls on the timeline: the first of its records from the one the sample
# names on, between its enter and the thread's next call (samples_check),
# and the waiting threads have many of them. Numbering by the sampler's
# order, or by first call without the trace's order, puts a waiting
# thread's samples on a thread that was computing, or on one with no
# calls at all.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

CHECKS=$((CHECKS + 1))
plain sample_threads 2 4
limited out.txt err.txt "$TF" record --sample=1ms -o t.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_threads" 4
if [[ $LRC -ne 0 || $PRC -ne 0 ]]; then
  bad "sampled run exited $LRC (untraced: $PRC)"; show_run out.txt err.txt "$PDIR/plain.txt"
elif ! cmp -s out.txt "$PDIR/plain.txt"; then
  bad "the sampled program's output differs from the untraced run's"; diff out.txt "$PDIR/plain.txt" >&2 || true
elif ! "$APPS/samples_check" t.tf.timeline >check.txt 2>check.err; then
  bad "samples do not read back"; cat check.err >&2
else
  cat check.txt
  waited=0
  for r in 0 1; do
    grep -q "^rank $r trace_threads 3 named 1$" check.txt ||
      bad "rank $r: want 3 threads in the trace, named: $(grep "^rank $r trace_threads" check.txt)"
    # C: the thread numbered after the trace's, never in MPI.
    secs=$(sed -n "s/^sample_threads: rank $r c \([0-9.]*\)$/\1/p" err.txt)
    read -r ns < <(sed -n "s/^rank $r thread 3 sampled_ns \([0-9]*\) .*$/\1/p" check.txt) || true
    if ! grep -q "^rank $r thread 3 location -1 calls 0 in_mpi 0 " check.txt; then
      bad "rank $r: thread 3 is not the thread without MPI: $(grep "^rank $r thread 3 location" check.txt)"
    elif [[ -z $ns || -z $secs ]] ||
      ! awk -v n="$ns" -v s="$secs" 'BEGIN { e = s * 1e9; exit !(n >= 0.9 * e && n <= 1.1 * e) }'; then
      bad "rank $r: thread 3's samples stand for ${ns:-?} ns, C ran ${secs:-?} s (want within 10 %)"
    else
      ok "rank $r: thread 3 (no MPI) sampled for $ns ns of $secs s"
    fi
    for t in 0 1 2; do
      read -r loc calls n own < <(sed -n "s/^rank $r thread $t location \(-\?[0-9]*\) calls \([0-9]*\) in_mpi \([0-9]*\) in_own_calls \([0-9]*\)$/\1 \2 \3 \4/p" check.txt) || true
      if [[ -z $own ]]; then
        bad "rank $r thread $t: no samples"
      elif [[ $loc -ne $((t * 2 + r)) || $calls -eq 0 ]]; then
        bad "rank $r thread $t: location $loc, $calls calls (want $((t * 2 + r)) and some)"
      elif ((n - own > n / 10 + 3)); then
        bad "rank $r thread $t: $own of its $n samples inside MPI lie in its own calls (want all but 10 % and 3)"
      else
        ok "rank $r thread $t: $own of $n samples inside MPI in its own $calls calls"
        ((t > 0 && n > waited)) && waited=$n
      fi
    done
  done
  # A waiting thread waits about 0.4 s: some 400 samples at 1 ms.
  ((waited >= 100)) || bad "no thread waited long in MPI (most samples inside MPI: $waited)"
fi

finish
