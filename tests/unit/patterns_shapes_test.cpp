// Shapes of global patterns from hand-made edge sets: each shape exact, with
// one edge dropped (partial, the edge listed as missing) and with one extra
// edge (partial, listed as extra). The expected edges are written out here
// independently of the classifier's generators.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {
namespace {

using Edges = std::vector<std::pair<int32_t, int32_t>>;
using Params = std::vector<std::pair<std::string, std::string>>;

// A global pattern with these edges, one message of `bytes` each.
GlobalPattern with_edges(Edges e, uint64_t bytes = 8) {
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  GlobalPattern g;
  g.edges = e;
  for (const auto& [a, b] : e) g.channels.push_back({a, b, 0, 0, 1, bytes, 0});
  g.messages = e.size();
  return g;
}

Edges without(Edges e, std::pair<int32_t, int32_t> drop) {
  e.erase(std::remove(e.begin(), e.end(), drop), e.end());
  return e;
}

Edges with(Edges e, std::pair<int32_t, int32_t> add) {
  e.push_back(add);
  return e;
}

// Neighbours on an nx x ny x nz grid (x fastest) at offsets with at most
// `k` nonzero components, across the ends where `px`, `py`, `pz`.
Edges grid(int nx, int ny, int nz, int k, bool px, bool py, bool pz) {
  std::set<std::pair<int32_t, int32_t>> out;
  auto wrap = [](int v, int n, bool periodic, bool& ok) {
    if (v >= 0 && v < n) return v;
    if (!periodic) ok = false;
    return (v + n) % n;
  };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
              const int moved = (dx != 0) + (dy != 0) + (dz != 0);
              if (moved == 0 || moved > k || (nz == 1 && dz) || (ny == 1 && dy)) continue;
              bool ok = true;
              const int x2 = wrap(x + dx, nx, px, ok), y2 = wrap(y + dy, ny, py, ok),
                        z2 = wrap(z + dz, nz, pz, ok);
              const int a = x + nx * (y + ny * z), b = x2 + nx * (y2 + ny * z2);
              if (ok && a != b) out.emplace(a, b);
            }
  return Edges(out.begin(), out.end());
}

constexpr std::pair<int32_t, int32_t> kNone{-1, -1};

// Without `drop` the edges are still `name`, partial, `drop` missing; with
// `add` they are, `add` extra (kNone: not tried).
void expect_partials(const Edges& edges, int32_t ranks, const std::string& name,
                     std::pair<int32_t, int32_t> drop, std::pair<int32_t, int32_t> add) {
  if (drop != kNone) {
    ASSERT_EQ(std::count(edges.begin(), edges.end(), drop), 1);
    const Shape s = classify(with_edges(without(edges, drop)), ranks);
    EXPECT_EQ(s.title(), name + ", partial (1 edge missing)");
    EXPECT_EQ(s.missing, (Edges{drop}));
    EXPECT_TRUE(s.extra.empty());
  }
  if (add != kNone) {
    const Shape s = classify(with_edges(with(edges, add)), ranks);
    EXPECT_EQ(s.title(), name + ", partial (1 edge extra)");
    EXPECT_EQ(s.extra, (Edges{add}));
    EXPECT_TRUE(s.missing.empty());
  }
}

// A halo's title, grid, periodic axes and neighbour set, in one line.
std::string halo(const Shape& s) {
  return s.title() + "; " + s.param("grid") + "; " + s.param("periodic") + "; " +
         s.param("neighbours");
}

TEST(PatternsShapes, RingAndShift) {
  Edges ring;
  for (int r = 0; r < 6; ++r) ring.emplace_back(r, (r + 1) % 6);
  Shape s = classify(with_edges(ring), 6);
  EXPECT_EQ(s.kind, ShapeKind::kRing);
  EXPECT_EQ(s.title(), "ring");
  EXPECT_EQ(s.params, (Params{{"distance", "1"}, {"direction", "+"}, {"periodic", "yes"}}));
  EXPECT_DOUBLE_EQ(s.quality, 1.0);

  expect_partials(ring, 6, "ring", {2, 3}, {0, 3});
  EXPECT_EQ(classify(with_edges(without(ring, {2, 3})), 6).matched, 5u);

  // Two ranks down, not round: a shift.
  Edges shift;
  for (int r = 2; r < 7; ++r) shift.emplace_back(r, r - 2);
  s = classify(with_edges(shift), 7);
  EXPECT_EQ(s.title(), "shift");
  EXPECT_EQ(s.param("distance"), "2");
  EXPECT_EQ(s.param("direction"), "-");
  EXPECT_EQ(s.param("periodic"), "no");
}

