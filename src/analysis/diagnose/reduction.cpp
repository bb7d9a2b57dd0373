// Per-rank reductions of the events (reduction.hpp).
#include "reduction.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>
#include <type_traits>

#include "byte_codec.hpp"
#include "internal.hpp"

namespace tracefold::diagnose_detail {

namespace {

using IterationKey = std::tuple<int32_t, uint32_t, int64_t>;

// They travel as their bytes: no padding to carry stray ones.
static_assert(sizeof(IterationSums) == 40 && sizeof(LoopEntrySpan) == 24);

IterationKey key_of(const IterationSums& s) {
  return {s.loop, s.entry, s.iteration};
}

void add_sums(CallPathSums& into, const CallPathSums& more) {
  into.count += more.count, into.bytes += more.bytes;
  into.ns += more.ns, into.waited += more.waited;
}

}  // namespace

Reduction reduce_rank(int32_t rank, const std::vector<EventSpan>& evs) {
  Reduction out;
  out.first = rank, out.last = rank + 1;
  // Per call path its sums and, per loop, its latest iteration: a rank's
  // entries of a loop and the iterations of an entry come in order, so a
  // call's iteration is that one or a new one (an index of every iteration
  // would cost more than the sums).
  struct Path {
    CallPathSums sums;
    std::vector<std::pair<int32_t, std::size_t>> latest;
  };
  std::map<std::pair<OpId, SiteId>, Path> paths;
  std::map<std::pair<int32_t, uint32_t>, int64_t> entries;
  std::pair<int32_t, uint32_t> entry{-1, 0};
  int64_t* entry_of = nullptr;
  for (const EventSpan& e : evs) {
    if (e.loop >= 0) {
      // Consecutive calls are mostly in one entry of a loop.
      if (!entry_of || entry != std::pair(e.loop, e.entry))
        entry = {e.loop, e.entry}, entry_of = &entries[entry];
      *entry_of = std::max(*entry_of, e.of);
    }
    if (is_environment(e.op)) continue;
    Path& path = paths[{e.op, e.site}];
    CallPathSums& p = path.sums;
    p.op = e.op, p.site = e.site;
    const int64_t len = e.end_ns - e.start_ns, waited = std::min(len, e.waited_ns);
    ++p.count;
    p.ns += len, p.waited += waited, p.bytes += e.bytes;
    if (e.loop < 0) continue;
    const IterationKey k{e.loop, e.entry, e.iteration};
    auto last = std::find_if(path.latest.begin(), path.latest.end(),
                             [&](const auto& l) { return l.first == e.loop; });
    std::size_t at = p.iterations.size();
    if (last == path.latest.end()) {
      last = path.latest.insert(path.latest.end(), {e.loop, at});
    } else if (key_of(p.iterations[last->second]) == k) {
      at = last->second;
    } else if (k < key_of(p.iterations[last->second])) {
      // Out of order all the same: look for it before starting a new one.
      for (std::size_t i = 0; i < p.iterations.size(); ++i)
        if (key_of(p.iterations[i]) == k) at = i;
    }
    if (at == p.iterations.size()) p.iterations.push_back({e.loop, e.entry, e.iteration, 0, 0, 0});
    last->second = at;
    IterationSums& s = p.iterations[at];
    ++s.calls, s.bytes += e.bytes, s.transfer_ns += len - waited;
    if (p.ranks.empty()) p.ranks.push_back(rank);
  }
  for (auto& [k, p] : paths) out.calls.push_back(std::move(p.sums));
  for (const auto& [k, of] : entries) out.entries.push_back({rank, k.first, of, k.second, 0});
  return out;
}

void merge(Reduction& into, Reduction&& later) {
  if (into.first == into.last) {
    into = std::move(later);
    return;
  }
  if (later.first == later.last) return;
  if (later.first != into.last)
    throw DiagnoseError("diagnose: the reduction of ranks " + std::to_string(later.first) + "-" +
                        std::to_string(later.last - 1) + " does not follow that of ranks " +
                        std::to_string(into.first) + "-" + std::to_string(into.last - 1));
  into.last = later.last;
  std::vector<CallPathSums> calls;
  calls.reserve(into.calls.size() + later.calls.size());
  auto a = into.calls.begin(), b = later.calls.begin();
  auto less = [](const CallPathSums& x, const CallPathSums& y) {
    return std::pair(x.op, x.site) < std::pair(y.op, y.site);
  };
  while (a != into.calls.end() || b != later.calls.end()) {
    if (b == later.calls.end() || (a != into.calls.end() && less(*a, *b))) {
      calls.push_back(std::move(*a++));
      continue;
    }
    if (a == into.calls.end() || less(*b, *a)) {
      calls.push_back(std::move(*b++));
      continue;
    }
    // The same call path on both sides: the later ranks' iterations go
    // after the earlier ones', as the serial walk meets them.
    CallPathSums p = std::move(*a++);
    CallPathSums& q = *b++;
    add_sums(p, q);
    // SPMD ranks make the same iterations in the same order: add those
    // pairwise, then find the rest by key (a sorted array of the earlier
    // block's).
    auto add = [](IterationSums& t, const IterationSums& s) {
      t.calls += s.calls, t.bytes += s.bytes, t.transfer_ns += s.transfer_ns;
    };
    std::size_t same = 0;
    for (; same < q.iterations.size() && same < p.iterations.size() &&
           key_of(p.iterations[same]) == key_of(q.iterations[same]);
         ++same)
      add(p.iterations[same], q.iterations[same]);
    if (same < q.iterations.size()) {
      std::vector<std::pair<IterationKey, std::size_t>> index;
      index.reserve(p.iterations.size());
      for (std::size_t i = 0; i < p.iterations.size(); ++i)
        index.emplace_back(key_of(p.iterations[i]), i);
      std::sort(index.begin(), index.end());
      for (std::size_t j = same; j < q.iterations.size(); ++j) {
        const IterationSums& s = q.iterations[j];
        const IterationKey k = key_of(s);
        auto it = std::lower_bound(index.begin(), index.end(), std::pair(k, std::size_t(0)));
        // The later block has each key once.
        if (it == index.end() || it->first != k)
          p.iterations.push_back(s);
        else
          add(p.iterations[it->second], s);
      }
    }
    p.ranks.insert(p.ranks.end(), q.ranks.begin(), q.ranks.end());
    calls.push_back(std::move(p));
  }
  into.calls = std::move(calls);
  into.entries.insert(into.entries.end(), later.entries.begin(), later.entries.end());
}

std::string encode(const Reduction& r) {
  ByteWriter o;
  o.put(r.first), o.put(r.last);
  o.put(uint64_t(r.calls.size()));
  for (const CallPathSums& p : r.calls) {
    o.put(p.op), o.put(p.site), o.put(p.count), o.put(p.bytes), o.put(p.ns), o.put(p.waited);
    o.put_all(p.iterations);
    o.put_all(p.ranks);
  }
  o.put_all(r.entries);
  return std::move(o.out);
}

Reduction decode_reduction(const std::string& bytes) {
  ByteReader in(bytes, "a reduction of events");
  Reduction r;
  r.first = in.get<int32_t>(), r.last = in.get<int32_t>();
  r.calls.resize(in.get<uint64_t>());
  for (CallPathSums& p : r.calls) {
    p.op = in.get<OpId>(), p.site = in.get<SiteId>();
    p.count = in.get<uint64_t>(), p.bytes = in.get<uint64_t>();
    p.ns = in.get<int64_t>(), p.waited = in.get<int64_t>();
    in.get_all(p.iterations);
    in.get_all(p.ranks);
  }
  in.get_all(r.entries);
  if (!in.done())
    throw DiagnoseError("tracefold-diagnose: a reduction of events has trailing bytes");
  return r;
}

}  // namespace tracefold::diagnose_detail
