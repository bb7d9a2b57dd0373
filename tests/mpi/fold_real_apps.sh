#!/usr/bin/env bash
# Programs shaped like real applications fold whatever their loop bodies'
# length (issue: a size cliff from the search window):
#  - halo26(_periodic): ~120 calls from as many call sites per time step
#    (26 directions written out one call site each, three phases); the
#    default window is 64 items, so before exact repeats were found at any
#    distance the periodic program never folded (one node per call);
#  - mg_vcycle: a recursive V-cycle, ~290 call sites per cycle (each level's
#    recursion depth gives its calls their own call paths);
#  - amg_like: per-level irregular neighbour sets, Iprobe-driven receives;
#  - exchange_setup: a data exchange per round (computed contacts that
#    differ per rank and round, Isends, Iprobe(ANY_SOURCE)/Recv, Tests on
#    the sends, rounds closed by Allreduce or Barrier): lossless only, its
#    node count still grows with the rounds (docs/recording.md, limits).
# Each must be lossless; its node count must not grow with the step count
# (folded into the outer loop) and, for the regular programs, every call
# site must be one node, and folding their raw logs again with --window 2
# must give the same nodes: exact repeats do not depend on the window
# (amg_like's iterations differ, its neighbour loops need the window's
# approximate matching).
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"

# "trace of R ranks, N nodes, S call sites, ..." -> "N S"
nodes_sites() {
  "$TF" print "$1" | head -n 1 | sed -E 's/.* ([0-9]+) nodes, ([0-9]+) call sites.*/\1 \2/'
}

folds() {
  local name=$1 np=$2 steps=$3 want=$4 one_node_per_site=$5
  local what="$name at $np ranks"
  check_lossless "$name" "$np" "$steps" "$want"
  [[ -s $DIR/t.tf ]] || return 0
  local n1 s1 n4 s4 nw sw
  read -r n1 s1 < <(nodes_sites "$DIR/t.tf")
  CHECKS=$((CHECKS + 1))
  if [[ $one_node_per_site == yes ]]; then
    [[ $n1 -eq $s1 ]] || bad "$what, $steps steps: $n1 nodes for $s1 call sites (the step loop did not fold)"
    "$TF" fold "$DIR/raw" --window 2 -o "$DIR/w2.tf" >/dev/null 2>"$DIR/w2.err" ||
      bad "$what: fold --window 2 failed: $(cat "$DIR/w2.err")"
    read -r nw sw < <(nodes_sites "$DIR/w2.tf")
    [[ $nw -eq $n1 ]] || bad "$what: fold --window 2 gives $nw nodes, the recording $n1"
  fi
  cp "$DIR/t.tf" "$WORK/$name-$np-short.tf"
  record "$name" "$np" $((4 * steps))
  if [[ $RC -ne 0 || ! -s $DIR/t.tf ]]; then
    bad "$what, $((4 * steps)) steps: record exited $RC"
    show_run "$DIR/err.txt"
    return 0
  fi
  read -r n4 s4 < <(nodes_sites "$DIR/t.tf")
  if [[ $n4 -ne $n1 ]]; then
    bad "$what: $n1 nodes at $steps steps but $n4 at $((4 * steps))"
  else
    ok "$what: $n1 nodes, $s1 call sites at $steps and $((4 * steps)) steps" \
      "($(stat -c %s "$WORK/$name-$np-short.tf") B, $(stat -c %s "$DIR/t.tf") B)"
  fi
}

folds halo26_periodic 8 6 'halo26 \(periodic 1\): 8 ranks' yes
folds halo26 8 6 'halo26 \(periodic 0\): 8 ranks' yes
folds mg_vcycle 4 3 'mg_vcycle: 4 ranks 3 cycles 4 levels' yes
# Iprobe polls differ from run to run; nodes must not.
folds amg_like 4 4 'amg_like: 4 ranks 4 cycles' no
check_lossless exchange_setup 4 6 'exchange_setup: 4 ranks 6 rounds'
check_lossless exchange_setup 6 24 'exchange_setup: 6 ranks 24 rounds'
finish
