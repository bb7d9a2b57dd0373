#!/usr/bin/env bash
# `tracefold diff` finds the first difference and names rank, event position
# and field; exit 0 same, 1 different. --ignore-callsites compares without
# call-site signatures.
set -euo pipefail
TRACEFOLD=$1
SRC=$2
# shellcheck source=../data/cli_common.bash
source "$SRC/tests/data/cli_common.bash"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

gen_logs "$WORK/logs" 12
run_expect 0 "$TRACEFOLD" fold "$WORK/logs" -o "$WORK/t.trace"

# nth_event_line FILE N : line number (in FILE) of the N-th event (0-based).
nth_event_line() {
  local n
  n=$(grep -n -E '^MPI_' "$1" | sed -n "$(($2 + 1))p" | cut -d: -f1)
  [[ -n "$n" ]] || fail "test setup: $1 has no event $2"
  echo "$n"
}

# A changed tag on rank 2, event 7 (an Isend: events go Irecv, Isend, Waitall).
cp -r "$WORK/logs" "$WORK/tag"
line=$(nth_event_line "$WORK/tag/rank-2.txt" 7)
sed -i "${line}s/ tag=7 / tag=8 /" "$WORK/tag/rank-2.txt"
grep -q ' tag=8 ' "$WORK/tag/rank-2.txt" || fail "test setup: tag not changed"
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/tag"
expect_in "$OUT" "different" "changed tag"
expect_in "$OUT" "rank 2" "changed tag"
expect_in "$OUT" "event 7" "changed tag"
expect_in "$OUT" "tag" "changed tag"
expect_in "$OUT" "7 vs 8" "changed tag"
# Same result once the changed logs are folded.
run_expect 0 "$TRACEFOLD" fold "$WORK/tag" -o "$WORK/tag.trace"
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/tag.trace"
expect_in "$OUT" "rank 2, event 7, tag: 7 vs 8" "changed tag, both folded"
run_expect 0 "$TRACEFOLD" diff "$WORK/tag" "$WORK/tag.trace"

# A changed peer on rank 3 (12 steps: 38 events; event 32 is an Irecv).
cp -r "$WORK/logs" "$WORK/peer"
line=$(nth_event_line "$WORK/peer/rank-3.txt" 32)
sed -i "${line}s/ peer=[0-9]* / peer=1 /" "$WORK/peer/rank-3.txt"
run_expect 1 "$TRACEFOLD" diff "$WORK/logs" "$WORK/peer"
expect_in "$OUT" "rank 3, event 32, peer: 2 vs 1" "changed peer"

# A missing event: the sequences differ in length (or op) at that position.
cp -r "$WORK/logs" "$WORK/short"
line=$(nth_event_line "$WORK/short/rank-1.txt" 5)
sed -i "${line}d" "$WORK/short/rank-1.txt"
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/short"
expect_in "$OUT" "rank 1, event 5" "missing event"
# Dropping the last event makes only the length differ.
cp -r "$WORK/logs" "$WORK/shorter"
sed -i '$d' "$WORK/shorter/rank-0.txt"
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/shorter"
expect_in "$OUT" "rank 0, event 38, length" "dropped last event"

# Different call-site frames (same program otherwise): a site difference,
# which --ignore-callsites ignores.
cp -r "$WORK/logs" "$WORK/sites"
for r in 0 1 2 3; do sed -i 's/^site 12 ring+0x1f0 main+0x40$/site 12 ring+0x1f8 main+0x40/' "$WORK/sites/rank-$r.txt"; done
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/sites"
expect_in "$OUT" "rank 0, event 1, site" "changed frames"
expect_in "$OUT" "ring+0x1f8" "changed frames"
run_expect 0 "$TRACEFOLD" diff --ignore-callsites "$WORK/t.trace" "$WORK/sites"
run_expect 0 "$TRACEFOLD" fold "$WORK/sites" -o "$WORK/sites.trace"
run_expect 0 "$TRACEFOLD" diff --ignore-callsites "$WORK/t.trace" "$WORK/sites.trace"
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/sites.trace"
# Renumbering site ids alone changes nothing.
cp -r "$WORK/logs" "$WORK/renum"
for r in 0 1 2 3; do sed -i -E 's/^site 1([1-5]) /site 9\1 /; s/ site=1([1-5]) / site=9\1 /' "$WORK/renum/rank-$r.txt"; done
grep -q 'site=93' "$WORK/renum/rank-0.txt" || fail "test setup: sites not renumbered"
run_expect 0 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/renum"
# --ignore-callsites still sees parameter changes.
run_expect 1 "$TRACEFOLD" diff --ignore-callsites "$WORK/t.trace" "$WORK/tag"
expect_in "$OUT" "tag" "ignore-callsites with changed tag"

# What wildcard receives matched: scalar src/mtag (MPI_Wait) and the lists
# srcs/mtags (MPI_Waitall) differ, and --ignore-matched skips all four.
mkdir "$WORK/m1"
cat >"$WORK/m1/rank-0.txt" <<'EOF'
rank 0 size 3
site 0 app+0x10
site 1 app+0x20
site 2 app+0x30
MPI_Irecv site=0 peer=any tag=any count=1 dtype=7 dsize=4
MPI_Irecv site=0 peer=any tag=any count=1 dtype=7 dsize=4
MPI_Waitall site=1 srcs=[1,2] mtags=[3,4] links=[2,1]
MPI_Irecv site=0 peer=any tag=any count=1 dtype=7 dsize=4
MPI_Wait site=2 src=1 mtag=5 links=[1]
EOF
for r in 1 2; do
  printf 'rank %s size 3\nsite 0 app+0x40\nMPI_Send site=0 peer=0 tag=3 count=1 dtype=7 dsize=4\n' "$r" >"$WORK/m1/rank-$r.txt"
done
for change in 's/srcs=\[1,2\]/srcs=[2,1]/' 's/mtags=\[3,4\]/mtags=[4,3]/' 's/ src=1 / src=2 /' 's/ mtag=5 / mtag=6 /'; do
  rm -rf "$WORK/m2"
  cp -r "$WORK/m1" "$WORK/m2"
  sed -i "$change" "$WORK/m2/rank-0.txt"
  cmp -s "$WORK/m1/rank-0.txt" "$WORK/m2/rank-0.txt" && fail "test setup: $change changed nothing"
  run_expect 1 "$TRACEFOLD" diff "$WORK/m1" "$WORK/m2"
  expect_in "$OUT" "rank 0" "matched field ($change)"
  run_expect 0 "$TRACEFOLD" diff --ignore-matched "$WORK/m1" "$WORK/m2"
done
# --ignore-matched still compares the links next to them.
rm -rf "$WORK/m2"
cp -r "$WORK/m1" "$WORK/m2"
sed -i 's/links=\[2,1\]/links=[1,2]/' "$WORK/m2/rank-0.txt"
run_expect 1 "$TRACEFOLD" diff --ignore-matched "$WORK/m1" "$WORK/m2"
expect_in "$OUT" "links" "ignore-matched with changed links"

# A different number of ranks.
mkdir "$WORK/two"
for r in 0 1; do sed "s/^rank $r size 4$/rank $r size 2/; s/ peer=[0-9]* / peer=$((1 - r)) /" "$WORK/logs/rank-$r.txt" >"$WORK/two/rank-$r.txt"; done
run_expect 1 "$TRACEFOLD" diff "$WORK/t.trace" "$WORK/two"
expect_in "$OUT" "different" "rank count"
echo "diff_detects_changes: ok"