// A chain whose stages wait for the one before them (a blocking receive,
// then the send on), block after block, is a pipeline; the same edges with
// posted receives, or with stages that send before they receive (each
// passes its own block on while it takes the next: a shift), are not.
TEST(PatternsShapes, Pipeline) {
  constexpr int32_t kStages = 5, kBlocks = 4, kSteps = 2;
  Edges chain;
  for (int32_t r = 0; r + 1 < kStages; ++r) chain.emplace_back(r, r + 1);
  auto stream = [&](const Edges& edges, bool blocking, bool send_first) {
    GlobalPattern g = with_edges(edges);
    for (int32_t r = 0; r < kStages; ++r) {
      std::vector<Hop> hops;
      const bool up = r > 0 && std::count(edges.begin(), edges.end(), std::pair{r - 1, r});
      const bool down = std::count(edges.begin(), edges.end(), std::pair{r, r + 1});
      for (int32_t i = 0; i < kSteps * kBlocks; ++i) {
        if (send_first && down) hops.push_back({r + 1, true, false});
        if (up) hops.push_back({r - 1, false, blocking});
        if (!send_first && down) hops.push_back({r + 1, true, false});
      }
      g.order.push_back(GlobalPattern::Order::of(r, hops, kSteps));
    }
    return classify(g, kStages);
  };
  Shape s = stream(chain, true, false);
  EXPECT_EQ(s.kind, ShapeKind::kPipeline);
  EXPECT_EQ(s.title(), "pipeline");
  EXPECT_EQ(s.params, (Params{{"stages", "5"}, {"direction", "+"}, {"blocks", "4 per iteration"}}));
  EXPECT_DOUBLE_EQ(s.quality, 1.0);
  s = stream(without(chain, {2, 3}), true, false);
  EXPECT_EQ(s.title(), "pipeline, partial (1 edge missing)");
  EXPECT_EQ(s.missing, (Edges{{2, 3}}));
  EXPECT_EQ(stream(chain, false, false).title(), "shift");
  EXPECT_EQ(stream(chain, true, true).title(), "shift");
}

// A ring round which each rank sends 2 (p - 1) messages per occurrence
// of its pattern is a ring allreduce in point-to-point; one message per
// occurrence (a token) stays a ring.
TEST(PatternsShapes, RingCollective) {
  constexpr int32_t kRanks = 5, kCalls = 3;
  Edges ring;
  for (int32_t r = 0; r < kRanks; ++r) ring.emplace_back(r, (r + 1) % kRanks);
  auto rounds = [&](int32_t per_call) {
    GlobalPattern g = with_edges(ring, 128);
    for (int32_t r = 0; r < kRanks; ++r) {
      std::vector<Hop> hops;
      for (int32_t i = 0; i < kCalls * per_call; ++i) {
        hops.push_back({(r + 1) % kRanks, true, false});
        hops.push_back({(r + kRanks - 1) % kRanks, false, false});
      }
      g.order.push_back(GlobalPattern::Order::of(r, hops, kCalls));
    }
    return classify(g, kRanks);
  };
  const Shape s = rounds(2 * (kRanks - 1));
  EXPECT_EQ(s.kind, ShapeKind::kRingCollective);
  EXPECT_EQ(s.title(), "ring collective");
  EXPECT_EQ(s.params, (Params{{"phases", "reduce-scatter 4, allgather 4"},
                              {"steps", "8 per iteration"},
                              {"direction", "+"},
                              {"bytes", "128"}}));
  EXPECT_EQ(rounds(1).title(), "ring");
  EXPECT_EQ(rounds(kRanks - 1).title(), "ring");
}

