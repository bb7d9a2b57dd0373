#!/usr/bin/env bash
# The poll fast path (src/record/poll_fastpath.cpp) records exactly what the
# full recording of every poll records.
#  - poll_exact, whose poll outcomes do not depend on timing (Test, Testany,
#    Testsome, Testall, Iprobe, Improbe; named and wildcard sources;
#    success after hundreds of failures; alternating requests; one poll from
#    two call sites): traced with the fast path (the default) and without
#    (TRACEFOLD_POLL_FASTPATH=0), the traces are the same (`tracefold diff`,
#    and `tracefold expand` of every rank), the same as the raw log of every
#    call, and the fast path counted most of the polls (TRACEFOLD_POLL_STATS),
#    so the comparison cannot pass without it.
#  - TRACEFOLD_POLL_FASTPATH=check on programs whose poll counts depend on
#    timing (polling, amg_like, nbc) and on poll_exact: every poll the fast
#    path would have counted as a repeat goes through the full recording,
#    which must find it a repeat of the last event (no mismatch, some
#    checked); the trace is lossless against the raw log.
#  - With the fast path on, those programs run and every rank's trace
#    expands; the polling ranks used the fast path.
#  - A bad TRACEFOLD_POLL_FASTPATH value is reported and the program runs on.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

# stat_of ERRFILE RANK FIELD -> the rank's count from the TRACEFOLD_POLL_STATS line
stat_of() {
  local line
  line=$(grep -E "^tracefold: rank $2: poll fast path: " "$1" || true)
  [[ $line =~ :\ ([0-9]+)\ repeats,\ ([0-9]+)\ checked,\ ([0-9]+)\ mismatches ]] || { echo -1; return; }
  case $3 in
    repeats) echo "${BASH_REMATCH[1]}" ;;
    checked) echo "${BASH_REMATCH[2]}" ;;
    mismatches) echo "${BASH_REMATCH[3]}" ;;
  esac
}

# traced NAME NP ARGS... : record without the raw log (which turns the fast
# path off) -> $DIR/t.tf, $RC
traced() {
  local name=$1 np=$2
  shift 2
  DIR="$WORK/$name-np$np-$MODE"
  rm -rf "$DIR"
  mkdir -p "$DIR"
  limited "$DIR/out.txt" "$DIR/err.txt" env TRACEFOLD_POLL_STATS=1 \
    "$TF" record -o "$DIR/t.tf" -- "${TRACEFOLD_MPIRUN:-mpirun}" -np "$np" "$APPS/app_$name" "$@"
  RC=$LRC
}

# 1. poll_exact with and without the fast path.
CHECKS=$((CHECKS + 1))
ROUNDS=3 POLLS=300
MODE=on traced poll_exact 2 $ROUNDS $POLLS
on=$DIR
MODE=off TRACEFOLD_POLL_FASTPATH=0 traced poll_exact 2 $ROUNDS $POLLS
off=$DIR
for d in "$on" "$off"; do
  if [[ $RC -ne 0 || ! -s $d/t.tf ]] || ! grep -q '^poll_exact: [0-9]* polls' "$d/out.txt"; then
    bad "poll_exact ($(basename "$d")): run failed or wrote no trace"
    show_run "$d/out.txt" "$d/err.txt"
  fi
done
polls=$(sed -n 's/^poll_exact: \([0-9]*\) polls.*/\1/p' "$on/out.txt")
repeats=$(stat_of "$on/err.txt" 1 repeats)
off_repeats=$(stat_of "$off/err.txt" 1 repeats)
# Every kernel but the alternating one repeats polls equal to the one before.
if [[ -z $polls || $repeats -lt $((polls / 2)) ]]; then
  bad "poll_exact: the fast path counted $repeats of ${polls:-?} unsuccessful polls (want at least half)"
  show_run "$on/err.txt"
else
  ok "poll_exact: the fast path counted $repeats of $polls unsuccessful polls"
fi
[[ $off_repeats -eq 0 ]] || bad "poll_exact: TRACEFOLD_POLL_FASTPATH=0 still counted $off_repeats fast polls"
[[ $(grep -c '^poll_exact' "$on/out.txt") -eq 1 ]] && cmp -s "$on/out.txt" "$off/out.txt" ||
  bad "poll_exact: the program's output differs with the fast path"
