// Time histograms of one aligned node, per predecessor call (seed 000,
// 3.2.5; the curve models are in histogram_fit.cpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>

#include "internal.hpp"

namespace tracefold::extrap {

namespace {

// The key of `pred=other` blocks among predecessors keyed by operation and
// frames (the operation, kOtherKey.op, is no real operation's).
const CallSite kOtherSite{{Frame{"(other)", 0}}};

// Adds the samples of `from` to `into` (the predecessor stays into's).
void merge_into(Timing& into, const Timing& from) {
  into.compute.merge(from.compute);
  into.comm.merge(from.comm);
  for (const auto& [name, h] : from.stats) {
    auto it = std::find_if(into.stats.begin(), into.stats.end(),
                           [&name](const auto& s) { return s.first == name; });
    if (it == into.stats.end())
      into.stats.emplace_back(name, h);
    else
      it->second.merge(h);
  }
}

// Largest-remainder shares of `total` in proportion to `weights` (which
// sum to more than 0): whole numbers that add up to `total`.
std::vector<uint64_t> apportion(const std::vector<uint64_t>& weights, uint64_t total) {
  long double sum = 0;
  for (uint64_t w : weights) sum += static_cast<long double>(w);
  std::vector<uint64_t> out(weights.size());
  std::vector<std::pair<long double, std::size_t>> rest;
  uint64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const long double exact = static_cast<long double>(weights[i]) * total / sum;
    out[i] = static_cast<uint64_t>(exact);
    given += out[i];
    rest.emplace_back(exact - static_cast<long double>(out[i]), i);
  }
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  for (std::size_t k = 0; given < total && k < rest.size(); ++k, ++given) ++out[rest[k].second];
  return out;
}

// `h` with `n` samples: each bin keeps its share of them and its mean.
Histogram with_count(const Histogram& h, uint64_t n) {
  if (h.empty() || n == 0 || h.count() == n) return n == 0 ? Histogram{} : h;
  Histogram::Parts p = h.parts();
  std::vector<uint64_t> weights;
  for (const auto& b : p.bins) weights.push_back(b.count);
  const std::vector<uint64_t> counts = apportion(weights, n);
  std::vector<Histogram::Bin> bins;
  for (std::size_t i = 0; i < p.bins.size(); ++i) {
    Histogram::Bin b = p.bins[i];
    if (counts[i] == 0) continue;
    const long double mean = static_cast<long double>(b.sum) / static_cast<long double>(b.count);
    b.count = counts[i];
    b.sum = std::llround(mean * static_cast<long double>(b.count));
    if (b.count == 1) b.min = b.max = b.sum = std::clamp<int64_t>(std::llround(mean), b.min, b.max);
    bins.push_back(b);
  }
  p.count = n;
  p.sum = 0;
  for (const auto& b : bins) p.sum += b.sum;
  p.min = bins.front().min;
  p.max = bins.front().max;
  for (const auto& b : bins) {
    p.min = std::min(p.min, b.min);
    p.max = std::max(p.max, b.max);
  }
  p.bins = std::move(bins);
  return Histogram::from_parts(std::move(p));
}

// The samples of a block: its compute histogram's, or another's when the
// block has no computation samples.
uint64_t samples(const Timing& t) {
  if (!t.compute.empty()) return t.compute.count();
  if (!t.comm.empty()) return t.comm.count();
  for (const auto& [name, h] : t.stats)
    if (!h.empty()) return h.count();
  return 0;
}

uint64_t samples(const std::vector<Timing>& blocks) {
  uint64_t n = 0;
  for (const Timing& t : blocks) n += samples(t);
  return n;
}

}  // namespace

