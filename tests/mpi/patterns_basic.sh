#!/usr/bin/env bash
# tracefold patterns on a real recording: sweep3d at 4 ranks, two
# iterations of its eight octant sweeps in main, gives each rank one
# pattern, its whole iteration (65 symbols: 64 point-to-point calls and
# the Allreduce) twice, in main; peers are relative by default and
# absolute with --absolute; --no-context finds the same here (one function);
# the ranks' patterns join into one global pattern over the grid.
set -euo pipefail
TF=$1; APPS=$3
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
"$TF" record -o sw.tf -- "$MPIRUN" -np 4 "$APPS/app_sweep3d" 2 > /dev/null 2> rec.err ||
  { cat rec.err >&2; fail "record"; }
"$TF" patterns sw.tf > p.txt || fail "patterns exited $?"
cat p.txt | cut -c1-160
[[ $(grep -c '^ranks ' p.txt) -eq 4 ]] || fail "expected one group per rank"
[[ $(grep -c ': 130 events, 1 pattern$' p.txt) -eq 4 ]] || fail "expected 130 events and 1 pattern per rank"
# Where the folded trace holds the two iterations as a loop, they are also
# shown as its iterations (tests/mpi/patterns_loops.sh).
[[ $(grep -c '^  #1 in main: 65 events, 2 times (at event 0 65)\(, 2 loop iterations (trips 2)\)\?$' p.txt) -eq 4 ]] ||
  fail "expected the 65-event iteration twice, in main, on every rank"
grep -q 'send(+1, comm 0, tag 100)' p.txt || fail "no relative peer +1 in rank 0's pattern"
grep -q 'allreduce(comm 0)' p.txt || fail "the Allreduce is not a symbol"
grep -q 'wait\|probe' p.txt && fail "completions or probes became symbols"
# Step 2: the four ranks' patterns are one global pattern over the 2x2
# grid's neighbours, every message of the run in it.
grep -q '^global patterns: 1$' p.txt || fail "expected one global pattern"
grep -q '^  G1: patterns of ranks 0–3, 256 messages, 0 events outside patterns$' p.txt ||
  fail "G1 should join all 4 ranks and their 256 messages"
grep -q '^    edges 0->1 0->2 1->0 1->3 2->0 2->3 3->1 3->2$' p.txt || fail "wrong edges"
"$TF" patterns --absolute sw.tf > a.txt
grep -q 'send(1, comm 0, tag 100)' a.txt || fail "--absolute: rank 0 should send to 1"
"$TF" patterns --no-context sw.tf > n.txt
[[ $(grep -c 'in (whole rank): 65 events, 2 times' n.txt) -eq 4 ]] || fail "--no-context"
# --json is written as it is made (a global pattern's edges are too many
# to hold twice at scale); the text must still be the one-space-indented
# form of the document, its edges those of the listing.
"$TF" patterns --json sw.tf > p.json || fail "--json exited $?"
python3 - p.json <<'PY' || fail "--json is not the indented document"
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
doc = json.loads(text)
if json.dumps(doc, indent=1, ensure_ascii=False) + "\n" != text:
    sys.exit("not laid out as json.dumps(indent=1)")
edges = " ".join(f"{a}->{b}" for a, b in doc["global"][0]["edges"])
if edges != "0->1 0->2 1->0 1->3 2->0 2->3 3->1 3->2" or doc["ranks"] != 4:
    sys.exit(f"wrong content: {edges}")
PY
# A helper called from two places (call_paths: exchange() from from_north()
# and from_south(), each an MPI_Sendrecv): one context by function, two
# with --context caller; Sendrecv messages are matched both ways.
"$TF" record -o cp.tf -- "$MPIRUN" -np 2 "$APPS/app_call_paths" 6 one-thread > /dev/null 2> cp.err ||
  { cat cp.err >&2; fail "record call_paths"; }
"$TF" patterns cp.tf > f.txt
grep -q '^  #[0-9]* in exchange: ' f.txt || fail "no pattern in context exchange"
grep -q 'from_north\|from_south' f.txt && fail "function contexts should not name callers"
"$TF" patterns --context caller cp.tf > c.txt
grep -q '^patterns of cp.tf: 2 ranks, context caller, ' c.txt || fail "--context caller header"
grep -q '^  #[0-9]* in exchange < from_\(north\|south\): ' c.txt ||
  fail "--context caller should qualify exchange by its caller"
grep -qE '^  G[0-9]+: patterns of ranks 0–1, [1-9][0-9]* messages' f.txt ||
  fail "Sendrecv messages were not matched between the two ranks"
"$TF" patterns --context bogus cp.tf 2> bad.txt && fail "--context bogus was accepted"
grep -q "context" bad.txt || fail "no message for a bad --context"
"$TF" patterns /dev/null 2> err.txt && fail "an empty file was accepted"
[[ -s err.txt ]] || fail "no message for a bad trace"
echo "ok"
