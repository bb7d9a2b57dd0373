// Synthetic traces of a 2-D halo exchange for the unit tests of grid parts
// (extrapolation and parametric benchmarks), folded and merged like
// recorded ones.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::testing {

// A 2-D halo exchange on an sx-by-sy grid (x fastest) under strong
// scaling: a fixed gx-by-gy domain, so the north and south messages carry
// gx/sx values and the west and east ones gy/sy (tests/apps/strong2d.c).
struct Halo {
  int32_t sx = 3, sy = 3;
  int64_t gx = 720, gy = 360;
  bool periodic = true;  ///< else edge ranks skip the missing neighbours
  int steps = 2;

  int32_t size() const { return sx * sy; }
  std::vector<Event> events(int32_t rank) const {
    const int32_t x = rank % sx, y = rank / sx;
    struct Dir {
      int32_t dx, dy;
      int64_t count;
    };
    const Dir dirs[4] = {{0, -1, gx / sx}, {0, 1, gx / sx}, {-1, 0, gy / sy}, {1, 0, gy / sy}};
    std::vector<Event> out;
    for (int s = 0; s < steps; ++s)
      for (int d = 0; d < 4; ++d) {
        const int32_t px = x + dirs[d].dx, py = y + dirs[d].dy;
        if (!periodic && (px < 0 || px >= sx || py < 0 || py >= sy)) continue;
        Event e;
        e.op = *OpTable::find("MPI_Send");
        e.site = 0;
        e.set(FieldTable::peer(), ((py + sy) % sy) * sx + (px + sx) % sx);
        e.set(FieldTable::intern("tag", FieldKind::kScalar), d);
        e.set(FieldTable::intern("count", FieldKind::kScalar), dirs[d].count);
        e.set(FieldTable::intern("comm", FieldKind::kScalar), 0);
        out.push_back(e);
      }
    return out;
  }
  Trace trace() const {
    SiteTable sites;
    sites.intern(CallSite{{Frame{"halo", 0x100}}});
    Trace all;
    for (int32_t r = 0; r < size(); ++r) {
      CommTable c;
      c.define_world(size());
      Folder f(r);
      for (Event e : events(r)) {
        encode_relative(e, r, c);
        f.append(e);
      }
      Trace one = f.finish(size(), sites, c);
      all = r == 0 ? std::move(one) : merge_traces(all, one);
    }
    return all;
  }
};

inline std::vector<extrap::ExtrapInput> halo_inputs(
    const std::vector<std::pair<int32_t, int32_t>>& grids, bool periodic, int64_t gx = 720,
    int64_t gy = 360) {
  std::vector<extrap::ExtrapInput> in;
  for (auto [sx, sy] : grids) {
    Halo h;
    h.sx = sx;
    h.sy = sy;
    h.gx = gx;
    h.gy = gy;
    h.periodic = periodic;
    in.push_back({"h" + std::to_string(sx * sy) + ".tf", h.trace()});
  }
  return in;
}

}  // namespace tracefold::testing
