// Code places for causes: where computation time went, per rank. With
// samples a place is a calling context of user functions (inclusive time,
// one sampling period per sample); without them, the computation before
// one MPI call path, which is all the trace can tell.
#include <algorithm>
#include <set>

#include "internal.hpp"

namespace tracefold::diagnose_detail {

namespace {

constexpr const char* kSep = " > ";

// A place's name: its function, and the caller it was called from (a
// helper such as `copy` says little alone).
std::string innermost(const std::string& key) {
  const std::size_t at = key.rfind(kSep);
  if (at == std::string::npos) return key;
  const std::size_t before = key.rfind(kSep, at - 1);
  const std::string caller = key.substr(before == std::string::npos ? 0 : before + 3,
                                        at - (before == std::string::npos ? 0 : before + 3));
  return key.substr(at + 3) + ", called from " + caller;
}

std::vector<std::string> split(const std::string& key) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = key.find(kSep, from)) != std::string::npos; from = at + 3)
    out.push_back(key.substr(from, at - from));
  out.push_back(key.substr(from));
  return out;
}

void add_key(const Context& c, Places& places, const std::string& key, int32_t rank, int64_t ns) {
  auto [it, fresh] = places.try_emplace(key);
  PlaceTimes& p = it->second;
  if (fresh) {
    p.label = innermost(key);
    p.stack = split(key);
    const std::size_t at = key.rfind(kSep);
    p.parent = at == std::string::npos ? "" : key.substr(0, at);
    p.ns.assign(std::size_t(c.size), 0);
  }
  p.ns[std::size_t(rank)] += ns;
}

}  // namespace

void add_computation(const Context& c, int32_t rank, int64_t from, int64_t to, std::size_t next,
                     Places& places) {
  if (to <= from) return;
  if (!c.sampled_at(rank, from)) {
    const Event& ev = c.events(rank)[next].ev;
    const std::string key = "computation before " + c.call_label(ev);
    auto [it, fresh] = places.try_emplace(key);
    if (fresh) {
      it->second.label = key;
      it->second.stack = c.call_stack(ev);
      it->second.ns.assign(std::size_t(c.size), 0);
    }
    it->second.ns[std::size_t(rank)] += to - from;
    return;
  }
  // The rank's digest holds the gap's samples counted per place key, each
  // sample for the period it was taken at (the sampler may have lowered
  // its rate).
  const RankDigest& d = c.digests[std::size_t(rank)];
  if (next + 1 >= d.gap_at.size()) return;
  for (uint32_t i = d.gap_at[next]; i < d.gap_at[next + 1]; ++i) {
    const auto [k, periods] = d.gaps[i];
    std::string key = k < d.keys.size() ? d.keys[k] : "";
    if (key.empty()) key = "(no user frame)";
    // Inclusive: the samples count for their function and every caller.
    for (const int64_t ns = periods * c.period_ns;;) {
      add_key(c, places, key, rank, ns);
      const std::size_t at = key.rfind(kSep);
      if (at == std::string::npos) break;
      key.resize(at);
    }
  }
}

void add_gaps(const Context& c, int32_t rank, std::size_t first, std::size_t last, Places& places) {
  const auto& evs = c.events(rank);
  for (std::size_t k = first + 1; k <= last && k < evs.size(); ++k) {
    if (k == 0 && is_environment(evs[k].ev.op)) continue;
    add_computation(c, rank, std::max(evs[k].compute_start_ns, c.run_start), evs[k].start_ns, k,
                    places);
  }
}

void accumulate_imbalance(const Context& c, const Places& places, const std::vector<int32_t>& ranks,
                          Imbalances& out, std::size_t instance) {
  if (ranks.empty()) return;
  for (const auto& [key, p] : places) {
    double sum = 0, mx = -1;
    int32_t at = -1;
    for (int32_t r : ranks) {
      const double v = c.seconds(p.ns[std::size_t(r)]);
      sum += v;
      if (v > mx) mx = v, at = r;
    }
    const double imb = mx - sum / double(ranks.size());
    if (imb <= 0) continue;
    auto [it, fresh] = out.try_emplace(key);
    Imbalance& m = it->second;
    if (fresh) {
      m.label = p.label, m.parent = p.parent, m.stack = p.stack;
      m.by_rank.assign(std::size_t(c.size), 0);
    }
    m.seconds += imb;
    m.by_rank[std::size_t(at)] += imb;
    if (instance != SIZE_MAX) m.by_instance.emplace_back(instance, imb);
  }
}

std::vector<CodePlace> imbalance_causes(const Context& c, const Imbalances& imb, double floor_s) {
  std::vector<std::string> cands;
  for (const auto& [key, m] : imb)
    if (m.seconds >= floor_s) cands.push_back(key);
  // The most specific places: one whose callee explains most of its
  // imbalance is represented by that callee.
  std::set<std::string> explained;
  for (const std::string& key : cands) {
    const Imbalance& m = imb.at(key);
    auto p = imb.find(m.parent);
    if (p != imb.end() && p->second.seconds >= floor_s && m.seconds >= 0.8 * p->second.seconds)
      explained.insert(m.parent);
  }
  std::erase_if(cands, [&](const std::string& k) { return explained.count(k) > 0; });
  std::sort(cands.begin(), cands.end(), [&](const std::string& a, const std::string& b) {
    const double x = imb.at(a).seconds, y = imb.at(b).seconds;
    return x != y ? x > y : a < b;
  });
  std::vector<CodePlace> out;
  for (const std::string& key : cands) {
    if (out.size() >= c.opt.top) break;
    const Imbalance& m = imb.at(key);
    const auto slowest = std::max_element(m.by_rank.begin(), m.by_rank.end());
    out.push_back({m.label, m.stack, m.seconds, int32_t(slowest - m.by_rank.begin()), key, {}});
  }
  return out;
}

std::vector<CodePlace> dominant_places(const Context& c, const Places& places, int32_t rank,
                                       int64_t total_ns) {
  std::vector<std::pair<std::string, int64_t>> v;
  for (const auto& [key, p] : places)
    if (p.ns[std::size_t(rank)] > 0) v.emplace_back(key, p.ns[std::size_t(rank)]);
  auto depth = [](const std::string& k) { return std::count(k.begin(), k.end(), '>'); };
  std::vector<CodePlace> out;
  std::vector<std::string> chosen;
  auto related = [&](const std::string& k) {
    for (const std::string& x : chosen)
      if (x == k || x.rfind(k + kSep, 0) == 0 || k.rfind(x + kSep, 0) == 0) return true;
    return false;
  };
  // The deepest place holding half the time, then the rest by time.
  std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
    const bool ha = 2 * a.second >= total_ns, hb = 2 * b.second >= total_ns;
    if (ha != hb) return ha;
    if (ha && depth(a.first) != depth(b.first)) return depth(a.first) > depth(b.first);
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  for (const auto& [key, ns] : v) {
    if (out.size() >= c.opt.top) break;
    if (double(ns) < c.opt.cause_share * double(total_ns) || related(key)) continue;
    const PlaceTimes& p = places.at(key);
    out.push_back({p.label, p.stack, c.seconds(ns), rank, key, {}});
    chosen.push_back(key);
  }
  return out;
}

}  // namespace tracefold::diagnose_detail
