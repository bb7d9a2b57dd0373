#!/usr/bin/env bash
# Regenerates rank-0.txt .. rank-2.txt: a tiny 3-rank, non-periodic 1-D halo
# exchange, small enough to follow by hand in docs/format.md.
# Rank 0 first sends a setup message to ranks 1 and 2. Then 6 time steps:
# receive from the left neighbour, send to the right one (MPI_PROC_NULL at the
# edges), an Allreduce in steps 2, 3 and 6 only, and a Waitall whose `links`
# point back at the Irecv and Isend it completes.
set -euo pipefail
cd "$(dirname "$0")"
P=3
for ((r = 0; r < P; r++)); do
  left=$((r - 1)) right=$((r + 1))
  ((left < 0)) && left=null
  ((right >= P)) && right=null
  {
    echo "# tracefold raw log: halo example, rank $r of $P"
    echo "rank $r size $P"
    echo "site 1 halo+0x10a0"
    echo "site 2 halo+0x1100"
    echo "site 3 halo+0x1120"
    echo "site 4 halo+0x1200 halo+0x1400"
    echo "site 5 halo+0x1230 halo+0x1400"
    echo "site 6 halo+0x1260 halo+0x1400"
    echo "site 7 halo+0x12a0 halo+0x1400"
    echo "site 8 halo+0x10c0"
    echo "MPI_Init site=1"
    if ((r == 0)); then
      for ((d = 1; d < P; d++)); do echo "MPI_Send site=2 peer=$d tag=9 count=4 dsize=4"; done
    else
      echo "MPI_Recv site=3 peer=0 tag=9 count=4 dsize=4"
    fi
    for ((s = 1; s <= 6; s++)); do
      echo "MPI_Irecv site=4 peer=$left tag=0 count=256 dsize=8 compute_ns=5000"
      echo "MPI_Isend site=5 peer=$right tag=0 count=256 dsize=8"
      case $s in
        2 | 3 | 6)
          echo "MPI_Allreduce site=7 count=1 dsize=8 redop=1"
          echo "MPI_Waitall site=6 req=2 links=[3,2]" ;;
        *) echo "MPI_Waitall site=6 req=2 links=[2,1]" ;;
      esac
    done
    echo "MPI_Finalize site=8"
  } >"rank-$r.txt"
done
