#!/usr/bin/env bash
# tracefold patterns names the project's ring (5 ranks: each sends to the
# next, round), pipeline (4 stages), ring_allreduce (4 ranks), ring_minor (the ring with one extra edge: partial, the edge
# listed) and mg_vcycle (the 2-D halo at each
# level of the V-cycle, messages halving: 32, 16, 8 and 4 doubles on the 4
# levels, every rank active; on 2x2 and on 3x3, where the periodic grid
# shows its wrap) with their exact parameters.
source "$2/tests/apps/patterns_lib.bash"

shapes ring 5 3
expect ring-5.txt '    shape: ring, quality 100% (5 of 5 edges)'
expect ring-5.txt '      distance 1; direction +; periodic yes'

# ring_minor: the same ring, plus a Sendrecv between ranks 0 and 1 every
# step: one edge (1->0) more than the ring, named and listed.
shapes ring_minor 5 3
expect ring_minor-5.txt '    shape: ring, partial (1 edge extra), quality 83% (5 of 6 edges)'
expect ring_minor-5.txt '      distance 1; direction +; periodic yes'
expect ring_minor-5.txt '      extra 1->0'

# pipeline: 4 stages in a chain, each waiting for a tile from the one
# before (MPI_Recv) and sending it on (MPI_Send), 3 tiles a step: the
# edges of a shift, told apart by each stage's order of messages.
shapes pipeline 4 3
expect pipeline-4.txt '    shape: pipeline, quality 100% (3 of 3 edges)'
expect pipeline-4.txt '      stages 4; direction +; blocks 3 per iteration'

# ring_allreduce: the same edges as the ring, but each rank sends 2 (p - 1)
# = 6 chunks round per call of ring_allreduce() (3 reduce-scatter steps, 3
# allgather steps, MPI_Sendrecv each): a ring collective.
shapes ring_allreduce 4 3
expect ring_allreduce-4.txt '    shape: ring collective, quality 100% (4 of 4 edges)'
expect ring_allreduce-4.txt '      phases reduce-scatter 3, allgather 3; steps 6 per iteration; direction +; bytes 256'

# master_worker is not here: which worker takes which task follows the
# run's timing, and when the workers' per-process patterns differ the
# assembly splits them into several global patterns (docs/patterns.md,
# Limits); the classifier itself is checked on hand-made edge sets
# (PatternsShapes unit tests).

shapes mg_vcycle 4 2
expect mg_vcycle-4.txt '    shape: multilevel 2-D halo, quality 100% (32 of 32 edges)'
expect mg_vcycle-4.txt '      levels 4; bytes per level 256, 128, 64, 32; ranks per level 4, 4, 4, 4; grid per level 2x2, 2x2, 2x2, 2x2; periodic none; neighbours 5-point'
shapes mg_vcycle 9 2
expect mg_vcycle-9.txt '    shape: multilevel 2-D halo, quality 100% (144 of 144 edges)'
expect mg_vcycle-9.txt '      levels 4; bytes per level 256, 128, 64, 32; ranks per level 9, 9, 9, 9; grid per level 3x3, 3x3, 3x3, 3x3; periodic x,y; neighbours 5-point'
grep -l 'partial' ./*.txt | grep -vq ring_minor && fail "a shape came out partial"
echo "ok"
