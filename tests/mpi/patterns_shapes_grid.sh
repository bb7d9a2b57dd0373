#!/usr/bin/env bash
# tracefold patterns names the shapes of the project's halo exchanges with
# their exact parameters: stencil2d not periodic on 3 rows of 2 (6 ranks,
# MPI_Dims_create's 3x2), periodic on the same grid (only y can show its
# wrap: an axis of 2 cannot) and on 3x3 (both axes), stencil3d on 2x2x2
# (7-point) and halo26 on 2x2x2 (27-point, faces, edges and corners of
# different sizes); every edge explained (quality 100 %), the bytes per
# direction those of the programs' messages (24 doubles in stencil2d, 10x10
# in stencil3d). The JSON form carries the same shape. nbr_halo makes the
# halo with neighbourhood collectives on a Cartesian, graph and
# distributed-graph communicator, and on the sub-grid MPI_Cart_sub keeps of a
# 3-D grid one rank deep: named the same from the recorded topology;
# topo_nbr's three communicators in one loop give a pattern each.
source "$2/tests/apps/patterns_lib.bash"

shapes stencil2d_nonperiodic 6 3
expect stencil2d_nonperiodic-6.txt '    shape: 2-D halo, quality 100% (14 of 14 edges)'
expect stencil2d_nonperiodic-6.txt \
  '      grid 3x2; periodic none; neighbours 5-point; bytes -x 192, +x 192, -y 192, +y 192'

shapes stencil2d_periodic 6 3
expect stencil2d_periodic-6.txt '    shape: 2-D halo, quality 100% (18 of 18 edges)'
expect stencil2d_periodic-6.txt \
  '      grid 3x2; periodic y; neighbours 5-point; bytes -x 192, +x 192, -y 192, +y 192'

shapes stencil2d_periodic 9 3
expect stencil2d_periodic-9.txt '    shape: 2-D halo, quality 100% (36 of 36 edges)'
expect stencil2d_periodic-9.txt \
  '      grid 3x3; periodic x,y; neighbours 5-point; bytes -x 192, +x 192, -y 192, +y 192'
"$TF" patterns --json stencil2d_periodic-9.tf > s9.json || fail "--json"
python3 - s9.json <<'PY' || fail "JSON shape of stencil2d_periodic at 9 ranks"
import json, sys
g = json.load(open(sys.argv[1]))["global"]
assert len(g) == 1, g
s = g[0]["shape"]
assert s["name"] == "2-D halo" and s["title"] == "2-D halo" and not s["partial"], s
assert s["params"]["grid"] == "3x3" and s["params"]["periodic"] == "x,y", s
assert s["params"]["neighbours"] == "5-point", s
assert s["quality"] == 1.0 and s["matched"] == 36 and s["missing"] == [] and s["extra"] == [], s
PY

# stencil3d's steps with and without the residual Allreduce make two global
# patterns: both are the halo.
shapes stencil3d 8 6
n=$(grep -c '^  G[0-9]*:' stencil3d-8.txt)
[[ $(grep -cxF '    shape: 3-D halo, quality 100% (24 of 24 edges)' stencil3d-8.txt) -eq $n ]] ||
  fail "stencil3d: every global pattern should be the 3-D halo"
expect stencil3d-8.txt '      grid 2x2x2; periodic none; neighbours 7-point; bytes -x 800, +x 800, -y 800, +y 800, -z 800, +z 800'

shapes halo26 8 3
expect halo26-8.txt '    shape: 3-D halo, quality 100% (56 of 56 edges)'
grep -q '^      grid 2x2x2; periodic none; neighbours 27-point; bytes -x 288\.\.864, +x 288\.\.864, ' \
  halo26-8.txt || fail "halo26: grid, 27-point neighbours or face bytes"
grep -q ', -x-y 48, ' halo26-8.txt || fail "halo26: an edge neighbour's bytes"
# A halo of neighbourhood collectives (nbr_halo): the topology the trace
# recorded at its creation gives the edges, whichever of the kinds (distgen:
# MPI_Dist_graph_create, whose neighbours the recorder asks MPI for).
for pair in cart:cartesian graph:graph 'dist:distributed graph' 'distgen:distributed graph' sub:cartesian; do
  kind=${pair%%:*}
  shapes nbr_halo 6 2 "$kind"
  mv nbr_halo-6.txt "nbr_halo-6-$kind.txt"
  expect "nbr_halo-6-$kind.txt" '    shape: 2-D halo, quality 100% (18 of 18 edges)'
  expect "nbr_halo-6-$kind.txt" \
    "      grid 3x2; periodic y; neighbours 5-point; bytes -x 64, +x 64, -y 64, +y 64; topology ${pair#*:}"
  if [[ $kind == distgen ]]; then cp nbr_halo-6.tf distgen.tf; fi
done
# Replay and bench refuse MPI_Dist_graph_create by name: the trace holds the
# neighbours, not the edges each rank passed, which decide their order.
"$TF" bench distgen.tf -o distgen.c 2> distgen-bench.err && fail "bench took MPI_Dist_graph_create"
grep -q 'node #[0-9]* (MPI_Dist_graph_create at .*not the edges' distgen-bench.err ||
  { cat distgen-bench.err >&2; fail "bench's refusal of MPI_Dist_graph_create"; }
[[ -e distgen.c ]] && fail "a refused bench left distgen.c"
"$MPIRUN" -np 6 "$TF" replay distgen.tf > distgen-replay.out 2>&1 && fail "replay took MPI_Dist_graph_create"
grep -q 'node #[0-9]* (MPI_Dist_graph_create at .*not the edges' distgen-replay.out ||
  { cat distgen-replay.out >&2; fail "replay's refusal of MPI_Dist_graph_create"; }

# topo_nbr makes its neighbourhood collectives on three communicators in one
# loop (a 3x2 grid periodic along the 3, and a ring as a graph and as a
# distributed graph): one pattern per communicator, each with its shape.
shapes topo_nbr 6 2
[[ $(grep -c '^  G[0-9]*:' topo_nbr-6.txt) -eq 3 ]] || fail "topo_nbr: one pattern per communicator"
grep -A3 '^  G' topo_nbr-6.txt | grep -q '^    shape: 2-D halo, quality 100% (18 of 18 edges)$' ||
  fail "topo_nbr: the grid's halo"
for kind in graph 'distributed graph'; do
  grep -qx "      grid 6; periodic x; neighbours 3-point; bytes -x 2, +x 2; topology $kind" topo_nbr-6.txt ||
    fail "topo_nbr: the ring on the $kind"
done

grep -q 'unclassified\|partial' ./*.txt && fail "a shape came out unclassified or partial"
echo "ok"
