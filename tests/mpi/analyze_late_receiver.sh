#!/usr/bin/env bash
# Late Receiver by Scalasca's rule (`tracefold analyze`'s default) and by
# protocol (--late-receiver protocol), on tests/apps/producer_consumer.c: a
# producer's 16 KiB sends (a quarter of the default --rendezvous, above Open
# MPI's shared-memory eager limit) wait 50 ms x 20 steps for the consumer
# to post its receives.
#   - MPI_Send, and MPI_Isend + MPI_Wait: 1.0 s of Late Receiver within 5 %
#     on the producer's send call path, and within 5 % of the waiting the
#     program measured (its entry and post times);
#   - MPI_Isend + MPI_Waitall: none (as in Scalasca), though the producer
#     waited as long: the protocol rule with --rendezvous at the block size
#     charges it;
#   - the protocol rule with its default --rendezvous charges none of them;
#   - the parallel analysis gives the serial report byte for byte, with
#     either rule; --rendezvous without the protocol rule is refused.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
source "$SRC/tests/mpi/analyze_lib.bash"
needs_yielding_waits 2
STEPS=20
DESIGNED=1.0  # 50 ms x STEPS
# A recording whose producer did not wait within this of $DESIGNED (the
# machine's load held a rank up for a period or two) is made again, up to
# ATTEMPTS times: the checks against the designed waiting need a run that
# waited as designed; those against the measured waiting hold for any run.
PREMISE=0.02
ATTEMPTS=3

# waited DIR: the producer's waiting in seconds, from the ranks' times
# (the consumer's receive posts minus the producer's entries).
waited() {
  python3 - "$1" <<'EOF'
import sys
times = {}
for r in (0, 1):
    times[r] = [float(x) for x in open(f"{sys.argv[1]}/times.{r}").read().split()[1:]]
print(f"{sum(max(0.0, p - e) for e, p in zip(times[0], times[1])):.6f}")
EOF
}

# produce MODE: records app_producer_consumer STEPS MODE into $WORK/MODE/t.tf
# and analyses it to report.json; sets $D, $JSON, $INJECTED and $WAITS_OUT
# for `expect` (analyze_lib.bash; the measured waiting comes from the
# times.R files, the designed one is $DESIGNED).
produce() {
  local mode=$1 attempt measured
  D="$WORK/$mode"
  CHECKS=$((CHECKS + 1))
  for attempt in $(seq 1 "$ATTEMPTS"); do
    rm -rf "$D"
    mkdir -p "$D"
    limited "$D/out.txt" "$D/err.txt" env WAITS_TIMES_DIR="$D" "${PRIO[@]}" "$TF" record \
      --timeline -o "$D/t.tf" -- "$MPIRUN" -np 2 "$APPS/app_producer_consumer" "$STEPS" "$mode"
    if [[ $LRC -ne 0 ]] || ! grep -q "^consumer: $STEPS blocks of 16384 bytes by $mode" "$D/out.txt"; then
      bad "$mode: recording exited $LRC"
      show_run "$D/out.txt" "$D/err.txt"
      return 1
    fi
    measured=$(waited "$D")
    if python3 -c 'import sys; sys.exit(abs(float(sys.argv[1]) / float(sys.argv[2]) - 1) > float(sys.argv[3]))' \
      "$measured" "$DESIGNED" "$PREMISE"; then
      break
    fi
    echo "$mode: attempt $attempt waited $measured s, not $DESIGNED s within $PREMISE: recording again"
  done
  # analyze_check.py reads the waiting from the times files beside this.
  echo "waits: late_receiver injected $DESIGNED s by rank 1" >"$D/waits.txt"
  export WAITS_OUT="$D/waits.txt"
  INJECTED=$DESIGNED
  JSON="$D/report.json"
  if ! "$TF" analyze "$D/t.tf" -o "$JSON" 2>"$D/analyze-err.txt"; then
    bad "$mode: tracefold analyze failed"
    show_run "$D/analyze-err.txt"
    return 1
  fi
  ok "$mode: recorded and analysed (the producer waited $measured s, attempt $attempt)"
}

