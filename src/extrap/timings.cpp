// Time histograms of one aligned node, per predecessor call (seed 000,
// 3.2.5; the curve models are in histogram_fit.cpp).
#include <algorithm>
#include <functional>
#include <map>

#include "internal.hpp"

namespace tracefold::extrap {

namespace {

// The key of `pred=other` blocks among predecessors keyed by operation and
// frames (the operation, kOtherKey.op, is no real operation's).
const CallSite kOtherSite{{Frame{"(other)", 0}}};

}  // namespace

namespace detail {

std::vector<Timing> extrapolate_timings(const std::vector<ExtrapInput>& in,
                                        const std::vector<const Node*>& nodes,
                                        const std::vector<std::vector<int64_t>>& sizes,
                                        const Topology& target, int32_t rank_hint, Trace& out,
                                        std::vector<std::string>& explanation) {
  std::vector<Timing> timings;
  // Per predecessor call (matched by operation and call-site frames).
  std::map<std::pair<OpId, CallSite>, std::vector<const Timing*>> preds;
  for (std::size_t k = 0; k < in.size(); ++k)
    for (const Timing& tm : nodes[k]->timings) {
      // start and other have no site; other's frames are one frame that
      // no real call site has, so the two keys stay apart.
      const CallSite site = tm.pred == kStartKey   ? CallSite{}
                            : tm.pred == kOtherKey ? kOtherSite
                                                   : in[k].trace.sites.at(tm.pred.site);
      auto& v = preds[{tm.pred.op, site}];
      v.resize(in.size(), nullptr);
      v[k] = &tm;
    }
  for (const auto& [key, per] : preds) {
    Timing tm;
    const bool start = key.first == kStartKey.op && key.second == CallSite{};
    const bool other = key.first == kOtherKey.op && key.second == kOtherSite;
    tm.pred = start   ? kStartKey
              : other ? kOtherKey
                      : EventKey{key.first, out.sites.intern(key.second)};
    auto fit = [&](const char* what, const std::function<const Histogram*(const Timing&)>& get) {
      std::vector<HistogramObservation> obs;
      for (std::size_t k = 0; k < in.size(); ++k)
        if (per[k]) obs.push_back({in[k].trace.world_size, sizes[k], get(*per[k])});
      std::string text;
      Histogram h = extrapolate_histogram(obs, target, rank_hint, &text);
      if (!h.empty())
        explanation.push_back(
            std::string("    time pred=") +
            (start   ? std::string("start")
             : other ? std::string("other")
                     : OpTable::name(key.first) + "/" + SiteTable::format(key.second)) +
            " " + what + ": " + text);
      return h;
    };
    tm.compute = fit("compute", [](const Timing& x) { return &x.compute; });
    tm.comm = fit("comm", [](const Timing& x) { return &x.comm; });
    std::vector<std::string> stat_names;
    for (const Timing* p : per)
      if (p)
        for (const auto& [name, h] : p->stats) stat_names.push_back(name);
    std::sort(stat_names.begin(), stat_names.end());
    stat_names.erase(std::unique(stat_names.begin(), stat_names.end()), stat_names.end());
    for (const auto& name : stat_names) {
      Histogram h = fit(("stat " + name).c_str(), [&name](const Timing& x) -> const Histogram* {
        for (const auto& [n, hh] : x.stats)
          if (n == name) return &hh;
        return nullptr;
      });
      if (!h.empty()) tm.stats.emplace_back(name, std::move(h));
    }
    if (!tm.compute.empty() || !tm.comm.empty() || !tm.stats.empty())
      timings.push_back(std::move(tm));
  }
  return timings;
}

}  // namespace detail

}  // namespace tracefold::extrap
