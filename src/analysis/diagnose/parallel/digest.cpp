// Encoding of an analysis rank's digest (digest.hpp).
#include "digest.hpp"

#include <cstring>
#include <type_traits>

namespace tracefold::diagnose_parallel {

using diagnose_detail::FrameKey;
using diagnose_detail::FrameQuery;

namespace {

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put(const std::string& s) {
    put(uint64_t(s.size()));
    out += s;
  }
  template <class T>
  void put_all(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put(uint64_t(v.size()));
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  }
  std::string out;
};

class Reader {
 public:
  explicit Reader(const std::string& s) : in(s) {}
  void raw(void* to, std::size_t n) {
    if (in.size() - at < n) throw DiagnoseError("tracefold-diagnose: a rank's digest is cut short");
    std::memcpy(to, in.data() + at, n);
    at += n;
  }
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    raw(&v, sizeof v);
    return v;
  }
  std::string str() {
    const uint64_t n = get<uint64_t>();
    if (in.size() - at < n) throw DiagnoseError("tracefold-diagnose: a rank's digest is cut short");
    std::string s = in.substr(at, n);
    at += n;
    return s;
  }
  template <class T>
  void get_all(std::vector<T>& v) {
    const uint64_t n = get<uint64_t>();
    if ((in.size() - at) / sizeof(T) < n)
      throw DiagnoseError("tracefold-diagnose: a rank's digest is cut short");
    v.resize(n);
    raw(v.data(), n * sizeof(T));
  }
  bool done() const { return at == in.size(); }

 private:
  const std::string& in;
  std::size_t at = 0;
};

}  // namespace

std::string encode(const ShareDigest& d) {
  Writer w;
  w.put(d.first);
  w.put(uint64_t(d.ranks.size()));
  for (const auto& r : d.ranks) {
    w.put(uint8_t(r.present));
    if (!r.present) continue;
    const RankSamples& s = r.samples;
    w.put(s.rank), w.put(s.world_size), w.put(s.period_ns), w.put(s.clock);
    w.put(uint8_t(s.has_trailer)), w.put(s.taken), w.put(s.dropped);
    w.put(s.handler_median_ns), w.put(s.handler_p99_ns), w.put(s.source);
    w.put_all(s.periods);
    w.put(uint64_t(s.modules.size()));
    for (const Module& m : s.modules)
      w.put(m.name), w.put(m.path), w.put(m.build_id), w.put(m.base);
    w.put_all(s.contexts);
    w.put_all(s.samples);
    w.put(uint64_t(r.names.size()));
    for (const std::string& n : r.names) w.put(n);
  }
  w.put(uint64_t(d.named.size()));
  for (const auto& [key, name] : d.named) w.put(key.first), w.put(key.second), w.put(name);
  w.put(uint64_t(d.unnamed.size()));
  for (const auto& [module, offset] : d.unnamed) w.put(module), w.put(offset);
  return std::move(w.out);
}

ShareDigest decode(const std::string& bytes) {
  Reader rd(bytes);
  ShareDigest d;
  d.first = rd.get<int32_t>();
  d.ranks.resize(rd.get<uint64_t>());
  for (auto& r : d.ranks) {
    r.present = rd.get<uint8_t>() != 0;
    if (!r.present) continue;
    RankSamples& s = r.samples;
    s.rank = rd.get<int32_t>(), s.world_size = rd.get<int32_t>();
    s.period_ns = rd.get<int64_t>(), s.clock = rd.get<SampleClock>();
    s.has_trailer = rd.get<uint8_t>() != 0;
    s.taken = rd.get<uint64_t>(), s.dropped = rd.get<uint64_t>();
    s.handler_median_ns = rd.get<int64_t>(), s.handler_p99_ns = rd.get<int64_t>();
    s.source = rd.str();
    rd.get_all(s.periods);
    s.modules.resize(rd.get<uint64_t>());
    for (Module& m : s.modules) {
      m.name = rd.str(), m.path = rd.str(), m.build_id = rd.str();
      m.base = rd.get<uint64_t>();
    }
    rd.get_all(s.contexts);
    rd.get_all(s.samples);
    r.names.resize(rd.get<uint64_t>());
    for (std::string& n : r.names) n = rd.str();
  }
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
  if (!rd.done()) throw DiagnoseError("tracefold-diagnose: a rank's digest has trailing bytes");
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
  Reader rd(bytes);
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