TEST(PatternsShapes, Halo2D) {
  // 4 columns (x) by 3 rows (y), not periodic: MPI order 3x4.
  const Edges open = grid(4, 3, 1, 1, false, false, false);
  ASSERT_EQ(open.size(), 34u);
  Shape s = classify(with_edges(open), 12);
  EXPECT_EQ(s.kind, ShapeKind::kHalo);
  EXPECT_EQ(halo(s), "2-D halo; 3x4; none; 5-point");
  EXPECT_EQ(s.param("bytes"), "-x 8, +x 8, -y 8, +y 8");

  s = classify(with_edges(without(open, {5, 6})), 12);
  EXPECT_EQ(halo(s), "2-D halo, partial (1 edge missing); 3x4; none; 5-point");
  EXPECT_EQ(s.missing, (Edges{{5, 6}}));
  s = classify(with_edges(with(open, {0, 5})), 12);  // a diagonal
  EXPECT_EQ(halo(s), "2-D halo, partial (1 edge extra); 3x4; none; 5-point");
  EXPECT_EQ(s.extra, (Edges{{0, 5}}));

  // Periodic on both axes, 3 columns by 4 rows; x messages 80 bytes, y 160.
  const Edges torus = grid(3, 4, 1, 1, true, true, false);
  GlobalPattern g = with_edges(torus);
  for (Channel& c : g.channels) c.bytes = (c.to / 3 == c.from / 3) ? 80 : 160;
  s = classify(g, 12);
  EXPECT_EQ(halo(s), "2-D halo; 4x3; x,y; 5-point");
  EXPECT_EQ(s.param("bytes"), "-x 80, +x 80, -y 160, +y 160");

  // Periodic in y only, 9-point.
  const Edges nine = grid(4, 4, 1, 2, false, true, false);
  s = classify(with_edges(nine), 16);
  EXPECT_EQ(halo(s), "2-D halo; 4x4; y; 9-point");
}

TEST(PatternsShapes, Halo1DAnd3D) {
  Edges line;
  for (int r = 0; r + 1 < 5; ++r) line.insert(line.end(), {{r, r + 1}, {r + 1, r}});
  Shape s = classify(with_edges(line), 5);
  EXPECT_EQ(halo(s), "1-D halo; 5; none; 3-point");

  const Edges seven = grid(3, 2, 2, 1, false, false, false);
  s = classify(with_edges(seven), 12);
  EXPECT_EQ(halo(s), "3-D halo; 2x2x3; none; 7-point");
  expect_partials(seven, 12, "3-D halo", {0, 6}, kNone);

  const Edges full = grid(3, 3, 3, 3, false, false, false);
  s = classify(with_edges(full), 27);
  EXPECT_EQ(halo(s), "3-D halo; 3x3x3; none; 27-point");
  const Edges nineteen = grid(3, 3, 3, 2, false, false, false);
  s = classify(with_edges(with(nineteen, {0, 26})), 27);
  EXPECT_EQ(halo(s), "3-D halo, partial (1 edge extra); 3x3x3; none; 19-point");
  EXPECT_EQ(s.extra, (Edges{{0, 26}}));
}

// Sweeps on 3 columns by 2 rows: from rank 0 towards +x+y, then from rank 5
// towards -x-y (`dirs`), each rank receiving from upstream (blocking) before
// it sends downstream, `blocks` blocks per sweep, two iterations.
GlobalPattern sweeps(bool blocking, std::pair<int32_t, int32_t> drop = {-1, -1},
                     std::vector<int> dirs = {+1, -1}, int blocks = 2) {
  const int nx = 3, ny = 2;
  Edges edges;
  std::vector<std::vector<Hop>> hops(6);
  for (int it = 0; it < 2; ++it)
    for (int dir : dirs)
      for (int block = 0; block < blocks; ++block)
        for (int r = 0; r < nx * ny; ++r) {
          const int x = r % nx, y = r / nx;
          std::vector<Hop>& mine = hops[static_cast<std::size_t>(r)];
          auto hop = [&](int from, int to, bool inside) {
            if (!inside || std::make_pair(from, to) == drop) return;
            if (from == r) mine.push_back({to, true, false});
            if (to == r) mine.push_back({from, false, blocking});
            edges.emplace_back(from, to);
          };
          hop(r - dir, r, x - dir >= 0 && x - dir < nx);       // from upstream in x
          hop(r - dir * nx, r, y - dir >= 0 && y - dir < ny);  // in y
          hop(r, r + dir, x + dir >= 0 && x + dir < nx);       // downstream in x
          hop(r, r + dir * nx, y + dir >= 0 && y + dir < ny);  // in y
        }
  GlobalPattern g = with_edges(edges);
  for (int32_t r = 0; r < nx * ny; ++r)
    g.order.push_back(GlobalPattern::Order::of(r, hops[static_cast<std::size_t>(r)], 2));
  return g;
}

