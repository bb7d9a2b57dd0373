#!/usr/bin/env bash
# Call-path sampling (`tracefold record --sample`, docs/sampling.md) on
# app_sample_work: 2 ranks, each a main thread that computes in work() and
# meets the other rank in MPI_Allreduce (rank 1 waits there), and a second
# thread that computes in work() too. Checks: the program's output is the
# one of an untraced run; every rank wrote samples-R.tfs with a trailer;
# every thread's samples, each counted for the period it was taken at,
# stand for its running time within 10 % (the program prints each
# thread's time; ticks a thread missed off its core are stored as copies,
# so this holds on an oversubscribed machine);
# some samples fell inside MPI_Allreduce, and they and the others agree
# with the timeline; LCA markers hold between samples in one call of
# work() and stop above it across an MPI call; the most frequent
# computation context symbolizes to
# work(); record reported the handler's cost; bad periods are refused.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}

# covers_time CHECK ERR RANKS WHAT [CHANGES LAST_NS]: on each rank of RANKS,
# both threads' samples, each counted for the period it was taken at (the
# sampler may lower its rate), stand for the thread's running time that
# app_sample_work printed on ERR within 10 %; with CHANGES, each thread
# changed its period that many times, the last to LAST_NS. Returns 1 after
# any failure.
covers_time() {
  local check=$1 err=$2 ranks=$3 what=$4 want_changes=${5:-} want_last=${6:-}
  local r t secs main worker ns changes last fine=0
  for r in $ranks; do
    read -r main worker < <(sed -n "s/^sample_work: rank $r main \([0-9.]*\) worker \([0-9.]*\)$/\1 \2/p" "$err") || true
    for t in 0 1; do
      secs=$main
      [[ $t -eq 1 ]] && secs=$worker
      read -r ns changes last < <(sed -n "s/^rank $r thread $t sampled_ns \([0-9]*\) period_changes \([0-9]*\) last_period_ns \([0-9]*\)$/\1 \2 \3/p" "$check") || true
      if [[ -z $ns || -z $secs ]]; then
        bad "$what: rank $r thread $t: no sampled time or no running time (${ns:-?} ns, ${secs:-?} s)"; fine=1
      elif [[ -n $want_changes ]] && [[ $changes -ne $want_changes || $last -ne $want_last ]]; then
        bad "$what: rank $r thread $t: $changes period changes, last period $last ns (want $want_changes, to $want_last)"; fine=1
      elif ! awk -v n="$ns" -v s="$secs" 'BEGIN { e = s * 1e9; exit !(n >= 0.9 * e && n <= 1.1 * e) }'; then
        bad "$what: rank $r thread $t: samples stand for $ns ns in $secs s (want within 10 %)"; fine=1
      else
        ok "$what: rank $r thread $t: samples stand for $ns ns in $secs s${want_changes:+ after $changes period changes, the last to $last ns}"
      fi
    done
  done
  return $fine
}

# Five steps: the LCA check across an MPI call needs the samples just
# before and after an MPI_Allreduce to land in work() from the same loop,
# and only the Allreduces between two steps' work() calls give such a
# pair. With three steps (two pairs) a loaded machine left rank 0, whose
# Allreduce is short, with none in one run of many.
CHECKS=$((CHECKS + 1))
plain sample_work 2 5
limited out.txt err.txt "$TF" record --sample=1ms -o w.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 5
if [[ $LRC -ne 0 || $PRC -ne 0 ]]; then
  bad "sampled run exited $LRC (untraced: $PRC)"; show_run out.txt err.txt
elif ! cmp -s out.txt "$PDIR/plain.txt"; then
  bad "the sampled program's output differs from the untraced run's"; diff out.txt "$PDIR/plain.txt" >&2 || true
else
  ok "sampled output unchanged: $(cat out.txt)"
fi
if ! ls w.tf.timeline/samples-{0,1}.tfs >/dev/null 2>&1; then
  bad "no samples files in w.tf.timeline/"; ls -la w.tf.timeline >&2 || true
elif ! "$APPS/samples_check" w.tf.timeline >check.txt 2>check.err; then
  bad "samples do not read back"; cat check.err >&2
