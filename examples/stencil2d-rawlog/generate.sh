#!/usr/bin/env bash
# Writes the 2-D stencil example's raw logs: rank-0.txt .. rank-(P-1).txt.
#
#   bash generate.sh [ROWS [COLS [STEPS [DIR]]]]   (defaults: 4 4 20 this directory)
#
# A non-periodic ROWS x COLS process grid (rank = row * COLS + col), as
# examples/stencil2d/stencil2d.c runs it: each time step posts a receive
# from every existing neighbour (north, south, west, east), sends to each,
# waits for all; every 10th step ends with an Allreduce. Corner ranks have
# 2 neighbours, edge ranks 3, interior ranks 4. Times are made up but fixed:
# computation is the same everywhere, waiting grows with the neighbours.
set -euo pipefail
ROWS=${1:-4}
COLS=${2:-4}
STEPS=${3:-20}
DIR=${4:-$(dirname "$0")}
P=$((ROWS * COLS))
mkdir -p "$DIR"
for ((r = 0; r < P; r++)); do
  row=$((r / COLS)) col=$((r % COLS))
  nbs=() tags=()
  # Directions 0..3 = north, south, west, east; a message sent towards d
  # carries tag d, so the receive from direction d expects the opposite tag.
  if ((row > 0)); then nbs+=($((r - COLS))) tags+=(0); fi
  if ((row < ROWS - 1)); then nbs+=($((r + COLS))) tags+=(1); fi
  if ((col > 0)); then nbs+=($((r - 1))) tags+=(2); fi
  if ((col < COLS - 1)); then nbs+=($((r + 1))) tags+=(3); fi
  k=${#nbs[@]}
  {
    echo "# tracefold raw log: 2-D stencil example, rank $r of $P (${ROWS}x${COLS} grid)"
    echo "rank $r size $P"
    echo "site 1 stencil2d+0x1190 libc.so.6+0x271ca"
    echo "site 2 stencil2d+0x1320 stencil2d+0x1500 libc.so.6+0x271ca"
    echo "site 3 stencil2d+0x13a0 stencil2d+0x1500 libc.so.6+0x271ca"
    echo "site 4 stencil2d+0x13e0 stencil2d+0x1500 libc.so.6+0x271ca"
    echo "site 5 stencil2d+0x1460 stencil2d+0x1500 libc.so.6+0x271ca"
    echo "site 6 stencil2d+0x11c0 libc.so.6+0x271ca"
    echo "MPI_Init site=1 compute_ns=500000 comm_ns=3000000"
    for ((s = 1; s <= STEPS; s++)); do
      for ((i = 0; i < k; i++)); do
        # The receive from the neighbour in direction d matches its send
        # towards us, direction d^1 (north <-> south, west <-> east).
        gap=2000
        ((i == 0)) && gap=200000
        echo "MPI_Irecv site=2 peer=${nbs[i]} tag=$((tags[i] ^ 1)) count=24 dsize=8 compute_ns=$gap comm_ns=1500"
      done
      for ((i = 0; i < k; i++)); do
        echo "MPI_Isend site=3 peer=${nbs[i]} tag=${tags[i]} count=24 dsize=8 compute_ns=3000 comm_ns=2500"
      done
      links=""
      for ((i = 2 * k; i >= 1; i--)); do links+="${links:+,}$i"; done
      echo "MPI_Waitall site=4 req=$((2 * k)) links=[$links] compute_ns=1000 comm_ns=$((10000 * k))"
      if ((s % 10 == 0)); then
        echo "MPI_Allreduce site=5 count=1 dsize=8 redop=1 compute_ns=4000 comm_ns=30000"
      fi
    done
    echo "MPI_Finalize site=6 compute_ns=10000 comm_ns=200000"
  } >"$DIR/rank-$r.txt"
done