TEST(PatternsShapes, Wavefront) {
  Shape s = classify(sweeps(true), 6);
  EXPECT_EQ(s.kind, ShapeKind::kWavefront);
  EXPECT_EQ(s.title(), "wavefront");
  EXPECT_EQ(s.param("grid"), "2x3");
  EXPECT_EQ(s.param("sweeps"), "2 per iteration");
  EXPECT_EQ(s.param("blocks"), "2 per sweep");
  EXPECT_EQ(s.param("order"), "+x+y from 0, -x-y from 5");
  // The same messages with posted receives are a halo exchange.
  s = classify(sweeps(false), 6);
  EXPECT_EQ(halo(s), "2-D halo; 2x3; none; 5-point");

  s = classify(sweeps(true, {1, 4}), 6);
  EXPECT_EQ(s.title(), "wavefront, partial (1 edge missing)");
  EXPECT_EQ(s.missing, (Edges{{1, 4}}));
  GlobalPattern extra = sweeps(true);
  extra.edges.emplace_back(5, 0);
  std::sort(extra.edges.begin(), extra.edges.end());
  s = classify(extra, 6);
  EXPECT_EQ(s.title(), "wavefront, partial (1 edge extra)");
  EXPECT_EQ(s.extra, (Edges{{5, 0}}));
}

// One direction per iteration (sweep_fn's one function per direction): the
// iterations' sweeps run the same way one after another, and the pipelined
// blocks of each are a parameter, not more sweeps or one long one.
TEST(PatternsShapes, WavefrontBlocksPerSweep) {
  Shape s = classify(sweeps(true, {-1, -1}, {+1}, 3), 6);
  EXPECT_EQ(s.title(), "wavefront");
  EXPECT_EQ(s.param("sweeps"), "1 per iteration");
  EXPECT_EQ(s.param("blocks"), "3 per sweep");
  EXPECT_EQ(s.param("order"), "+x+y from 0");
  s = classify(sweeps(true, {-1, -1}, {-1, +1}, 4), 6);
  EXPECT_EQ(s.param("sweeps"), "2 per iteration");
  EXPECT_EQ(s.param("blocks"), "4 per sweep");
  EXPECT_EQ(s.param("order"), "-x-y from 5, +x+y from 0");
}

TEST(PatternsShapes, Butterfly) {
  Edges b;
  for (int r = 0; r < 16; ++r)
    for (int bit : {1, 2, 4, 8}) b.emplace_back(r, r ^ bit);
  const Shape s = classify(with_edges(b), 16);
  EXPECT_EQ(s.title(), "butterfly");
  EXPECT_EQ(s.params, (Params{{"stages", "4"}, {"distances", "1,2,4,8"}}));
  expect_partials(b, 16, "butterfly", {3, 11}, {0, 3});
}

TEST(PatternsShapes, Trees) {
  // Binomial, root 3 of 8, towards the leaves: relative rank v's parent is
  // v without its highest bit.
  Edges binomial;
  for (int v = 1; v < 8; ++v) {
    int high = 1;
    while (high * 2 <= v) high *= 2;
    binomial.emplace_back((v - high + 3) % 8, (v + 3) % 8);
  }
  Shape s = classify(with_edges(binomial), 8);
  EXPECT_EQ(s.title(), "binomial tree");
  EXPECT_EQ(s.param("root"), "3");
  EXPECT_EQ(s.param("direction"), "down (bcast, scatter)");
  EXPECT_EQ(s.param("fan-out"), "3");
  expect_partials(binomial, 8, "binomial tree", {5, 1}, kNone);

  // Binary, root 0 of 7, towards the root.
  Edges binary;
  for (int v = 1; v < 7; ++v) binary.emplace_back(v, (v - 1) / 2);
  s = classify(with_edges(binary), 7);
  EXPECT_EQ(s.title(), "binary tree");
  EXPECT_EQ(s.param("root"), "0");
  EXPECT_EQ(s.param("direction"), "up (reduce, gather)");
  EXPECT_EQ(s.param("fan-out"), "2");

  // Linear: root 2 of 6 sends to all.
  Edges linear;
  for (int r = 0; r < 6; ++r)
    if (r != 2) linear.emplace_back(2, r);
  s = classify(with_edges(with(linear, {4, 5})), 6);
  EXPECT_EQ(s.title(), "linear tree, partial (1 edge extra)");
  EXPECT_EQ(s.param("root"), "2");
  EXPECT_EQ(s.param("fan-out"), "5");
  EXPECT_EQ(s.extra, (Edges{{4, 5}}));
}