else
  cat check.txt
  covers_time check.txt err.txt "0 1" "1 ms" || true
  for r in 0 1; do
    grep -q "^rank $r trailer 1 " check.txt || bad "rank $r: samples file without trailer"
    grep -q "^rank $r top work " check.txt || bad "rank $r: the most frequent computation context is not work(): $(grep "^rank $r top" check.txt)"
    # The LCA marker: the whole chain but the leaf between two samples in
    # one call of work(), and not work()'s caller across an MPI_Allreduce.
    grep -Eq "^rank $r lca same [1-9][0-9]* bad 0 across [1-9][0-9]* bad 0$" check.txt ||
      bad "rank $r: LCA markers wrong or untested: $(grep "^rank $r lca" check.txt)"
    grep -q "^rank $r timeline agree [0-9]* off 0$" check.txt ||
      bad "rank $r: samples disagree with the timeline: $(grep "^rank $r timeline" check.txt)"
  done
  in_mpi=$(awk '/ in_mpi / { for (i = 1; i < NF; ++i) if ($i == "in_mpi") s += $(i + 1) } END { print s + 0 }' check.txt)
  if [[ $in_mpi -lt 1 ]] || ! grep -q "^rank 1 in MPI_Allreduce " check.txt; then
    bad "no sample inside MPI_Allreduce ($in_mpi inside MPI calls)"
  else
    ok "$in_mpi samples inside MPI calls"
  fi
fi
if grep -Eq "samples of 2 ranks every 1ms .* kept of .* sampling handler cost median [0-9.]+ us, 99th percentile [0-9.]+ us" err.txt; then
  ok "$(grep 'samples of 2 ranks' err.txt)"
else
  bad "record did not report the samples and the handler's cost"; show_run err.txt
fi

# --sample-clock cpu: the timers count each thread's processor time.
CHECKS=$((CHECKS + 1))
limited out4.txt err4.txt "$TF" record --sample=1ms --sample-clock cpu -o cpu.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 1
if [[ $LRC -ne 0 ]] || ! "$APPS/samples_check" cpu.tf.timeline >check4.txt 2>&1 ||
  [[ $(grep -c '^rank [01] trailer 1 .* clock cpu period_ns 1000000$' check4.txt) -ne 2 ]] ||
  ! grep -q '^rank 0 top work ' check4.txt; then
  bad "--sample-clock cpu: no processor-time samples, or work() not on top ($LRC)"; cat check4.txt err4.txt >&2
else
  ok "--sample-clock cpu: $(grep '^rank 0 trailer' check4.txt)"
fi

# Samples are on the timeline's clock, test skew included: rank 1's clock
# runs 5 s ahead (TRACEFOLD_TEST_CLOCK_SKEW_NS), and its samples still
# agree with its timeline.
CHECKS=$((CHECKS + 1))
TRACEFOLD_TEST_CLOCK_SKEW_NS=1:5000000000 limited out6.txt err6.txt "$TF" record --sample=1ms -o skew.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 1 4000000
if [[ $LRC -ne 0 ]] || ! "$APPS/samples_check" skew.tf.timeline >check6.txt 2>&1 ||
  [[ $(grep -c '^rank [01] timeline agree [1-9][0-9]* off 0$' check6.txt) -ne 2 ]]; then
  bad "skewed clock: samples disagree with the timeline ($LRC)"; cat check6.txt >&2
else
  ok "skewed clock: $(grep '^rank 1 timeline' check6.txt)"
fi

# A call timestamped long after it ended (TRACEFOLD_TEST_EXIT_DELAY_NS: 20
# ms asleep in between, as a thread preempted there on a loaded machine):
# the computing thread's samples in that time name the next event, as the
# timeline has the call ended (when the sampler named the event its
# handler read, a loaded run had 7 samples off, and this run dozens).
CHECKS=$((CHECKS + 1))
TRACEFOLD_TEST_EXIT_DELAY_NS=20000000 limited outlate.txt errlate.txt "$TF" record --sample=1ms -o late.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 2
if [[ $LRC -ne 0 ]] || ! "$APPS/samples_check" late.tf.timeline >checklate.txt 2>&1 ||
  [[ $(grep -c '^rank [01] timeline agree [1-9][0-9]* off 0$' checklate.txt) -ne 2 ]]; then
  bad "calls timestamped 20 ms late: samples disagree with the timeline ($LRC)"; grep timeline checklate.txt >&2; show_run errlate.txt
