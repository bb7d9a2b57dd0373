#!/usr/bin/env bash
# tracefold patterns tells wavefronts from halo exchanges on the same grid
# by the ranks' order of messages: sweep3d (all eight octant sweeps in
# main, blocking receives from upstream before sends downstream) on 2x2 and
# 3x2 grids is one wavefront of 8 sweeps per iteration, the 2-D grid seeing
# each octant's i and j directions (octants 4-7 repeat 0-3 in k); lu (a
# lower sweep from rank 0 and an upper one from the last rank, wildcard
# receives matched by their recorded sources) is a wavefront of 2 sweeps,
# and its halo exchange on the same edges (posted receives) a 2-D halo of
# its own. The k-blocks (planes) each sweep pipelines are its blocks per
# sweep. ssor_wave (a lower and an upper sweep of 4 planes, then a halo, in
# one loop of main) has the same sweeps per iteration at 3 and 4 steps,
# though its per-process repeat is then 2 and 3 steps long, occurring
# twice, overlapping.
source "$2/tests/apps/patterns_lib.bash"

shapes sweep3d 4 2
expect sweep3d-4.txt '    shape: wavefront, quality 100% (8 of 8 edges)'
expect sweep3d-4.txt '      grid 2x2; sweeps 8 per iteration; blocks 4 per sweep; directions 4; order +x+y from 0, -x+y from 1, +x-y from 2, -x-y from 3, +x+y from 0, -x+y from 1, +x-y from 2, -x-y from 3'

shapes sweep3d 6 2
expect sweep3d-6.txt '    shape: wavefront, quality 100% (14 of 14 edges)'
expect sweep3d-6.txt '      grid 3x2; sweeps 8 per iteration; blocks 4 per sweep; directions 4; order +x+y from 0, -x+y from 1, +x-y from 4, -x-y from 5, +x+y from 0, -x+y from 1, +x-y from 4, -x-y from 5'

shapes lu 4 2
expect lu-4.txt '    shape: wavefront, quality 100% (8 of 8 edges)'
expect lu-4.txt '      grid 2x2; sweeps 2 per iteration; blocks 5 per sweep; directions 2; order +x+y from 0, -x-y from 3'

shapes lu 6 2
expect lu-6.txt '    shape: wavefront, quality 100% (14 of 14 edges)'
expect lu-6.txt '      grid 3x2; sweeps 2 per iteration; blocks 5 per sweep; directions 2; order +x+y from 0, -x-y from 5'
expect lu-6.txt '    shape: 2-D halo, quality 100% (14 of 14 edges)'
for steps in 3 4; do
  shapes ssor_wave 4 "$steps"
  mv ssor_wave-4.txt "ssor_wave-4-$steps.txt"
  expect "ssor_wave-4-$steps.txt" '      grid 2x2; sweeps 2 per iteration; blocks 4 per sweep; directions 2; order +x+y from 0, -x-y from 3'
  # The listing shows the loop's iterations, as the folded trace holds
  # them, beside the repeat's overlapping occurrences.
  grep -Eq "^  #1 in main: .* 2 times \(at event [0-9 ]+\), $steps loop iterations \(trips $steps\)$" \
    "ssor_wave-4-$steps.txt" ||
    fail "ssor_wave at $steps steps: no '$steps iterations' in the listing"
done
grep -q 'halo' sweep3d-*.txt && fail "a wavefront was named a halo"
echo "ok"
