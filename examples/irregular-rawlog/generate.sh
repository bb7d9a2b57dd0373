#!/usr/bin/env bash
# Regenerates rank-0.txt and rank-1.txt: rank 0 sends 12 messages of
# irregular sizes to rank 1, which receives them. The sizes follow no pattern,
# so their value sequence does not fold; docs/user-guide.md uses this to show
# the lossy --histogram-threshold option.
set -euo pipefail
cd "$(dirname "$0")"
sizes=(100 250 100 400 250 100 100 400 250 100 400 100)
for r in 0 1; do
  {
    echo "# tracefold raw log: irregular message sizes, rank $r of 2"
    echo "rank $r size 2"
    echo "site 1 irregular+0x1010"
    echo "site 2 irregular+0x1100 irregular+0x1300"
    echo "site 3 irregular+0x1180 irregular+0x1300"
    echo "site 4 irregular+0x1020"
    echo "MPI_Init site=1"
    for n in "${sizes[@]}"; do
      if ((r == 0)); then
        echo "MPI_Send site=2 peer=1 tag=3 count=$n dsize=8"
      else
        echo "MPI_Recv site=3 peer=0 tag=3 count=$n dsize=8"
      fi
    done
    echo "MPI_Finalize site=4"
  } >"rank-$r.txt"
done