else
  ok "calls timestamped 20 ms late: $(grep '^rank 1 timeline' checklate.txt)"
fi

# A handler made to look expensive (TRACEFOLD_TEST_SAMPLE_COST_NS: 120 us
# more on every tick, 6 % of 2 ms): every thread halves its rate once (120
# us is 3 % of 4 ms), each samples file records the change, record warns,
# and the samples, each counted for the period it was taken at, still
# cover every thread's time within 10 %. At 4 ms the handler's own cost
# may reach 80 us before a second halving: with 1 ms and 60 us (a margin
# of 40 us at 2 ms), one MPICH run under the suite's load halved twice.
CHECKS=$((CHECKS + 1))
TRACEFOLD_TEST_SAMPLE_COST_NS=120000 limited out7.txt err7.txt "$TF" record --sample=2ms -o slow.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 3
if [[ $LRC -ne 0 ]] || ! "$APPS/samples_check" slow.tf.timeline >check7.txt 2>&1; then
  bad "expensive handler: the run or its samples failed ($LRC)"; cat check7.txt >&2; show_run err7.txt
else
  covers_time check7.txt err7.txt "0 1" "expensive handler" 1 4000000 || true
  grep -q "lowered their rate during the run, to up to one sample every 4ms (" err7.txt ||
    bad "record did not warn that the rate was lowered, and only that: $(grep -i warning err7.txt)"
fi

# The handler costs 60 us for each thread's first 64 ticks and nothing
# after (TRACEFOLD_TEST_SAMPLE_COST_NS==60000,64: the hook sets the cost,
# the handler's real one does not enter): every thread halves its rate
# after its first window, then finds its ticks cheap (at most 1.25 % of 2
# ms) for 2 windows in a row and samples at 1 ms again: two changes per
# thread, the last back to 1 ms, and the samples still cover its time.
# With the real cost added instead, one loaded MPICH run's handler had a
# median of about 20 us and a 99th percentile of about 70 us: a window
# with a median above 25 us at 2 ms, or above 50 us at 1 ms, would change
# the rate once more. The check above keeps the real cost in.
CHECKS=$((CHECKS + 1))
TRACEFOLD_TEST_SAMPLE_COST_NS==60000,64 limited out8.txt err8.txt "$TF" record --sample=1ms -o up.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 4
if [[ $LRC -ne 0 ]] || ! "$APPS/samples_check" up.tf.timeline >check8.txt 2>&1; then
  bad "rate raised again: the run or its samples failed ($LRC)"; cat check8.txt >&2; show_run err8.txt
else
  covers_time check8.txt err8.txt "0 1" "rate raised again" 2 1000000 || true
  grep -q "lowered their rate during the run, to up to one sample every 2ms, and raised it back" err8.txt ||
    bad "record did not say the rate was raised back: $(grep -i warning err8.txt)"
fi

# A process off its cores for 0.4 s (rank 0 stops itself after its first
# work(), as a loaded machine deschedules it): each of its threads misses
# some 400 ticks, all kept as copies of the sample taken when it runs
# again. Nothing is dropped, every thread's samples still stand for its
# time within 10 %, and they agree with the timeline.
CHECKS=$((CHECKS + 1))
limited out9.txt err9.txt "$TF" record --sample=1ms -o stop.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 2 45000000 stop
if [[ $LRC -ne 0 ]] || ! "$APPS/samples_check" stop.tf.timeline >check9.txt 2>&1; then
  bad "stopped process: the run or its samples failed ($LRC)"; cat check9.txt >&2; show_run err9.txt
