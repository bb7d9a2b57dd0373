#!/usr/bin/env bash
# A 64-rank trace recorded for real (the 2-D periodic stencil, 8x8,
# oversubscribed) simulates on the generated fat tree: every rank ends,
# every rank communicated, and the predicted time is at least the
# computation the trace holds.
TF=$1; SRC=$2; APPS=$3
# shellcheck source=../apps/mpi_test_lib.bash
source "$SRC/tests/apps/mpi_test_lib.bash"
RUN_TIMEOUT=200
record stencil2d_periodic 64 20
if [[ $RC -ne 0 ]]; then
  bad "recording the stencil at 64 ranks failed ($RC)"; show_run "$DIR/out.txt" "$DIR/err.txt"; finish
fi
limited sim.txt sim.err "$TF" simulate "$DIR/t.tf" -o sim
t=$(sed -n 's/^predicted run time: \([0-9.]*\) s$/\1/p' sim.txt)
if [[ $LRC -ne 0 || -z $t ]]; then
  bad "simulate exited $LRC"; show_run sim.txt sim.err; finish
fi
grep -q "2;8,8;1,8;1,1" sim.txt || bad "64 hosts: want a two-level fat tree 8x8"
[[ $(grep -c . sim/actions.list) -eq 64 ]] || bad "want 64 action files"
awk -F, 'NR > 1 && $2 > 0 && $3 > 0 {n++} END {exit n != 64}' sim/ranks.csv ||
  bad "not every rank communicated and ended: $(head -5 sim/ranks.csv)"
c=$(sed -n 's/.*largest per-rank sum \([0-9.]*\) s$/\1/p' sim.txt)
awk -v t="$t" -v c="$c" 'BEGIN {exit !(t >= c)}' || bad "predicted $t s < computation $c s"
ok "64 ranks: predicted $t s (computation $c s); $(grep '^simulation wall' sim.txt)"
finish
