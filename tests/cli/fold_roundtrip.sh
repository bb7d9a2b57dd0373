#!/usr/bin/env bash
# fold a raw-log directory, then check the trace against it: `diff` says the
# same, every rank's `expand` output is that rank's events (compared by
# `tracefold diff`, which matches call sites by frames, and textually with
# site ids removed), and the bytes are deterministic (compact, text and
# .zst); the compact form and the text form convert into each other exactly.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

gen_logs "$WORK/logs" 20

run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.trace"
expect_in "$ERR" "4 ranks" "fold summary"
[[ -s "$WORK/t.trace" ]] || fail "fold wrote no trace"
# The compact form by default: magic 89 54 46 43, version 9 (the logs'
# MPI_Waitall lists [2,1] are stored as derived links).
[[ "$(head -c 5 "$WORK/t.trace" | od -An -tx1 | tr -d ' \n')" == "8954464309" ]] || fail "not the compact form"
run_expect 0 "$TRACEFOLD" fold --text "$WORK/logs" -o "$WORK/t.txt"
# Version 7 for the derived links (it also holds `pred=other` blocks, which
# alone would make it 5; neither, 2).
head -1 "$WORK/t.txt" | grep -qx 'tracefold-trace 7' || fail "trace header"
tail -1 "$WORK/t.txt" | grep -qx 'end' || fail "trace does not end with 'end'"
(($(wc -c <"$WORK/t.trace") * 3 < $(wc -c <"$WORK/t.txt"))) || fail "compact form not under a third of the text"
# Either form converts to the other, byte for byte.
run_expect 0 "$TRACEFOLD" convert "$WORK/t.trace" --text -o -
[[ "$OUT" == "$(cat "$WORK/t.txt")" ]] || fail "convert --text -o - is not the text fold wrote"
run_expect 0 "$TRACEFOLD" convert "$WORK/t.txt" -o "$WORK/back.trace"
cmp "$WORK/t.trace" "$WORK/back.trace" || fail "text converted back is not the same compact file"
run_expect 2 "$TRACEFOLD" convert "$WORK/t.txt" -o -
expect_in "$ERR" "text form only" "convert -o - without --text"
# Loops were found: far fewer nodes than events (4 ranks x 64 events).
nodes=$(sed -n 's/^nodes \([0-9]*\)$/\1/p' "$WORK/t.txt")
((nodes <= 8)) || fail "expected at most 8 nodes, got $nodes"

run_expect 0 "$TRACEFOLD" diff "$WORK/logs" "$WORK/t.trace"
expect_in "$OUT" "same: 4 ranks" "diff dir trace"
run_expect 0 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/logs"
run_expect 0 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/t.trace"

# Deterministic bytes: folding again gives the same file.
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/again.trace"
cmp "$WORK/t.trace" "$WORK/again.trace" || fail "folding twice gave different bytes"
# No temporary files left next to the outputs.
leftover=$(find "$WORK" -maxdepth 1 -name '*.tmp*' | wc -l)
((leftover == 0)) || fail "temporary files left behind"

# Compressed output: smaller or equal, same content.
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.trace.zst"
[[ "$(head -c 4 "$WORK/t.trace.zst" | od -An -tx1 | tr -d ' \n')" == "28b52ffd" ]] || fail ".zst output is not zstd"
run_expect 0 "$TRACEFOLD" diff "$WORK/t.trace.zst" "$WORK/logs"
if command -v zstd >/dev/null; then
  zstd -q -d -c "$WORK/t.trace.zst" | cmp - "$WORK/t.txt" || fail ".zst does not hold the same text"
fi

# Expand every rank; the output is a raw log of that rank.
mkdir "$WORK/expanded"
for r in 0 1 2 3; do
  run_expect 0 "$TRACEFOLD" expand "$WORK/t.trace" -r "$r"
  printf '%s\n' "$OUT" >"$WORK/expanded/rank-$r.txt"
  head -1 "$WORK/expanded/rank-$r.txt" | grep -qx "rank $r size 4" || fail "expand rank $r header"
  diff <(event_lines "$WORK/logs/rank-$r.txt") <(event_lines "$WORK/expanded/rank-$r.txt") >/dev/null ||
    fail "rank $r: expanded events differ from the log (site ids aside)"
done
[[ $(event_lines "$WORK/expanded/rank-0.txt" | wc -l) -eq 65 ]] || fail "rank 0 should have 65 events"
run_expect 0 "$TRACEFOLD" diff "$WORK/logs" "$WORK/expanded"
expect_in "$OUT" "same: 4 ranks" "diff dir expanded-dir"

# The expanded logs fold back into the same trace.
run_expect 0 "$TRACEFOLD" fold "$WORK/expanded" -o "$WORK/refolded.trace"
run_expect 0 "$TRACEFOLD" diff "$WORK/refolded.trace" "$WORK/t.trace"

# --timing adds mean times to each event line.
run_expect 0 "$TRACEFOLD" expand --timing "$WORK/t.trace" -r 2
first=$(printf '%s\n' "$OUT" | grep -m1 '^MPI_')
[[ "$first" =~ ^MPI_Irecv\ site=0\ peer=1\ tag=7\ count=16\ dsize=8\ comm=0\ compute_ns=10[0-3]\ comm_ns=20$ ]] ||
  fail "expand --timing: unexpected first event '$first'"
[[ $(printf '%s\n' "$OUT" | grep -c '^MPI_.* compute_ns=[0-9]* comm_ns=[0-9]*$') -eq 64 ]] ||
  fail "expand --timing: every event of rank 2 should carry both times"

# Out-of-range rank is an error, not a crash.
run_expect 2 "$TRACEFOLD" expand "$WORK/t.trace" -r 4
expect_in "$ERR" "rank 4" "expand out of range"

# merge: a trace merged with a copy of itself shares every rank: refused.
cp "$WORK/t.trace" "$WORK/copy.trace"
run_expect 2 "$TRACEFOLD" merge "$WORK/t.trace" "$WORK/copy.trace" -o "$WORK/m.trace"
expect_in "$ERR" "share ranks" "merge overlapping"
[[ ! -e "$WORK/m.trace" ]] || fail "a refused merge wrote its output"
# A single input merges to itself.
run_expect 0 "$TRACEFOLD" merge "$WORK/t.trace" -o "$WORK/m.trace"
cmp "$WORK/m.trace" "$WORK/t.trace" || fail "merge of one trace changed it"
# An output that is not a regular file (a FIFO here, /dev/null alike) is
# written into: renaming a temporary over it would replace it for everyone.
mkfifo "$WORK/pipe"
timeout 20 cat "$WORK/pipe" >"$WORK/from_pipe" &
reader=$!
run_expect 0 "$TRACEFOLD" convert "$WORK/t.txt" -o "$WORK/pipe"
wait "$reader" || fail "convert -o FIFO wrote nothing into the FIFO"
[[ -p "$WORK/pipe" ]] || fail "convert -o FIFO replaced the FIFO with a file"
cmp "$WORK/from_pipe" "$WORK/t.trace" || fail "the FIFO's reader did not get the compact trace"
expect_in "$ERR" "wrote $WORK/pipe ($(wc -c <"$WORK/t.trace") B" "convert -o FIFO summary"
echo "fold_roundtrip: ok"