else
  fine=1
  covers_time check9.txt err9.txt 0 "stopped process" || fine=0
  if ! grep -q "^rank 0 trailer 1 .* dropped 0 " check9.txt ||
    ! grep -q "^rank 0 timeline agree [0-9]* off 0$" check9.txt; then
    bad "stopped process: samples dropped or off the timeline"; grep "^rank 0" check9.txt >&2; fine=0
  fi
  [[ $fine -eq 1 ]] && ok "stopped process: $(grep '^rank 0 trailer' check9.txt | cut -d' ' -f3-8)"
fi

# A run that dies: rank 1 crashes (SIGSEGV) while rank 0 waits in
# MPI_Allreduce until the launcher kills it. Both write their samples with
# the trailer (as partial traces are written); rank 0's wait, seconds long,
# is sampled without drops (no call completes, so nothing is drained while
# it lasts), and its samples name the call that never ended. On a loaded
# machine a rank taken off its core in a wrapper before the call's enter
# time still agrees with the timeline: the copies for ticks it missed
# there are not flagged inside the call. MPICH's Hydra
# SIGKILLs rank 0 at once instead: only the crashed rank 1 writes its part.
CHECKS=$((CHECKS + 1))
limited out3.txt err3.txt "$TF" record --sample=1ms -o c.tf -- "$MPIRUN" -np 2 "$APPS/app_crash" 20000 segv
whole='[01]' nwhole=2
is_hydra && whole=1 nwhole=1
if [[ $LRC -eq 0 ]]; then
  bad "the crashing run exited 0"
elif ! "$APPS/samples_check" c.tf.timeline >check3.txt 2>check3.err; then
  bad "samples of the crashed run do not read back"; cat check3.err >&2; show_run err3.txt
elif [[ $(grep -c "^rank $whole trailer 1 .* dropped 0 " check3.txt) -ne $nwhole ]] ||
  [[ $(grep -c "^rank $whole timeline agree [0-9]* off 0\$" check3.txt) -ne $nwhole ]]; then
  bad "crashed run: samples without trailer, dropped, or disagreeing with the timeline"; cat check3.txt >&2
else
  ok "crashed run: $(grep "^rank $whole trailer" check3.txt | head -n 1)"
fi

# --sample without a value is 5 ms, and takes no word that is not a period.
CHECKS=$((CHECKS + 1))
limited out2.txt err2.txt "$TF" record --sample -o d.tf "$MPIRUN" -np 2 "$APPS/app_sample_work" 1 2000000
if [[ $LRC -ne 0 ]] || ! grep -q "every 5ms" err2.txt; then
  bad "--sample without a period did not sample every 5ms ($LRC)"; show_run err2.txt
else
  ok "--sample alone: every 5ms"
fi

# A rank that cannot sample (here: no such signal) says why, the program
# runs on, and record calls the recording incomplete (exit status 3).
CHECKS=$((CHECKS + 1))
TRACEFOLD_SAMPLE_SIGNAL=999 limited out5.txt err5.txt "$TF" record --sample=1ms -o nosig.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 1 2000000
if [[ $LRC -ne 3 ]] || ! grep -q "rank 0: no samples: signal 999" err5.txt ||
  ! grep -q "no samples were written" err5.txt || [[ ! -s nosig.tf ]]; then
  bad "a rank without samples: want exit 3, its reason and the trace ($LRC)"; show_run err5.txt
else
  ok "no samples: $(grep -m1 'no samples: signal' err5.txt)"
fi

# Periods below 250 us, and no periods, are refused before anything runs.
CHECKS=$((CHECKS + 1))
for p in 100us 0ms 5 fast; do
  if "$TF" record --sample=$p -o x.tf -- "$MPIRUN" -np 2 "$APPS/app_sample_work" 1 2>bad.txt >/dev/null; then
    bad "--sample=$p was accepted"
  elif ! grep -q "record: --sample: " bad.txt || [[ -e x.tf ]]; then
    bad "--sample=$p: no clear refusal, or something ran"; cat bad.txt >&2
  fi
done
grep -q "below the shortest allowed, 250us" < <("$TF" record --sample=100us -- true 2>&1) ||
  bad "a period below 250us is not refused as such"

finish
