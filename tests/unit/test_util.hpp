// Helpers shared by the unit tests.
#pragma once

#include <string>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::testing {

/// An event with op `op_name`, call site `site`, and scalar fields.
inline Event make_event(const std::string& op_name, SiteId site,
                        std::vector<std::pair<std::string, int64_t>> fields = {}) {
  Event e;
  e.op = *OpTable::find(op_name);
  e.site = site;
  for (auto& [name, v] : fields) e.set(FieldTable::intern(name, FieldKind::kScalar), v);
  return e;
}

/// A site table with `n` distinct call sites app+0x10, app+0x20, ...
inline SiteTable make_sites(std::size_t n) {
  SiteTable t;
  for (std::size_t i = 0; i < n; ++i) t.intern(CallSite{{Frame{"app", 0x10 * (i + 1)}}});
  return t;
}

}  // namespace tracefold::testing
