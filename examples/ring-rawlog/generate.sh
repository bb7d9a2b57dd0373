#!/usr/bin/env bash
# Writes the ring example's raw logs: rank-0.txt .. rank-(P-1).txt.
#
#   bash generate.sh [RANKS [STEPS [DIR]]]     (defaults: 4 50 this directory)
#
# Each time step: compute, post a receive from the left neighbour and a send
# to the right one, wait for both; every 10th step ends with an Allreduce (a
# residual check). At the end all ranks Reduce to rank 0. Times are made up
# but fixed (rank 3 computes longer), so every output in docs/ is stable.
set -euo pipefail
P=${1:-4}
STEPS=${2:-50}
DIR=${3:-$(dirname "$0")}
mkdir -p "$DIR"
for ((r = 0; r < P; r++)); do
  left=$(((r + P - 1) % P)) right=$(((r + 1) % P))
  compute=400000 wait=150000
  if ((r == 3)); then compute=600000 wait=8000; fi
  {
    echo "# tracefold raw log: ring example, rank $r of $P"
    echo "rank $r size $P"
    echo "site 1 ring+0x1130 libc.so.6+0x271ca"
    echo "site 2 ring+0x1264 ring+0x1410 libc.so.6+0x271ca"
    echo "site 3 ring+0x1298 ring+0x1410 libc.so.6+0x271ca"
    echo "site 4 ring+0x12c0 ring+0x1410 libc.so.6+0x271ca"
    echo "site 5 ring+0x1302 ring+0x1410 libc.so.6+0x271ca"
    echo "site 6 ring+0x1188 libc.so.6+0x271ca"
    echo "site 7 ring+0x11a0 libc.so.6+0x271ca"
    echo "MPI_Init site=1 compute_ns=1000000 comm_ns=2000000"
    for ((s = 1; s <= STEPS; s++)); do
      echo "MPI_Irecv site=2 peer=$left tag=7 count=1024 dsize=8 comm=0 compute_ns=$compute comm_ns=3000"
      echo "MPI_Isend site=3 peer=$right tag=7 count=1024 dsize=8 comm=0 compute_ns=1000 comm_ns=4000"
      echo "MPI_Waitall site=4 req=2 links=[2,1] compute_ns=1000 comm_ns=$wait"
      if ((s % 10 == 0)); then
        echo "MPI_Allreduce site=5 count=1 dsize=8 redop=1 comm=0 compute_ns=20000 comm_ns=30000"
      fi
    done
    echo "MPI_Reduce site=6 count=4 dsize=8 redop=1 root=0 comm=0 compute_ns=50000 comm_ns=40000"
    echo "MPI_Finalize site=7 compute_ns=10000 comm_ns=500000"
  } >"$DIR/rank-$r.txt"
done