# designed OP: rank 0's Late Receiver in $JSON is within 5 % of $DESIGNED
# (the 50 ms x 20 the program was written to wait), mostly at an OP call.
designed() {
  CHECKS=$((CHECKS + 1))
  local msg
  if msg=$(python3 - "$JSON" "$DESIGNED" "$1" <<'EOF' 2>&1
import json, sys
rep, want, op = json.load(open(sys.argv[1])), float(sys.argv[2]), sys.argv[3]
labels = [c["label"] for c in rep["callpaths"]]
cells = [c for c in rep["severity"] if c["pattern"] == "late_receiver" and c["rank"] == 0]
got = sum(c["seconds"] for c in cells)
if abs(got / want - 1) > 0.05:
    sys.exit(f"Late Receiver of rank 0: {got:.6f} s, designed {want:.6f} s "
             f"(off by {100 * (got / want - 1):+.1f} %)")
top = labels[max(cells, key=lambda c: c["seconds"])["callpath"]]
if not top.startswith(op + " "):
    sys.exit(f"Late Receiver of rank 0 mostly at {top}, want {op}")
print(f"Late Receiver of rank 0: {got:.6f} s at {top}, designed {want:.6f} s")
EOF
  ); then
    ok "designed: $msg"
  else
    bad "designed: $msg"
  fi
}

# with_rule JSON ARGS...: analyses $D/t.tf with ARGS into JSON (and sets $JSON).
with_rule() {
  local out=$1
  shift
  CHECKS=$((CHECKS + 1))
  if "$TF" analyze "$D/t.tf" "$@" -o "$out" 2>"$D/rule-err.txt"; then
    JSON=$out
  else
    bad "analyze $* failed"
    show_run "$D/rule-err.txt"
    return 1
  fi
}

# parallel JSON ARGS...: mpirun -np 2 tracefold analyze ARGS gives JSON's bytes.
parallel() {
  local want=$1 got="$D/par-$(basename "$1")"
  shift
  CHECKS=$((CHECKS + 1))
  limited "$D/par.out" "$D/par.err" "$MPIRUN" -np 2 "$TF" analyze "$D/t.tf" "$@" -o "$got"
  if [[ $LRC -ne 0 ]] || ! grep -q "on 2 ranks written to" "$D/par.err"; then
    bad "parallel analysis $* exited $LRC"
    show_run "$D/par.err"
  elif cmp -s "$want" "$got"; then
    ok "parallel analysis $* identical to serial ($(wc -c <"$want") bytes)"
  else
    bad "parallel analysis $* differs: $(diff "$want" "$got" | head -n 6)"
  fi
}

if produce send; then
  expect severity late_receiver 0 MPI_Send
  designed MPI_Send
  expect absent late_sender
  parallel "$D/report.json"
  if with_rule "$D/protocol.json" --late-receiver protocol; then
    expect absent late_receiver
    parallel "$D/protocol.json" --late-receiver protocol
  fi
  CHECKS=$((CHECKS + 1))
  if "$TF" analyze "$D/t.tf" --rendezvous 1 >"$D/refused.txt" 2>&1; then
    bad "--rendezvous without --late-receiver protocol was accepted"
  elif grep -q -- "--rendezvous applies to --late-receiver protocol only" "$D/refused.txt"; then
    ok "--rendezvous without --late-receiver protocol refused"
  else
    bad "--rendezvous refused without saying why: $(head -n 2 "$D/refused.txt")"
  fi
fi

if produce isend_wait; then
  expect severity late_receiver 0 MPI_Isend
  designed MPI_Isend
  parallel "$D/report.json"
fi

if produce isend_waitall; then
  expect absent late_receiver
  parallel "$D/report.json"
  # The producer did wait in its MPI_Waitall: the protocol rule, told the
  # block is rendezvous-sized, charges it.
  if with_rule "$D/protocol.json" --late-receiver protocol --rendezvous 16384; then
    expect severity late_receiver 0 MPI_Isend
    parallel "$D/protocol.json" --late-receiver protocol --rendezvous 16384
  fi
fi
finish
