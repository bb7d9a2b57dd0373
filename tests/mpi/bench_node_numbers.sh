#!/usr/bin/env bash
# Generation errors name a node as `tracefold print` numbers and shows it
# (operation and call site), also when the benchmark passes changed the
# node list first. coll_sites reaches its collectives from two call sites,
# so alignment combines nodes and every later node moves up in the
# aligned list; its last node, MPI_Finalize, becomes a call the generator
# refuses (MPI_Win_fence, one-sided) in the text trace. The refusal must
# give that node's number and call site from `tracefold print` (not its
# place in the aligned list), for the C and the coNCePTuaL outputs.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

CHECKS=$((CHECKS + 1))
record coll_sites 4 3
if [[ $RC -ne 0 ]]; then
  bad "coll_sites: record exited $RC"; show_run "$DIR/err.txt"
  finish
fi
merged=$("$TF" bench "$DIR/t.tf" -o "$DIR/plain.c" 2>&1 | sed -n 's/.*; \([0-9]*\) collective nodes combined.*/\1/p')
if [[ -z $merged || $merged -lt 1 ]]; then
  bad "coll_sites: alignment combined no nodes, so the numbering would not differ (${merged:-none})"
  finish
fi
sed -E 's/^(node [0-9]+ )MPI_Finalize /\1MPI_Win_fence /' "$DIR/t.tf" >"$DIR/bad.tf"
# print's line for the node: `#N MPI_Win_fence at SITE  ranks ...`
line=$("$TF" print "$DIR/bad.tf" | grep -E '^ *#[0-9]+ MPI_Win_fence at ')
num=$(sed -E 's/^ *#([0-9]+) .*/\1/' <<<"$line")
site=$(sed -E 's/^ *#[0-9]+ MPI_Win_fence at (.*)  ranks .*/\1/' <<<"$line")
if [[ -z $num || -z $site ]]; then
  bad "print shows no MPI_Win_fence node: $line"
  finish
fi
want="node #$num (MPI_Win_fence at $site): "
for lang in c conceptual; do
  CHECKS=$((CHECKS + 1))
  rc=0
  "$TF" bench --lang "$lang" "$DIR/bad.tf" -o "$DIR/bad.out" 2>"$DIR/$lang.err" || rc=$?
  if [[ $rc -ne 2 ]]; then
    bad "$lang: exit $rc, want 2"; show_run "$DIR/$lang.err"
  elif ! grep -qF "error: $want" "$DIR/$lang.err"; then
    bad "$lang: the refusal does not name print's node ($want): $(cat "$DIR/$lang.err")"
  elif grep -qF "node #$((num - merged)) " "$DIR/$lang.err"; then
    bad "$lang: the refusal names the aligned index $((num - merged))"
  elif [[ -e $DIR/bad.out ]]; then
    bad "$lang: a file was written despite the error"
  else
    ok "$lang: refused naming print's node: $(cat "$DIR/$lang.err")"
  fi
done
finish
