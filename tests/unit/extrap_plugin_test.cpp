// Extrapolation plugins: the built-in CG pattern's functions, the registry,
// and the plugin path on synthetic traces of a butterfly exchange.
#include <gtest/gtest.h>

#include <set>

#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/plugin.hpp"
#include "tracefold/trace_io.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

namespace {

const PluginSequence& seq(const std::vector<PluginSequence>& all, const std::string& name) {
  for (const auto& s : all)
    if (s.name == name) return s;
  throw std::runtime_error("no sequence " + name);
}

std::vector<int64_t> at(const ExtrapPlugin& p, const std::string& name, int64_t rank,
                        int64_t world) {
  const auto all = p.sequences();
  return seq(all, name).values({rank, world, p.layout(world)});
}

}  // namespace

TEST(ExtrapPluginCg, LayoutIsNpbCgs) {
  const auto cg = make_cg_plugin();
  EXPECT_EQ(cg->layout(1), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(cg->layout(2), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(cg->layout(4), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(cg->layout(8), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(cg->layout(16), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(cg->layout(32), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(cg->layout(1 << 20), (std::vector<int64_t>{1024, 1024}));
  for (int64_t bad : {0, 3, 12, 24, 1000}) {
    try {
      cg->layout(bad);
      FAIL() << bad << " ranks accepted";
    } catch (const PluginError& e) {
      EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
    }
  }
}

// Row partners: rank 5 of 16 sits in row 1, column 1 of a 4x4 array.
TEST(ExtrapPluginCg, RowPartnersArePowerOfTwoDistancesInTheRow) {
  const auto cg = make_cg_plugin();
  EXPECT_EQ(at(*cg, "row-down", 5, 16), (std::vector<int64_t>{7, 4}));
  EXPECT_EQ(at(*cg, "row-up", 5, 16), (std::vector<int64_t>{4, 7}));
  // 32 ranks: 4 rows of 8; rank 13 is row 1, column 5.
  EXPECT_EQ(at(*cg, "row-down", 13, 32), (std::vector<int64_t>{9, 15, 12}));
  for (int64_t p : {2, 4, 8, 16, 32, 64, 128}) {
    const int64_t cols = cg->layout(p)[0];
    for (int64_t r = 0; r < p; ++r) {
      const auto row = at(*cg, "row-up", r, p);
      std::set<int64_t> distinct(row.begin(), row.end());
      EXPECT_EQ(distinct.size(), row.size());
      for (int64_t q : row) {
        EXPECT_EQ(q / cols, r / cols) << "partner " << q << " of " << r << " leaves the row";
        const int64_t d = (q % cols) ^ (r % cols);
        EXPECT_EQ(d & (d - 1), 0) << "distance " << d << " is no power of two";
      }
    }
  }
}

// The transpose partner is an involution (a pairing), as an exchange needs,
// and matches tests/apps/cg.c's formulas at both array shapes.
TEST(ExtrapPluginCg, TransposeIsAPairing) {
  const auto cg = make_cg_plugin();
  EXPECT_EQ(at(*cg, "transpose", 1, 16), (std::vector<int64_t>{4}));
  EXPECT_EQ(at(*cg, "transpose", 5, 16), (std::vector<int64_t>{5}));
  EXPECT_EQ(at(*cg, "transpose", 2, 8), (std::vector<int64_t>{4}));
  EXPECT_EQ(at(*cg, "transpose", 3, 8), (std::vector<int64_t>{5}));
  for (int64_t p : {2, 4, 8, 16, 32, 64, 128, 256}) {
    for (int64_t r = 0; r < p; ++r) {
      const int64_t q = at(*cg, "transpose", r, p).at(0);
      ASSERT_GE(q, 0);
      ASSERT_LT(q, p);
      EXPECT_EQ(at(*cg, "transpose", q, p).at(0), r) << p << " ranks, rank " << r;
    }
  }
}

TEST(ExtrapPluginCg, Numbers) {
  const auto cg = make_cg_plugin();
  EXPECT_EQ(at(*cg, "levels-down", 0, 32), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(at(*cg, "levels-up", 0, 32), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(at(*cg, "powers-down", 0, 32), (std::vector<int64_t>{4, 2, 1}));
  EXPECT_EQ(at(*cg, "powers-up", 0, 32), (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(at(*cg, "L", 0, 32), (std::vector<int64_t>{3}));
  EXPECT_EQ(at(*cg, "L", 0, 2), (std::vector<int64_t>{1}));
}

namespace {

// A butterfly: rank r of 2^k exchanges with r XOR 2^i, i = 0 .. k-1.
class Butterfly final : public ExtrapPlugin {
 public:
  std::string name() const override { return "test-butterfly"; }
  std::string summary() const override { return "r XOR 2^i"; }
  std::vector<std::string> size_names() const override { return {"P"}; }
  std::vector<int64_t> layout(int64_t world) const override {
    if (world < 2 || (world & (world - 1))) throw PluginError("not a power of two");
    return {world};
  }
  std::vector<PluginSequence> sequences() const override {
    return {{"xor", "r XOR 2^i", true,
             [](const PluginContext& c) {
               std::vector<int64_t> v;
               for (int64_t b = 1; b < c.world; b <<= 1) v.push_back(c.rank ^ b);
               return v;
             }},
            {"levels", "0 .. k-1", false,
             [](const PluginContext& c) {
               std::vector<int64_t> v;
               for (int64_t i = 0; (int64_t{1} << i) < c.world; ++i) v.push_back(i);
               return v;
             }},
            {"k", "log2 P", false, [](const PluginContext& c) {
               int64_t k = 0;
               while ((int64_t{1} << k) < c.world) ++k;
               return std::vector<int64_t>{k};
             }}};
  }
};

// The butterfly's trace at p ranks, `steps` times over: one MPI_Send node
// heading a loop over the k partners, tag = level, 100 items.
ExtrapInput butterfly_trace(int p, int steps, int broken_rank = -1) {
  int k = 0;
  while ((1 << k) < p) ++k;
  std::string peers;
  for (int r = 0; r < p; ++r) {
    std::string one;
    for (int i = 0; i < k; ++i) {
      int q = r ^ (1 << i);
      if (r == broken_rank && i == 0) q = (r + 1) % p;
      one += (one.empty() ? "" : " ") + std::to_string(((q - r) % p + p) % p);
    }
    peers += (peers.empty() ? "" : " ; ") + std::string("(") + one + ")*" + std::to_string(steps) +
             " @ <0 " + std::to_string(r) + ">";
  }
  std::string levels;
  for (int i = 0; i < k; ++i) levels += (levels.empty() ? "" : " ") + std::to_string(i);
  const std::string n = std::to_string(p), kk = std::to_string(k), s = std::to_string(steps);
  const std::string text =
      "tracefold-trace 2\nworld " + n +
      "\nlossy -\nsites 1\nsite 0 app+0x10\ncomms 1\ncomm 0 members *\nnodes 1\n"
      "node 0 MPI_Send site=0 ranks=*\n  loop 0 members 1*" +
      s + " @ *\n  loop 0 iters " + kk + "*" + s + " @ *\n  count 1*" + std::to_string(k * steps) +
      " @ *\n  field peer " + peers + "\n  field tag (" + levels + ")*" + s +
      " @ *\n  field count 100*" + std::to_string(k * steps) + " @ *\n  field dtype 9*" +
      std::to_string(k * steps) + " @ *\n  field dsize 8*" + std::to_string(k * steps) +
      " @ *\nend\n";
  return {"bf-" + n + ".tf", parse_trace(text, "bf-" + n + ".tf")};
}

void register_butterfly() {
  if (!find_plugin("test-butterfly")) register_plugin(std::make_shared<Butterfly>());
}

}  // namespace

TEST(ExtrapPluginRegistry, BuiltInsAndRegistration) {
  ASSERT_NE(find_plugin("cg"), nullptr);
  EXPECT_EQ(registered_plugins().front()->name(), "cg");
  EXPECT_EQ(find_plugin("no-such"), nullptr);
  EXPECT_THROW(register_plugin(make_cg_plugin()), std::invalid_argument);
  register_butterfly();
  EXPECT_NE(find_plugin("test-butterfly"), nullptr);
}

// A registered plugin extrapolates a pattern the row-major path cannot
// read: every rank's partners, the loop length k and the tags follow it.
TEST(ExtrapPluginPath, ButterflyByName) {
  register_butterfly();
  const std::vector<ExtrapInput> in{butterfly_trace(2, 3), butterfly_trace(4, 3),
                                    butterfly_trace(8, 3)};
  ExtrapOptions opts;
  opts.ranks = 32;
  opts.plugin = "test-butterfly";
  const ExtrapResult r = extrapolate(in, opts);
  const ExtrapInput want = butterfly_trace(32, 3);
  ASSERT_EQ(r.trace.nodes.size(), 1u);
  const Node& got = r.trace.nodes[0];
  const Node& real = want.trace.nodes[0];
  for (int32_t rank = 0; rank < 32; ++rank) {
    for (const char* f : {"peer", "tag", "count"}) {
      const FieldId id = *FieldTable::find(f);
      ASSERT_NE(got.field(id), nullptr) << f;
      ASSERT_NE(got.field(id)->for_rank(rank), nullptr) << f << " rank " << rank;
      EXPECT_EQ(got.field(id)->for_rank(rank)->to_vector(),
                real.field(id)->for_rank(rank)->to_vector())
          << f << " rank " << rank;
    }
    EXPECT_EQ(got.loops.at(0).iters.for_rank(rank)->to_vector(),
              real.loops.at(0).iters.for_rank(rank)->to_vector());
    EXPECT_EQ(got.count.for_rank(rank)->to_vector(), real.count.for_rank(rank)->to_vector());
  }
  bool named = false;
  for (const auto& line : r.explanation)
    named = named || line.find("field peer: plugin test-butterfly: (<xor>)") != std::string::npos;
  EXPECT_TRUE(named);
}

// Without --plugin the row-major path fails first, then the plugins are
// tried; the explanation says which one explained the pattern.
TEST(ExtrapPluginPath, TriedWhenTheStencilPathFails) {
  register_butterfly();
  const std::vector<ExtrapInput> in{butterfly_trace(2, 2), butterfly_trace(4, 2),
                                    butterfly_trace(8, 2), butterfly_trace(16, 2)};
  ExtrapOptions opts;
  opts.ranks = 64;
  const ExtrapResult r = extrapolate(in, opts);
  ASSERT_FALSE(r.explanation.empty());
  EXPECT_NE(r.explanation.front().find("explains the pattern"), std::string::npos)
      << r.explanation.front();
  EXPECT_EQ(r.trace.world_size, 64);
  opts.try_plugins = false;
  EXPECT_THROW(extrapolate(in, opts), ExtrapError);
}

// A rank whose partner the plugin does not give, and a count it cannot
// take, stop extrapolation with the input, node and field named.
TEST(ExtrapPluginPath, Errors) {
  register_butterfly();
  ExtrapOptions opts;
  opts.plugin = "test-butterfly";
  opts.ranks = 16;
  try {
    extrapolate({butterfly_trace(2, 2), butterfly_trace(4, 2), butterfly_trace(8, 2, 5)}, opts);
    FAIL() << "a rank off the pattern was extrapolated";
  } catch (const ExtrapError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("node 0 (MPI_Send"), std::string::npos) << what;
    EXPECT_NE(what.find("field peer"), std::string::npos) << what;
    EXPECT_NE(what.find("does not explain"), std::string::npos) << what;
  }
  opts.ranks = 12;
  try {
    extrapolate({butterfly_trace(2, 2), butterfly_trace(4, 2), butterfly_trace(8, 2)}, opts);
    FAIL() << "12 ranks accepted";
  } catch (const ExtrapError& e) {
    EXPECT_NE(std::string(e.what()).find("--ranks 12: plugin test-butterfly: not a power of two"),
              std::string::npos)
        << e.what();
  }
  opts.plugin = "nope";
  EXPECT_THROW(extrapolate({butterfly_trace(2, 2), butterfly_trace(4, 2)}, opts), ExtrapError);
}
