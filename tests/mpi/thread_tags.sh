#!/usr/bin/env bash
# Message order across threads (docs/format.md "Message order across
# threads"): two threads of rank 0 send with one tag to rank 1, whose two
# threads receive them (tests/apps/thread_tags.c). Which thread's message
# each receive got follows only from the order of the calls across
# threads, which the recorder notes (`others`). Checked: the sender thread
# of every receive, as export pairs them from the trace, against what the
# program itself received; and the replay, which makes the threads' calls
# in that order, to a fixed point (a replay that pairs them otherwise
# fails: the receives are too short for the other thread's message).
# Twice: the threads together from the start, and the second thread
# calling MPI only after the main threads made 3 calls on the same key
# (the recorder counts order only from then on: the second thread's first
# send must still come after those 3).
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {
  local args=$1
  "$TF" record -o t.tf -- "$MPIRUN" -np 2 "$APPS/app_thread_tags" $args > out.txt 2> err.txt ||
    { cat out.txt err.txt >&2; fail "recording the program"; }
  if grep -q "not provided" out.txt; then
    echo "this MPI does not provide MPI_THREAD_MULTIPLE"
    exit 77
  fi
  grep -q "tracing is off" err.txt && { cat err.txt >&2; fail "tracing went off"; }
  "$TF" print t.tf | grep -q "2 threads per rank" || fail "not 2 threads per rank"
  # The program's own pairing, per receiving thread and round.
  grep "^thread_tags: receiver thread" out.txt
  # The trace's: each flow's sender thread, per receiving thread in order.
  "$TF" export t.tf --perfetto t.json 2> export.txt || { cat export.txt >&2; fail "export"; }
  grep -q "unmatched" export.txt && fail "unmatched messages: $(cat export.txt)"
  python3 - t.json out.txt <<'PY'
import json, sys
evs = json.load(open(sys.argv[1]))["traceEvents"]
start = {e["id"]: e for e in evs if e.get("ph") == "s"}
got = {}
for e in evs:
    if e.get("ph") == "f" and e["pid"] == 1:
        got.setdefault(e["tid"], []).append(start[e["id"]]["tid"])
for line in open(sys.argv[2]):
    if line.startswith("thread_tags: receiver thread"):
        words = line.split()
        thread, senders = int(words[3]), [int(w) for w in words[7:]]
        if got.get(thread) != senders:
            sys.exit("receiver thread %d: the trace pairs it with sender threads %s, the program got %s"
                     % (thread, got.get(thread), senders))
PY
  # Replayed in the recorded order: the same trace, `others` included.
  "$TF" record -o r.tf -- "$MPIRUN" -np 2 "$TF" replay t.tf > r.out 2> r.err ||
    { cat r.out r.err >&2; fail "replaying"; }
  "$TF" diff --ignore-callsites t.tf r.tf | tee r.diff
  grep -qx "same: 2 ranks x 2 threads" r.diff || fail "the replay differs"
}
check "6 0"
check "4 3"
