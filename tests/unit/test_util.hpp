// Helpers shared by the unit tests.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/timeline.hpp"
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

/// Appends a recorded call to one rank's timed events: computation from the
/// previous call's end (or `start` for the first) to `start`, the call to `end`.
inline Event& add_timed(std::vector<TimedEvent>& evs, const std::string& op, SiteId site,
                        int64_t start, int64_t end,
                        std::vector<std::pair<std::string, int64_t>> fields = {}) {
  TimedEvent te;
  te.ev = make_event(op, site, std::move(fields));
  te.compute_start_ns = evs.empty() ? start : evs.back().end_ns;
  te.start_ns = start;
  te.end_ns = end;
  te.timed = true;
  evs.push_back(te);
  return evs.back().ev;
}

/// A site table with `n` distinct call sites app+0x10, app+0x20, ...
inline SiteTable make_sites(std::size_t n) {
  SiteTable t;
  for (std::size_t i = 0; i < n; ++i) t.intern(CallSite{{Frame{"app", 0x10 * (i + 1)}}});
  return t;
}

/// Folds each rank's events (peers encoded relative to `comms`) and merges
/// the ranks into one trace, the call sites being make_sites(sites).
inline Trace fold_ranks(const std::vector<std::vector<Event>>& ranks, const CommTable& comms,
                        std::size_t sites = 8) {
  const int32_t n = static_cast<int32_t>(ranks.size());
  const SiteTable table = make_sites(sites);
  Trace acc;
  for (int32_t r = 0; r < n; ++r) {
    Folder f(r);
    for (Event e : ranks[static_cast<std::size_t>(r)]) {
      encode_relative(e, r, comms);
      f.append(e);
    }
    Trace t = f.finish(n, table, comms);
    acc = r == 0 ? std::move(t) : merge_traces(acc, t);
  }
  return acc;
}

/// One to three random byte mutations of `m` (a character of `alphabet`
/// written over one, a random byte written over one, up to three erased, or
/// a character of `alphabet` inserted): what the readers' fuzz tests feed
/// them. Never leaves `m` empty, so positions stay drawable.
inline void mutate_bytes(std::string& m, std::mt19937_64& rng, const std::string& alphabet) {
  const int flips = 1 + static_cast<int>(rng() % 3);
  for (int k = 0; k < flips; ++k) {
    if (m.empty()) m = "x";
    const std::size_t pos = rng() % m.size();
    switch (rng() % 4) {
      case 0:
        m[pos] = alphabet[rng() % alphabet.size()];
        break;
      case 1:
        m[pos] = static_cast<char>(rng() & 0xff);
        break;
      case 2:
        m.erase(pos, 1 + rng() % 3);
        break;
      default:
        m.insert(pos, 1, alphabet[rng() % alphabet.size()]);
        break;
    }
  }
  if (m.empty()) m = "x";
}

}  // namespace tracefold::testing
