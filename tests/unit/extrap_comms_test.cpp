// Extrapolation of programs that work on communicators other than the
// world, and the cross-check of a recorded MPI_Cart_create grid, on
// synthetic traces folded and merged like recorded ones.
#include <gtest/gtest.h>

#include "trace_compare.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/grid.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

namespace {

constexpr int64_t kCart = 0x40000001, kRow = 0x40000002;

// A periodic sx-by-sy grid (x fastest): MPI_Cart_create with `dims` as
// recorded (MPI order), MPI_Comm_split of the grid into rows (color = y,
// key = x), then per step a shift along the row on the row communicator,
// an Allreduce over the row and a north exchange on the grid.
struct GridProgram {
  int32_t sx = 3, sy = 3;
  std::vector<int64_t> dims;  // empty: {sy, sx}
  int steps = 3;
  bool open = false;  ///< the north exchange does not wrap around (MPI_PROC_NULL)

  int32_t size() const { return sx * sy; }
  static Event ev(const char* op, SiteId site) {
    Event e;
    e.op = *OpTable::find(op);
    e.site = site;
    return e;
  }
  static void put(Event& e, const char* f, int64_t v) {
    e.set(FieldTable::intern(f, FieldKind::kScalar), v);
  }
  static SiteTable sites() {
    SiteTable t;
    for (uint64_t i = 0; i < 5; ++i) t.intern(CallSite{{Frame{"grid", 0x100 + 0x10 * i}}});
    return t;
  }
  CommTable comms(int32_t rank) const {
    CommTable c;
    c.define_world(size());
    CommGroup all, row;
    for (int32_t r = 0; r < size(); ++r) all.members.push_back(r);
    for (int32_t x = 0; x < sx; ++x) row.members.push_back(rank / sx * sx + x);
    c.define(kCart, all);
    c.define(kRow, row);
    return c;
  }
  std::vector<Event> events(int32_t rank) const {
    const int32_t x = rank % sx, y = rank / sx;
    std::vector<Event> out;
    Event cart = ev("MPI_Cart_create", 0);
    put(cart, "comm", 0);
    put(cart, "newcomm", kCart);
    const std::vector<int64_t> d = dims.empty() ? std::vector<int64_t>{sy, sx} : dims;
    put(cart, "ndims", static_cast<int64_t>(d.size()));
    cart.set_list(FieldTable::intern("dims", FieldKind::kList), d);
    cart.set_list(FieldTable::intern("periods", FieldKind::kList),
                  std::vector<int64_t>(d.size(), 1));
    out.push_back(cart);
    Event split = ev("MPI_Comm_split", 1);
    put(split, "comm", kCart);
    put(split, "color", y);
    put(split, "key", x);
    put(split, "newcomm", kRow);
    out.push_back(split);
    for (int s = 0; s < steps; ++s) {
      Event shift = ev("MPI_Sendrecv", 2);
      shift.set(FieldTable::peer(), (x + 1) % sx);
      put(shift, "rpeer", (x + sx - 1) % sx);
      put(shift, "comm", kRow);
      put(shift, "count", 8);
      out.push_back(shift);
      Event red = ev("MPI_Allreduce", 3);
      put(red, "comm", kRow);
      put(red, "count", 1);
      out.push_back(red);
      Event north = ev("MPI_Sendrecv", 4);
      const bool first = open && y == 0, last = open && y == sy - 1;
      north.set(FieldTable::peer(), first ? kNull : ((y + sy - 1) % sy) * sx + x);
      put(north, "rpeer", last ? kNull : ((y + 1) % sy) * sx + x);
      put(north, "comm", kCart);
      put(north, "count", 16);
      out.push_back(north);
    }
    return out;
  }
  Trace trace() const {
    Trace all;
    for (int32_t r = 0; r < size(); ++r) {
      const CommTable c = comms(r);
      Folder f(r);
      for (Event e : events(r)) {
        encode_relative(e, r, c);
        f.append(e);
      }
      Trace one = f.finish(size(), sites(), c);
      all = r == 0 ? std::move(one) : merge_traces(all, one);
    }
    return all;
  }
};

std::vector<ExtrapInput> inputs(const std::vector<std::pair<int32_t, int32_t>>& grids,
                                const std::vector<int64_t>& dims = {}) {
  std::vector<ExtrapInput> in;
  for (auto [sx, sy] : grids) {
    GridProgram g;
    g.sx = sx;
    g.sy = sy;
    g.dims = dims;
    in.push_back({"g" + std::to_string(sx * sy) + ".tf", g.trace()});
  }
  return in;
}

using tracefold::testing::expect_same_ranks;

std::string error_of(const std::vector<ExtrapInput>& in, int64_t ranks) {
  ExtrapOptions o;
  o.ranks = ranks;
  o.try_plugins = false;
  try {
    extrapolate(in, o);
  } catch (const ExtrapError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(ExtrapComms, RecordedCartIsReadFastestFirst) {
  GridProgram g;
  g.sx = 4;
  g.sy = 3;
  const auto cart = recorded_cart(g.trace(), "g.tf");
  ASSERT_TRUE(cart.has_value());
  EXPECT_EQ(cart->topology.sizes, (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(cart->topology.periodic, (std::vector<bool>{true, true}));
  EXPECT_EQ(cart->mpi_index, (std::vector<int>{1, 0}));
  EXPECT_NE(cart->node.find("MPI_Cart_create"), std::string::npos) << cart->node;
}

// Without the recorded grid, every rank has the same relative endpoints on
// the world-like grid communicator only in y: the rows are what say x.
// With it, the rows and the split's color and key extrapolate: 2x2, 3x3 and
// 4x4 grids to 5x5, compared rank by rank with the 5x5 trace made directly.
TEST(ExtrapComms, RowCommunicatorsAndSplitArgumentsExtrapolate) {
  const auto in = inputs({{2, 2}, {3, 3}, {4, 4}});
  ExtrapOptions o;
  o.ranks = 25;
  o.try_plugins = false;
  const ExtrapResult res = extrapolate(in, o);
  EXPECT_EQ(res.target.sizes, (std::vector<int64_t>{5, 5}));
  GridProgram want;
  want.sx = want.sy = 5;
  expect_same_ranks(res.trace, want.trace());
  EXPECT_EQ(res.trace.comms, want.trace().comms);
  bool cart_source = false, row_shape = false, color = false;
  for (const auto& l : res.explanation) {
    cart_source =
        cart_source || l.find("x=4 (MPI_Cart_create dims[1], the endpoints") != std::string::npos;
    row_shape = row_shape || l == "communicator " + std::to_string(kRow) + ": groups along x";
    color = color || l.find("field color: <0 + [1]*y>") != std::string::npos;
  }
  EXPECT_TRUE(cart_source);
  EXPECT_TRUE(row_shape);
  EXPECT_TRUE(color);
}

// Between the inputs, on uneven grids (MPI_Dims_create's 3x2, 4x3, 5x4).
TEST(ExtrapComms, UnevenGridsBetween) {
  const auto in = inputs({{2, 3}, {3, 4}, {5, 6}});
  ExtrapOptions o;
  o.ranks = 20;
  o.grid = Topology{{4, 5}, {true, true}};
  o.try_plugins = false;
  const ExtrapResult res = extrapolate(in, o);
  GridProgram want;
  want.sx = 4;
  want.sy = 5;
  expect_same_ranks(res.trace, want.trace());
}

// A recorded grid that contradicts the communication: the error names the
// node and the field.
TEST(ExtrapComms, CartThatDoesNotExplainTheEndpointsIsAnError) {
  // 3x3 ranks recorded as a 1x9 Cartesian grid: the first and last rows
  // have no north or south partner, which no 1-D grid of 9 explains.
  GridProgram g;
  g.dims = {1, 9};
  g.open = true;
  std::vector<ExtrapInput> in{{"bad.tf", g.trace()}};
  GridProgram h;
  h.sx = h.sy = 2;
  h.open = true;
  in.push_back({"g4.tf", h.trace()});
  const std::string e = error_of(in, 16);
  EXPECT_NE(e.find("bad.tf: node 0 (MPI_Cart_create at grid+0x100), field dims: "
                   "MPI_Cart_create's grid 9 does not explain"),
            std::string::npos)
      << e;
}

// With symbols embedded (tracefold symbolize), the node is named by its
// function and line as tracefold print shows it, not by a raw frame.
TEST(ExtrapComms, ErrorsNameSymbolizedCallSites) {
  GridProgram g;
  g.dims = {1, 9};
  g.open = true;
  std::vector<ExtrapInput> in{{"bad.tf", g.trace()}};
  GridProgram h;
  h.sx = h.sy = 2;
  h.open = true;
  in.push_back({"g4.tf", h.trace()});
  for (auto& x : in) x.trace.symtab.symbols[Frame{"grid", 0x100}] = {{"make_grid", "grid.c", 12}};
  const std::string e = error_of(in, 16);
  EXPECT_NE(e.find("bad.tf: node 0 (MPI_Cart_create at make_grid (grid.c:12)), field dims: "),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("grid+0x100"), std::string::npos) << e;
}

// A communicator that does not follow the grid is refused by name.
TEST(ExtrapComms, CommunicatorOffTheGridIsAnError) {
  auto in = inputs({{2, 2}, {3, 3}, {4, 4}});
  // The 3x3 input's row communicator becomes one group of ranks 0, 1, 3, 4.
  Trace& t = in[1].trace;
  CommTable c;
  c.define_world(9);
  c.define(kCart, CommGroup{{0, 1, 2, 3, 4, 5, 6, 7, 8}});
  c.define(kRow, CommGroup{{0, 1, 3, 4}});
  t.comms = c;
  const std::string e = error_of(in, 25);
  EXPECT_NE(e.find("g9.tf: communicator " + std::to_string(kRow) +
                   ": its group of ranks 0..4 (4 ranks) is not a whole row"),
            std::string::npos)
      << e;
}

// At a million ranks (1024x1024) the split's key is the column: one entry
// per column, whose ranks are every 1024th. Each entry's ranklist is one
// run, not 1,024 intervals (8 MiB for the key alone before), and the
// entries are built without a list of ranks per entry.
TEST(ExtrapComms, SplitArgumentsAtAMillionRanksStaySmall) {
  const auto in = inputs({{2, 2}, {3, 3}, {4, 4}});
  ExtrapOptions o;
  o.ranks = 1024 * 1024;
  o.try_plugins = false;
  const ExtrapResult res = extrapolate(in, o);
  const auto key = FieldTable::find("key");
  ASSERT_TRUE(key.has_value());
  const Elastic* e = nullptr;
  for (const auto& n : res.trace.nodes)
    if (n.field(*key)) e = n.field(*key);
  ASSERT_NE(e, nullptr);
  ASSERT_EQ(e->entries().size(), 1024u);
  std::size_t bytes = 0;
  bool column5 = false;
  for (const auto& en : e->entries()) {
    EXPECT_EQ(en.ranks.size(), 1024u);
    EXPECT_EQ(en.ranks.runs().size(), 1u);
    bytes += en.ranks.memory_bytes();
    if (en.ranks.first() == 5) {
      column5 = true;
      EXPECT_EQ(en.ranks, Ranklist::parse("<1 5 1024 1024>"));
      EXPECT_EQ(en.values.to_vector(), (std::vector<int64_t>{5}));
    }
  }
  EXPECT_TRUE(column5);
  EXPECT_LE(bytes, 1024 * sizeof(Ranklist::Run));
}

// The target grid follows the rule every input's grid follows. NPB LU's
// layout of 2^k ranks (the largest size fastest: 8 ranks in 4 columns of
// 2 rows) is MPI_Dims_create's order reversed; inputs at 2x2, 2 rows of 4
// and 4x4 give 4 rows of 8 at 32 ranks without --grid.
TEST(ExtrapComms, TargetGridLargestSideFastest) {
  const auto in = inputs({{2, 2}, {4, 2}, {4, 4}});
  ExtrapOptions o;
  o.ranks = 32;
  o.try_plugins = false;
  const ExtrapResult res = extrapolate(in, o);
  EXPECT_EQ(res.target.sizes, (std::vector<int64_t>{8, 4}));
  EXPECT_NE(res.target_rule.find("largest fastest"), std::string::npos) << res.target_rule;
  GridProgram want;
  want.sx = 8;
  want.sy = 4;
  expect_same_ranks(res.trace, want.trace());
}

// Square inputs fit every rule; at a count that is no square the rules
// give different grids, and the error names them instead of guessing.
TEST(ExtrapComms, TargetGridRulesThatDisagreeAreNamed) {
  const std::string e = error_of(inputs({{2, 2}, {3, 3}, {4, 4}}), 12);
  EXPECT_NE(e.find("12 ranks do not fit the equal-sided grids of the inputs (2x2, 3x3, 4x4), "
                   "and at 12 ranks the rules they fit give different grids (balanced like "
                   "MPI_Dims_create gives 4x3, MPI_Dims_create's sizes with the largest fastest "
                   "(NPB LU's 2^k layout) gives 3x4): give --grid"),
            std::string::npos)
      << e;
  // Uneven inputs that follow no rule: --grid is the remedy.
  const std::string f = error_of(inputs({{2, 3}, {3, 4}, {5, 3}}), 20);
  EXPECT_NE(f.find("follow no rule known here"), std::string::npos) << f;
  EXPECT_NE(f.find("give --grid"), std::string::npos) << f;
}
