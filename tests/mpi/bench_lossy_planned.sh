#!/usr/bin/env bash
# tracefold bench --lossy-ok on a trace whose point-to-point peers are
# shared histograms (docs/bench.md, "Lossy traces"): amg_like at 8 ranks,
# recorded with --histogram-threshold 16, sends to peers drawn from the
# histograms. Receiving at the recorded receive calls from drawn sources
# hung (each rank draws its own order, and a shared histogram does not
# keep a rank's count per destination); the benchmark plans its receives
# from the senders' draws instead. Checked: it compiles cleanly, runs to
# its end within the time limit, and every rank still makes the trace's
# number of MPI_Isend calls.
TF=$1; SRC=$2; APPS=$3
source "$SRC/tests/apps/mpi_test_lib.bash"
MPIRUN=${TRACEFOLD_MPIRUN:-mpirun}
NP=8

CHECKS=$((CHECKS + 1))
limited rec.out rec.err "$TF" record --histogram-threshold 16 -o lossy.tf -- \
  "$MPIRUN" -np $NP "$APPS/app_amg_like" 20
if [[ $LRC -ne 0 || ! -s lossy.tf ]]; then
  bad "amg_like at $NP ranks: lossy recording failed ($LRC)"; show_run rec.err; finish
fi
"$TF" print lossy.tf >lossy.txt
if grep -A3 'MPI_Isend' lossy.txt | grep -q 'peer (relative) = hist('; then
  ok "the Isend peers are histograms"
else
  bad "the lossy trace has no histogram of Isend peers: nothing to plan"; finish
fi

CHECKS=$((CHECKS + 1))
if ! "$TF" bench --lossy-ok -o bench.c lossy.tf 2>gen.err; then
  bad "bench --lossy-ok: $(cat gen.err)"; finish
fi
# MPI_Isend calls per rank, written by the benchmark itself: a counting
# wrapper linked in front of the MPI library.
cat >count.c <<'C'
#include <mpi.h>
#include <stdio.h>
static long isends;
int MPI_Isend(const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request *r) {
  ++isends;
  return PMPI_Isend(b, n, t, to, tag, c, r);
}
int MPI_Finalize(void) {
  int rank;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("isends %d %ld\n", rank, isends);
  return PMPI_Finalize();
}
C
if ! "$MPICC" -std=c11 -Wall -Wextra -Werror -O1 bench.c count.c -o bench 2>cc.err; then
  bad "the lossy benchmark does not compile"; head -n 20 cc.err >&2; finish
fi
limited run.out run.err "$MPIRUN" -np $NP ./bench
if [[ $LRC -ne 0 ]] || ! grep -q "^bench: $NP ranks, wall time" run.out; then
  bad "the lossy benchmark did not run to its end (exit $LRC)"; show_run run.out run.err
  finish
fi
want=$(for ((r = 0; r < NP; r++)); do
  echo "$r $("$TF" expand lossy.tf -r $r | grep -c '^MPI_Isend')"
done)
got=$(sed -n 's/^isends //p' run.out | sort -n)
if [[ $want == "$got" ]]; then
  ok "ran to its end: $(grep 'wall time' run.out)"
else
  bad "MPI_Isend calls per rank differ from the trace's"
  diff <(echo "$want") <(echo "$got") | head -n 10 >&2
fi
finish