if d=$("$TF" diff "$off/t.tf" "$on/t.tf" 2>&1); then
  ok "poll_exact: with and without the fast path: $d"
else
  bad "poll_exact: the trace with the fast path differs from the one without: $d"
fi
for r in 0 1; do
  "$TF" expand "$on/t.tf" -r $r >"$WORK/on-$r.txt" 2>&1 || bad "poll_exact: expand -r $r failed"
  "$TF" expand "$off/t.tf" -r $r >"$WORK/off-$r.txt" 2>&1 || bad "poll_exact: expand -r $r failed"
  cmp -s "$WORK/on-$r.txt" "$WORK/off-$r.txt" ||
    bad "poll_exact: rank $r's expanded events differ: $(diff "$WORK/off-$r.txt" "$WORK/on-$r.txt" | head -n 4)"
done
events=$(grep -c '^MPI_' "$WORK/on-1.txt" || true)
((events > polls)) || bad "poll_exact: rank 1 expands to $events events for $polls polls"
# The raw log of every call (the fast path is off with it) against the fast path's trace.
record poll_exact 2 $ROUNDS $POLLS
if [[ $RC -eq 0 ]] && d=$("$TF" diff "$DIR/raw" "$on/t.tf" 2>&1); then
  ok "poll_exact: the fast path's trace against the raw log of every call: $d"
else
  bad "poll_exact: the fast path's trace differs from the raw log of another run (exit $RC): $d"
fi

# 2. Check mode: every armed poll that found nothing must be a repeat.
for spec in "poll_exact 2 3 ^poll_exact:" "polling 4 6 ^polling:" "amg_like 4 4 ^amg_like:" \
  "nbc 4 30 ^nbc:"; do
  read -r name np steps want <<<"$spec"
  TRACEFOLD_POLL_FASTPATH=check TRACEFOLD_POLL_STATS=1 check_lossless "$name" "$np" "$steps" "$want"
  checked=0
  for ((r = 0; r < np; r++)); do
    c=$(stat_of "$DIR/err.txt" $r checked) m=$(stat_of "$DIR/err.txt" $r mismatches)
    if [[ $c -lt 0 ]]; then
      bad "$name (check): rank $r did not report its poll fast path"
      continue
    fi
    [[ $m -eq 0 ]] || bad "$name (check): rank $r: $m armed polls were not repeats: $(grep -m1 'not a repeat' "$DIR/err.txt")"
    checked=$((checked + c))
  done
  ((checked > 0)) || bad "$name (check): no poll was armed on any rank"
  ok "$name (check): $checked armed polls were repeats on the full path"
done

# 3. The fast path on, on the programs whose polls depend on timing.
for spec in "polling 4 6" "amg_like 4 4" "nbc 4 30"; do
  read -r name np steps <<<"$spec"
  CHECKS=$((CHECKS + 1))
  MODE=on traced "$name" "$np" "$steps"
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$name (fast path): record exited $RC or wrote no trace"
    show_run "$DIR/err.txt"
    continue
  fi
  total=0
  for ((r = 0; r < np; r++)); do
    "$TF" expand "$DIR/t.tf" -r $r >/dev/null 2>"$WORK/expand.err" ||
      bad "$name (fast path): rank $r does not expand: $(head -n 2 "$WORK/expand.err")"
    total=$((total + $(stat_of "$DIR/err.txt" $r repeats)))
  done
  ((total > 0)) || bad "$name (fast path): no rank used the fast path"
  ok "$name (fast path): $total polls counted by the fast path"
done

# 4. A bad switch value: one clear line, the program unchanged.
CHECKS=$((CHECKS + 1))
TRACEFOLD_POLL_FASTPATH=maybe record poll_exact 2 1 20
if [[ $RC -ne 0 ]] || ! grep -q "TRACEFOLD_POLL_FASTPATH must be on, off or check, not 'maybe'" "$DIR/err.txt"; then
  bad "TRACEFOLD_POLL_FASTPATH=maybe: want the error line and exit 0 (exit $RC)"
  show_run "$DIR/err.txt"
else
  ok "TRACEFOLD_POLL_FASTPATH=maybe is reported"
fi
finish
