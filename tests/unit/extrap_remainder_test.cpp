// Extrapolation of numbers that follow an uneven division over one grid
// dimension (src/extrap/remainder.cpp), on synthetic traces folded and
// merged like recorded ones.
#include <gtest/gtest.h>

#include "test_util.hpp"
#include "trace_compare.hpp"
#include "tracefold/extrap/extrapolate.hpp"

using namespace tracefold;
using namespace tracefold::extrap;

namespace {

// A periodic 2-D stencil on sx x sy ranks (x fastest) over a gx x gy plane
// split with the remainder on the first ranks: the west/east messages hold
// `unit_y` values per row the rank owns, north/south `unit_x` per column.
struct UnevenStencil {
  int32_t sx = 3, sy = 3;
  int64_t gx = 66, gy = 50, unit_x = 5, unit_y = 5;
  int steps = 3;

  static int64_t share(int64_t total, int64_t n, int64_t i) { return total / n + (i < total % n); }
  int32_t size() const { return sx * sy; }
  std::vector<Event> events(int32_t rank) const {
    const int32_t x = rank % sx, y = rank / sx;
    const int64_t nx = share(gx, sx, x), ny = share(gy, sy, y);
    const int32_t nb[4] = {((y + sy - 1) % sy) * sx + x, ((y + 1) % sy) * sx + x,
                           y * sx + (x + sx - 1) % sx, y * sx + (x + 1) % sx};
    std::vector<Event> out;
    for (int s = 0; s < steps; ++s)
      for (int d = 0; d < 4; ++d) {
        Event e;
        e.op = *OpTable::find("MPI_Sendrecv");
        e.site = static_cast<SiteId>(d);
        e.set(FieldTable::peer(), nb[d]);
        e.set(FieldTable::intern("rpeer", FieldKind::kScalar), nb[d ^ 1]);
        e.set(FieldTable::intern("count", FieldKind::kScalar), d < 2 ? unit_x * nx : unit_y * ny);
        out.push_back(e);
      }
    return out;
  }
  Trace trace() const {
    std::vector<std::vector<Event>> ranks;
    for (int32_t r = 0; r < size(); ++r) ranks.push_back(events(r));
    CommTable c;
    c.define_world(size());
    return tracefold::testing::fold_ranks(ranks, c, 4);
  }
};

std::vector<ExtrapInput> inputs(const std::vector<UnevenStencil>& programs) {
  std::vector<ExtrapInput> in;
  for (const auto& p : programs) in.push_back({"u" + std::to_string(p.size()) + ".tf", p.trace()});
  return in;
}

UnevenStencil grid(int32_t sx, int32_t sy) {
  UnevenStencil u;
  u.sx = sx;
  u.sy = sy;
  return u;
}

}  // namespace

// 66 columns over 3 and 4 ranks (22 each; 17 17 16 16), 50 rows over 3
// and 4 (17 17 16; 13 13 12 12): to 4 columns x 5 rows (MPI_Dims_create's
// 20), rank by rank the same as the program at 20 ranks.
TEST(ExtrapRemainder, UnevenDivisionByRankPosition) {
  ExtrapOptions o;
  o.ranks = 20;
  o.try_plugins = false;
  const ExtrapResult res = extrapolate(inputs({grid(3, 3), grid(3, 4), grid(4, 4)}), o);
  EXPECT_EQ(res.target.sizes, (std::vector<int64_t>{4, 5}));
  tracefold::testing::expect_same_ranks(res.trace, grid(4, 5).trace());
  bool x_law = false, y_law = false;
  for (const auto& l : res.explanation) {
    x_law = x_law || l.find("[5*(66 div S1) + 5*(x < 66 mod S1)]") != std::string::npos;
    y_law = y_law || l.find("[5*(50 div S2) + 5*(y < 50 mod S2)]") != std::string::npos;
  }
  EXPECT_TRUE(x_law);
  EXPECT_TRUE(y_law);
}

// Inputs that disagree on the total (66 columns in two, 70 in the third)
// follow no such law: the part-by-part error stands, naming both ranks.
TEST(ExtrapRemainder, InputsThatDisagreeOnTheTotalAreRefused) {
  UnevenStencil odd = grid(4, 4);
  odd.gx = 70;
  ExtrapOptions o;
  o.ranks = 20;
  o.try_plugins = false;
  try {
    extrapolate(inputs({grid(3, 3), grid(3, 4), odd}), o);
    ADD_FAILURE() << "no error";
  } catch (const ExtrapError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("lie in the same part of the 4x4 grid"), std::string::npos) << m;
    EXPECT_NE(m.find("record sizes that divide evenly"), std::string::npos) << m;
  }
}
