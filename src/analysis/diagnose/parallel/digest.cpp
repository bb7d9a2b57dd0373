// Encoding of an analysis rank's digest (digest.hpp).
#include "digest.hpp"

#include <cstring>
#include <type_traits>

#include "diagnose/byte_codec.hpp"

namespace tracefold::diagnose_parallel {

using diagnose_detail::DigestParams;
using diagnose_detail::FrameKey;
using diagnose_detail::FrameQuery;
using diagnose_detail::RankDigest;

using Writer = diagnose_detail::ByteWriter;

std::string encode(const ShareNames& d) {
  Writer w;
  w.put(uint64_t(d.named.size()));
  for (const auto& [key, name] : d.named) w.put(key.first), w.put(key.second), w.put(name);
  w.put(uint64_t(d.unnamed.size()));
  for (const auto& [module, offset] : d.unnamed) w.put(module), w.put(offset);
  return std::move(w.out);
}

ShareNames decode_names(const std::string& bytes) {
  diagnose_detail::ByteReader rd(bytes, "a rank's digest");
  ShareNames d;
  const uint64_t named = rd.get<uint64_t>();
  for (uint64_t i = 0; i < named; ++i) {
    std::string module = rd.str();
    const uint64_t offset = rd.get<uint64_t>();
    d.named.emplace(FrameKey{std::move(module), offset}, rd.str());
  }
  const uint64_t n = rd.get<uint64_t>();
  for (uint64_t i = 0; i < n; ++i) {
    std::string module = rd.str();
    d.unnamed.emplace(std::move(module), rd.get<uint64_t>());
  }
  if (!rd.done())
    throw DiagnoseError("tracefold-diagnose: a rank's frame names have trailing bytes");
  return d;
}

std::string encode(const ShareDigest& d) {
  Writer w;
  w.put(d.first);
  w.put_all(d.facts);
  w.put(uint64_t(d.digests.size()));
  for (const RankDigest& g : d.digests) {
    w.put(uint8_t(g.sampled)), w.put(g.samples), w.put(g.period_ns), w.put(g.max_periods);
    w.put(g.samples_end), w.put(uint8_t(g.cut)), w.put(g.cut_last);
    w.put(uint64_t(g.keys.size()));
    for (const std::string& k : g.keys) w.put(k);
    w.put_all(g.gap_at);
    w.put(uint64_t(g.gaps.size()));
    for (const auto& [k, n] : g.gaps) w.put(k), w.put(n);
    w.put(uint64_t(g.paths.size()));
    for (const auto& path : g.paths) {
      w.put(uint64_t(path.size()));
      for (const std::string& f : path) w.put(f);
    }
    w.put_all(g.path_periods);
    w.put_all(g.in_calls);
    w.put(uint64_t(g.bins.size()));
    for (const auto& [k, b] : g.bins) w.put(k), w.put(b);
    w.put_all(g.tree);
    w.put(uint64_t(g.frames.size()));
    for (const std::string& f : g.frames) w.put(f);
    w.put(g.tree_left_out);
  }
  return std::move(w.out);
}

ShareDigest decode(const std::string& bytes) {
  diagnose_detail::ByteReader rd(bytes, "a rank's digest");
  ShareDigest d;
  d.first = rd.get<int32_t>();
  rd.get_all(d.facts);
  d.digests.resize(rd.get<uint64_t>());
  for (RankDigest& g : d.digests) {
    g.sampled = rd.get<uint8_t>() != 0;
    g.samples = rd.get<uint64_t>();
    g.period_ns = rd.get<int64_t>(), g.max_periods = rd.get<int64_t>();
    g.samples_end = rd.get<int64_t>();
    g.cut = rd.get<uint8_t>() != 0;
    g.cut_last = rd.get<int64_t>();
    g.keys.resize(rd.get<uint64_t>());
    for (std::string& k : g.keys) k = rd.str();
    rd.get_all(g.gap_at);
    g.gaps.resize(rd.get<uint64_t>());
    for (auto& [k, n] : g.gaps) k = rd.get<uint32_t>(), n = rd.get<int64_t>();
    g.paths.resize(rd.get<uint64_t>());
    for (auto& path : g.paths) {
      path.resize(rd.get<uint64_t>());
      for (std::string& f : path) f = rd.str();
    }
    rd.get_all(g.path_periods);
    rd.get_all(g.in_calls);
    g.bins.resize(rd.get<uint64_t>());
    for (auto& [k, b] : g.bins) k = rd.get<uint32_t>(), b = rd.get<uint32_t>();
    rd.get_all(g.tree);
    g.frames.resize(rd.get<uint64_t>());
    for (std::string& f : g.frames) f = rd.str();
    g.tree_left_out = rd.get<uint64_t>();
  }
  if (!rd.done()) throw DiagnoseError("tracefold-diagnose: a rank's digest has trailing bytes");
  return d;
}

std::string encode(const ShareEvents& d) {
  Writer w;
  w.put(d.params);
  w.put_all(d.drifts);
  w.put(uint64_t(d.ranks.size()));
  for (const auto& spans : d.ranks) w.put_all(spans);
  return std::move(w.out);
}

ShareEvents decode_events(const std::string& bytes) {
  diagnose_detail::ByteReader rd(bytes, "a rank's digest");
  ShareEvents d;
  d.params = rd.get<DigestParams>();
  rd.get_all(d.drifts);
  d.ranks.resize(rd.get<uint64_t>());
  for (auto& spans : d.ranks) rd.get_all(spans);
  if (!rd.done()) throw DiagnoseError("tracefold-diagnose: a share's events have trailing bytes");
  return d;
}

std::string encode(const std::vector<FrameQuery>& frames) {
  Writer w;
  w.put(uint64_t(frames.size()));
  for (const FrameQuery& q : frames) {
    w.put(q.key.first), w.put(q.key.second);
    w.put(q.module.name), w.put(q.module.path), w.put(q.module.build_id), w.put(q.module.base);
  }
  return std::move(w.out);
}

std::vector<FrameQuery> decode_frames(const std::string& bytes) {
  diagnose_detail::ByteReader rd(bytes, "a rank's digest");
  std::vector<FrameQuery> out(rd.get<uint64_t>());
  for (FrameQuery& q : out) {
    q.key.first = rd.str(), q.key.second = rd.get<uint64_t>();
    q.module.name = rd.str(), q.module.path = rd.str(), q.module.build_id = rd.str();
    q.module.base = rd.get<uint64_t>();
  }
  if (!rd.done()) throw DiagnoseError("tracefold-diagnose: a rank's frame list has trailing bytes");
  return out;
}

}  // namespace tracefold::diagnose_parallel