TEST(PatternsShapes, MasterWorker) {
  Edges star;
  for (int w = 1; w < 5; ++w) star.insert(star.end(), {{0, w}, {w, 0}});
  GlobalPattern g = with_edges(star);
  for (Channel& c : g.channels) {
    c.messages = 3;
    if (c.to == 0) c.wildcard = 3;
  }
  Shape s = classify(g, 5);
  EXPECT_EQ(s.title(), "master-worker");
  EXPECT_EQ(s.param("master"), "0");
  EXPECT_EQ(s.param("workers"), "4");
  EXPECT_EQ(s.param("tasks"), "12");
  EXPECT_EQ(s.param("wildcard returns"), "12 of 12");
  expect_partials(star, 5, "master-worker", {3, 0}, {1, 2});
}

TEST(PatternsShapes, PairwiseAndTranspose) {
  const Edges pairs = {{0, 1}, {1, 0}, {2, 3}, {3, 2}, {4, 5}, {5, 4}};
  Shape s = classify(with_edges(pairs), 6);
  EXPECT_EQ(s.title(), "pairwise");
  EXPECT_EQ(s.param("pairs"), "3");
  EXPECT_EQ(s.param("partner"), "rank xor 1");
  expect_partials(pairs, 6, "pairwise", {5, 4}, kNone);

  // Rank (x, y) of a 3x3 grid with (y, x); the diagonal stays home.
  const Edges mirror = {{1, 3}, {3, 1}, {2, 6}, {6, 2}, {5, 7}, {7, 5}};
  EXPECT_EQ(classify(with_edges(mirror), 9).params, (Params{{"pairs", "3"}, {"grid", "3x3"}}));
  EXPECT_EQ(classify(with_edges(mirror), 9).title(), "transpose");
  // A stray message between two ranks that have their partners (one
  // between two idle diagonal ranks would make a fourth pair, one edge
  // short, which fits as well).
  expect_partials(mirror, 9, "transpose", {6, 2}, {1, 2});
}

TEST(PatternsShapes, IrregularAndUnclassified) {
  Edges irregular;
  for (auto [a, b] : Edges{{0, 2}, {0, 5}, {1, 4}, {2, 3}, {3, 5}, {1, 3}, {4, 5}, {0, 4}})
    irregular.insert(irregular.end(), {{a, b}, {b, a}});
  Shape s = classify(with_edges(irregular), 6);
  EXPECT_EQ(s.title(), "irregular neighbourhood");
  EXPECT_EQ(s.param("ranks"), "6");
  EXPECT_EQ(s.param("degree"), "2..3");
  EXPECT_EQ(s.param("symmetric"), "100%");

  const Edges loose = {{0, 3}, {0, 5}, {2, 6}, {4, 1}, {6, 4}};
  s = classify(with_edges(loose), 7);
  EXPECT_EQ(s.kind, ShapeKind::kUnclassified);
  EXPECT_EQ(s.title(), "unclassified");
  EXPECT_EQ(s.param("edges"), "5");
  EXPECT_EQ(s.param("out-degrees"), "1:3, 2:1");
}

TEST(PatternsShapes, MultilevelHalo) {
  // The same 2-D halo at three message sizes, as the levels of a V-cycle.
  const Edges open = grid(4, 3, 1, 1, false, false, false);
  GlobalPattern g = with_edges(open);
  g.channels.clear();
  for (uint64_t bytes : {256, 128, 64})
    for (const auto& [a, b] : open)
      g.channels.push_back({a, b, 0, static_cast<int64_t>(bytes), 1, bytes, 0});
  std::sort(g.channels.begin(), g.channels.end());
  Shape s = classify(g, 12);
  EXPECT_EQ(s.kind, ShapeKind::kMultilevel);
  EXPECT_EQ(s.title(), "multilevel 2-D halo");
  EXPECT_EQ(s.param("levels"), "3");
  EXPECT_EQ(s.param("bytes per level"), "256, 128, 64");
  EXPECT_EQ(s.param("ranks per level"), "12, 12, 12");
  EXPECT_EQ(s.param("grid per level"), "3x4, 3x4, 3x4");
  // Two sizes on the same edges are two fields, not levels; nor are three
  // that do not shrink by one factor.
  for (const std::vector<uint64_t>& sizes :
       {std::vector<uint64_t>{256, 64}, std::vector<uint64_t>{256, 128, 48}}) {
    GlobalPattern fields = with_edges(open);
    fields.channels.clear();
    for (uint64_t bytes : sizes)
      for (const auto& [a, b] : open) fields.channels.push_back({a, b, 0, 0, 1, bytes, 0});
    EXPECT_EQ(classify(fields, 12).title(), "2-D halo") << sizes.size();
  }
  // One level that is not the halo (a ring at 32 bytes): no multilevel.
  for (int r = 0; r < 12; ++r) g.channels.push_back({r, (r + 1) % 12, 0, 99, 1, 32, 0});
  s = classify(g, 12);
  EXPECT_NE(s.kind, ShapeKind::kMultilevel);
}