namespace detail {

std::vector<uint64_t> share_calls(const std::vector<uint64_t>& fitted,
                                  const std::vector<bool>& exact, uint64_t calls) {
  uint64_t kept = 0;
  std::vector<uint64_t> rest_weights;
  for (std::size_t i = 0; i < fitted.size(); ++i)
    if (exact[i])
      kept += fitted[i];
    else
      rest_weights.push_back(fitted[i]);
  const bool mixed = !rest_weights.empty() && rest_weights.size() < fitted.size();
  uint64_t rest_sum = 0;
  for (uint64_t w : rest_weights) rest_sum += w;
  if (!mixed || kept >= calls || rest_sum == 0) return apportion(fitted, calls);
  const std::vector<uint64_t> rest = apportion(rest_weights, calls - kept);
  std::vector<uint64_t> out(fitted.size());
  for (std::size_t i = 0, j = 0; i < fitted.size(); ++i) out[i] = exact[i] ? fitted[i] : rest[j++];
  return out;
}

void match_calls(std::vector<Timing>& timings, const std::vector<bool>& exact,
                 const std::vector<const Node*>& nodes, int64_t calls) {
  // Only where every input times each call once: a recording that kept
  // fewer samples than calls keeps its own proportion.
  if (calls <= 0 || timings.empty()) return;
  for (const Node* n : nodes)
    if (samples(n->timings) != static_cast<uint64_t>(executions(n->count))) return;
  std::vector<uint64_t> have;
  for (const Timing& t : timings) have.push_back(samples(t));
  const uint64_t total = std::accumulate(have.begin(), have.end(), uint64_t{0});
  if (total == 0 || total == static_cast<uint64_t>(calls)) return;
  const std::vector<uint64_t> want = share_calls(have, exact, static_cast<uint64_t>(calls));
  for (std::size_t i = 0; i < timings.size(); ++i) {
    Timing& t = timings[i];
    auto fit = [&](Histogram& h) {
      if (h.empty()) return;
      h = with_count(h, h.count() == have[i]
                            ? want[i]
                            : static_cast<uint64_t>(std::llround(
                                  static_cast<long double>(h.count()) * want[i] / have[i])));
    };
    fit(t.compute);
    fit(t.comm);
    for (auto& [name, h] : t.stats) fit(h);
    // A block whose share of the calls rounds to none keeps no statistic.
    std::erase_if(t.stats, [](const auto& s) { return s.second.empty(); });
  }
  timings.erase(std::remove_if(timings.begin(), timings.end(),
                               [](const Timing& t) {
                                 return t.compute.empty() && t.comm.empty() && t.stats.empty();
                               }),
                timings.end());
}

std::vector<Timing> extrapolate_timings(const std::vector<ExtrapInput>& in,
                                        const std::vector<const Node*>& nodes,
                                        const std::vector<std::vector<int64_t>>& sizes,
                                        const Topology& target, int32_t rank_hint, Trace& out,
                                        std::vector<std::string>& explanation,
                                        std::vector<bool>& exact) {
  std::vector<Timing> timings;
  exact.clear();
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
  // A predecessor whose block some inputs keep apart while others have
  // folded it into `pred=other` (settle_timings puts predecessors whose
  // times are alike together, and which are alike differs with the rank
  // count: the FFT's loop entry and back edge stand apart at 2 ranks and
  // share one block at 4 and 8) is folded into `other` in every input, so
  // that its samples are counted once at the target, not in both blocks.
  const std::pair<OpId, CallSite> other_key{kOtherKey.op, kOtherSite};
  std::vector<Timing> folded(in.size());  // sized once: pointers into it are kept
  std::vector<bool> has_folded(in.size(), false);
  if (auto o = preds.find(other_key); o != preds.end()) {
    for (auto it = preds.begin(); it != preds.end();) {
      const bool special = it->first == other_key ||
                           (it->first.first == kStartKey.op && it->first.second == CallSite{});
      bool absorbed = false;
      for (std::size_t k = 0; k < in.size() && !special; ++k)
        absorbed = absorbed || (!it->second[k] && o->second[k]);
      if (!absorbed) {
        ++it;
        continue;
      }
      for (std::size_t k = 0; k < in.size(); ++k) {
        const Timing* t = it->second[k];
        if (!t) continue;
        if (!has_folded[k]) {
          folded[k] = o->second[k] ? *o->second[k] : Timing{};
          folded[k].pred = kOtherKey;
          has_folded[k] = true;
        }
        merge_into(folded[k], *t);
      }
      it = preds.erase(it);
    }
    for (std::size_t k = 0; k < in.size(); ++k)
      if (has_folded[k]) o->second[k] = &folded[k];
  }
  for (const auto& [key, per] : preds) {
    Timing tm;
    const bool start = key.first == kStartKey.op && key.second == CallSite{};
    const bool other = key.first == kOtherKey.op && key.second == kOtherSite;
    tm.pred = start   ? kStartKey
              : other ? kOtherKey
                      : EventKey{key.first, out.sites.intern(key.second)};
    // The count of a block every input has, fitted by a law of the sizes.
    bool exact_count = std::all_of(per.begin(), per.end(), [](const Timing* p) { return p; });
    bool counted = false;  // the first histogram fitted gives the block's count
    auto fit = [&](const char* what, const std::function<const Histogram*(const Timing&)>& get) {
      std::vector<HistogramObservation> obs;
      for (std::size_t k = 0; k < in.size(); ++k)
        if (per[k]) obs.push_back({in[k].trace.world_size, sizes[k], get(*per[k])});
      std::string text;
      bool law = false;
      Histogram h = extrapolate_histogram(obs, target, rank_hint, &text, &law);
      if (!h.empty() && !counted) {
        exact_count = exact_count && law;
        counted = true;
      }
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
    if (!tm.compute.empty() || !tm.comm.empty() || !tm.stats.empty()) {
      timings.push_back(std::move(tm));
      exact.push_back(exact_count);
    }
  }
  return timings;
}

}  // namespace detail

}  // namespace tracefold::extrap