// A coarse level on every other rank of every other row: the 4x4 halo at
// 256 bytes, the 2x2 halo of ranks 0, 2, 8 and 10 at 128.
GlobalPattern two_levels(std::pair<int32_t, int32_t> drop) {
  Edges all = grid(4, 4, 1, 1, false, false, false);
  std::vector<Channel> channels;
  for (const auto& [a, b] : all) channels.push_back({a, b, 0, 1, 1, 256, 0});
  for (auto [a, b] : Edges{{0, 2}, {0, 8}, {2, 10}, {8, 10}})
    for (const auto& e : Edges{{a, b}, {b, a}})
      if (e != drop) {
        channels.push_back({e.first, e.second, 0, 2, 1, 128, 0});
        all.push_back(e);
      }
  GlobalPattern g = with_edges(all);
  g.channels = std::move(channels);
  return g;
}

TEST(PatternsShapes, MultilevelOnFewerRanks) {
  Shape s = classify(two_levels(kNone), 16);
  EXPECT_EQ(s.title(), "multilevel 2-D halo");
  EXPECT_EQ(s.params, (Params{{"levels", "2"},
                              {"bytes per level", "256, 128"},
                              {"ranks per level", "16, 4"},
                              {"grid per level", "4x4, 2x2"},
                              {"periodic", "none"},
                              {"neighbours", "5-point"}}));
  EXPECT_DOUBLE_EQ(s.quality, 1.0);
  // The coarse level's missing edge, in world ranks.
  s = classify(two_levels({8, 10}), 16);
  EXPECT_EQ(s.title(), "multilevel 2-D halo, partial (1 edge missing)");
  EXPECT_EQ(s.missing, (Edges{{8, 10}}));
  EXPECT_EQ(s.matched, 48u + 7u);
}

// What assemble keeps for the shapes: channels with their bytes and
// wildcard receives, and each rank's matched messages in its order, with
// the occurrences of its pattern. A message outside any channel's match
// (an unknown source) makes no hop.
TEST(PatternsGlobal, ChannelsAndOrder) {
  RankEvents a, b;
  a.rank = 0;
  b.rank = 1;
  for (int i = 0; i < 2; ++i) {
    Message send{Message::Kind::kSend, 1, 0, 3};
    send.bytes = 16;
    a.events.push_back(send);
    Message recv{Message::Kind::kRecv, 0, 0, 3};
    recv.blocking = true;
    recv.wildcard = true;
    b.events.push_back(recv);
  }
  a.events.push_back({Message::Kind::kRecv, 1, 0, 4});  // never sent
  Message posted{Message::Kind::kRecv, kAny, 0, 3};
  b.events.push_back(posted);  // a source nobody knows
  a.pattern_of = {0, 0, 0};
  b.pattern_of = {0, 0, 0};
  a.occurrences = {2};
  const std::vector<RankEvents> ranks = {a, b};
  const std::vector<GlobalPattern> g = assemble(ranks);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].channels, (std::vector<Channel>{{0, 1, 0, 3, 2, 32, 2}}));
  ASSERT_EQ(g[0].order.size(), 2u);
  EXPECT_EQ(g[0].order[0].rank, 0);
  EXPECT_EQ(g[0].order[0].occurrences, 2u);
  EXPECT_EQ(g[0].order[0].hops(), (std::vector<Hop>{{1, true, false, 3}, {1, true, false, 3}}));
  EXPECT_EQ(g[0].order[1].rank, 1);
  EXPECT_EQ(g[0].order[1].occurrences, 1u);  // none given
  EXPECT_EQ(g[0].order[1].hops(), (std::vector<Hop>{{0, false, true, 3}, {0, false, true, 3}}));
  EXPECT_EQ(g[0].shape.kind, ShapeKind::kUnclassified);  // classify() names it
  EXPECT_EQ(classify(g[0], 2).title(), "shift");
}

}  // namespace
}  // namespace tracefold::patterns
