#include "tracefold/merge.hpp"

#include <algorithm>
#include <bit>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>

#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold {

namespace {

// Lossy value histograms (apply_histogram_threshold) of an irregular code
// differ on every rank: partners, message sizes and probe outcomes are the
// rank's own, so keeping one histogram per rank makes the trace grow with
// the ranks. Entries of one field whose per-rank value counts lie in the
// same power-of-two class are alike enough to share one histogram: the
// ranks' values pooled (peers are already offsets from the rank, so ranks
// at different places with the same pattern pool into the same offsets),
// scaled to the largest member's count. A shared entry's total is at least
// each member's count, so a rank reading its values (expand, replay's
// draws) never runs out; its own count still comes from the lossless loop
// structure. Returns whether anything was shared.
// Weights times counts can pass 2^64 (a million ranks' billions of values).
__extension__ using Wide = unsigned __int128;

bool share_alike_histograms(Elastic& el) {
  std::vector<ElasticEntry>& es = el.entries();
  std::map<int, std::vector<std::size_t>> classes;  // bit width of the total -> entries
  for (std::size_t i = 0; i < es.size(); ++i)
    if (es[i].values.is_histogram() && !es[i].values.empty())
      classes[std::bit_width(es[i].values.size())].push_back(i);
  std::vector<bool> gone(es.size(), false);
  bool any = false;
  for (const auto& [cls, members] : classes) {
    if (members.size() < 2) continue;
    // Weight: an entry's counts stand for each of its ranks.
    std::map<int64_t, Wide> weight;
    Wide all = 0;
    uint64_t target = 0;
    for (std::size_t i : members) {
      const ElasticEntry& e = es[i];
      target = std::max(target, e.values.size());
      for (const ValueSeq::Run& r : e.values.runs()) {
        if (r.pattern.empty()) continue;
        const Wide w = static_cast<Wide>(r.reps) * e.ranks.size();
        weight[r.pattern.front()] += w;
        all += w;
      }
    }
    // Largest remainders: the scaled counts add up to `target` exactly.
    struct Share {
      int64_t value;
      uint64_t count;
      Wide rest;
    };
    std::vector<Share> shares;
    uint64_t given = 0;
    for (const auto& [v, w] : weight) {
      const Wide scaled = w * target;
      shares.push_back(Share{v, static_cast<uint64_t>(scaled / all), scaled % all});
      given += shares.back().count;
    }
    std::vector<std::size_t> order(shares.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return shares[x].rest > shares[y].rest; });
    for (std::size_t k = 0; given < target && k < order.size(); ++k, ++given)
      ++shares[order[k]].count;
    std::vector<ValueSeq::Run> runs;
    for (const Share& sh : shares)
      if (sh.count > 0) runs.push_back(ValueSeq::Run{{sh.value}, sh.count});
    ElasticEntry& keep = es[members.front()];
    keep.values = ValueSeq::from_runs(std::move(runs), true);
    for (std::size_t k = 1; k < members.size(); ++k) {
      keep.ranks.unite(es[members[k]].ranks);
      gone[members[k]] = true;
    }
    any = true;
  }
  if (!any) return false;
  std::size_t out = 0;
  for (std::size_t i = 0; i < es.size(); ++i) {
    if (gone[i]) continue;
    if (out != i) es[out] = std::move(es[i]);  // not onto itself: that empties it
    ++out;
  }
  es.resize(out);
  el.sort_entries();
  return true;
}

void share_fields(Node& n, std::set<FieldId>& shared) {
  for (auto& [f, el] : n.fields)
    if (share_alike_histograms(el)) shared.insert(f);
  // A modelled poll loop's trip counts and its probe's executions
  // (model_poll_loops), which the lossy note names already.
  for (LoopLevel& l : n.loops) share_alike_histograms(l.iters);
  share_alike_histograms(n.count);
}

// Takes b's sequences: b is the other trace's node, consumed by the merge.
void merge_node(Node& a, Node&& b, std::set<FieldId>& shared) {
  a.ranks.unite(b.ranks);
  if (a.loops.size() < b.loops.size()) a.loops.resize(b.loops.size());
  for (std::size_t l = 0; l < b.loops.size(); ++l) {
    a.loops[l].members.merge(std::move(b.loops[l].members));
    a.loops[l].iters.merge(std::move(b.loops[l].iters));
  }
  a.count.merge(std::move(b.count));
  for (auto& [f, el] : b.fields) {
    if (Elastic* mine = a.field(f)) {
      mine->merge(std::move(el));
    } else {
      auto it = std::lower_bound(a.fields.begin(), a.fields.end(), f,
                                 [](const auto& p, FieldId id) { return p.first < id; });
      a.fields.insert(it, {f, std::move(el)});
    }
  }
  merge_timings(a.timings, b.timings);
  share_fields(a, shared);
}

// Maps the site ids of `from` into `into`'s site table.
std::vector<SiteId> site_map(SiteTable& into, const SiteTable& from) {
  std::vector<SiteId> map(from.size());
  for (SiteId i = 0; i < from.size(); ++i) map[i] = into.intern(from.at(i));
  return map;
}

EventKey remap(EventKey k, const std::vector<SiteId>& map) {
  if (is_pred_marker(k)) return k;
  return EventKey{k.op, map.at(k.site)};
}

// Two adjacent nodes whose ranklists are disjoint can trade places: no rank
// has both, so every rank's sub-list, loops included, stays the same. A
// merged trace holds many such pairs whose order was a guess: nodes one
// side had and the other did not, put one side's first. When a later merge
// meets a trace that has both in the other order, the guess costs a match
// (the non-periodic 26-neighbour exchange at 27 ranks got 209 nodes for
// 123 call sites). So before matching, each node list is reordered towards
// the other's order. A node whose key the other list has once belongs at
// that key's position there; a node the other list lacks goes with the next
// node that shares a rank with it (it must stay before that one). In list
// order, each node moves left past the nodes it can trade places with, as
// long as those have a place of their own in the other list and it is
// further right; nodes that only go with another are passed over, not
// reasons to move. Scans stop after kAlignScan nodes, so that long lists
// of unrelated nodes cost linear time.
constexpr std::size_t kAlignScan = 256;

template <class NodePtr, class RefPtr>
void align_to(std::vector<NodePtr>& nodes, const std::vector<RefPtr>& ref) {
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::map<EventKey, std::pair<std::size_t, int>> where;  // position in ref, occurrences
  for (std::size_t i = 0; i < ref.size(); ++i)
    ++where.try_emplace(ref[i]->key, i, 0).first->second.second;
  std::vector<std::size_t> own(nodes.size(), kNone), belongs(nodes.size(), kNone);
  for (std::size_t i = nodes.size(); i-- > 0;) {
    const auto it = where.find(nodes[i]->key);
    if (it != where.end() && it->second.second == 1) {
      own[i] = belongs[i] = it->second.first;
      continue;
    }
    for (std::size_t j = i + 1; j < nodes.size() && j <= i + kAlignScan; ++j) {
      if (nodes[j]->ranks.intersects(nodes[i]->ranks)) {
        belongs[i] = belongs[j];
        break;
      }
    }
  }
  std::vector<NodePtr> out;
  std::vector<std::size_t> out_own;
  out.reserve(nodes.size());
  out_own.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::size_t p = belongs[i];
    std::size_t at = out.size();
    if (p != kNone) {
      for (std::size_t j = out.size(); j-- > 0 && out.size() - j <= kAlignScan;) {
        if (out[j]->ranks.intersects(nodes[i]->ranks)) break;
        if (out_own[j] == kNone) continue;
        if (out_own[j] <= p) break;
        at = j;
      }
    }
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), nodes[i]);
    out_own.insert(out_own.begin() + static_cast<std::ptrdiff_t>(at), own[i]);
  }
  nodes = std::move(out);
}

}  // namespace

namespace {
std::vector<std::string_view> lossy_parts(std::string_view s) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    const std::size_t at = s.find("; ");
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 2);
  }
  return parts;
}

// Both sides' reasons, each once, in merge order: one rank's reason (its
// tracing turned off) must not hide another's. Bounded, as every rank may
// add one.
std::string join_lossy(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty() || a == b) return a;
  constexpr std::size_t kMaxLossy = 512;
  constexpr std::string_view kMore = "...";
  std::string out = a;
  for (std::string_view part : lossy_parts(b)) {
    const std::vector<std::string_view> have = lossy_parts(out);
    if (std::find(have.begin(), have.end(), part) != have.end()) continue;
    if (std::find(have.begin(), have.end(), kMore) != have.end()) break;
    out += "; ";
    if (out.size() + part.size() > kMaxLossy) {
      out += kMore;
      break;
    }
    out += part;
  }
  return out;
}
// The lossy note names the fields whose histograms some ranks share, in
// one part however many merges shared them (each side's note may have one).
constexpr std::string_view kSharedNote = "histograms shared by alike ranks: ";

void note_shared(std::string& lossy, const std::set<FieldId>& fields) {
  std::set<std::string> names;
  for (FieldId f : fields) names.insert(FieldTable::name(f));
  std::string rest;
  bool had = false;
  for (std::string_view part : lossy_parts(lossy)) {
    if (part.substr(0, kSharedNote.size()) == kSharedNote) {
      had = true;
      std::string_view list = part.substr(kSharedNote.size());
      while (!list.empty()) {
        const std::size_t at = list.find(", ");
        names.insert(std::string(list.substr(0, at)));
        if (at == std::string_view::npos) break;
        list.remove_prefix(at + 2);
      }
      continue;
    }
    rest += (rest.empty() ? "" : "; ") + std::string(part);
  }
  if (names.empty() || (!had && fields.empty())) return;
  std::string note(kSharedNote);
  bool first = true;
  for (const std::string& n : names) {
    note += (first ? "" : ", ") + n;
    first = false;
  }
  lossy = rest.empty() ? note : rest + "; " + note;
}
}  // namespace

void share_histograms(Trace& trace) {
  std::set<FieldId> shared;
  for (Node& n : trace.nodes) share_fields(n, shared);
  note_shared(trace.lossy, shared);
}

// Both traces are taken by value and their nodes moved, not copied: in a
// merge round the two sides are the rank's own trace and the one received,
// both used up, and copying their sequences (a polling code gives every rank
// its own) led rank 0's time in the merge at MPI_Finalize.
Trace merge_traces(Trace a, Trace b, const MergeOptions& options) {
  if (a.world_size != b.world_size)
    throw std::invalid_argument("cannot merge traces of " + std::to_string(a.world_size) + " and " +
                                std::to_string(b.world_size) + " ranks");
  if (a.ranks().intersects(b.ranks()))
    throw std::invalid_argument("cannot merge traces that share ranks (" + a.ranks().to_string() +
                                " and " + b.ranks().to_string() + ")");
  Trace out;
  out.world_size = a.world_size;
  // Locations of thread t are t * world_size + rank whatever the thread
  // count, so traces with different counts merge as they are.
  out.threads = std::max(a.threads, b.threads);
  out.omp = std::move(a.omp);
  out.omp.merge(b.omp);
  out.omp.sort_entries();
  out.sites = std::move(a.sites);
  out.symtab = std::move(a.symtab);
  out.symtab.merge(b.symtab);
  out.comms = std::move(a.comms);
  out.comms.merge(b.comms);
  out.lossy = join_lossy(a.lossy, b.lossy);
  std::set<FieldId> shared;

  const auto map = site_map(out.sites, b.sites);
  for (Node& n : b.nodes) {
    n.key = remap(n.key, map);
    for (Timing& t : n.timings) t.pred = remap(t.pred, map);
    std::sort(n.timings.begin(), n.timings.end(),
              [](const Timing& x, const Timing& y) { return x.pred < y.pred; });
  }
  std::vector<Node*> an, bp;
  for (Node& n : a.nodes) an.push_back(&n);
  for (Node& n : b.nodes) bp.push_back(&n);
  align_to(bp, an);
  align_to(an, bp);
  auto take_a = [&](std::size_t i) { return std::move(*an[i]); };
  auto take_b = [&](std::size_t j) { return std::move(*bp[j]); };
  auto take_both = [&](std::size_t i, std::size_t j) {
    out.nodes.push_back(take_a(i));
    merge_node(out.nodes.back(), take_b(j), shared);
  };

  // Common prefix and suffix need no table.
  std::size_t pre = 0;
  while (pre < an.size() && pre < bp.size() && an[pre]->key == bp[pre]->key) ++pre;
  std::size_t suf = 0;
  while (suf < an.size() - pre && suf < bp.size() - pre &&
         an[an.size() - 1 - suf]->key == bp[bp.size() - 1 - suf]->key)
    ++suf;
  const std::size_t n = an.size() - pre - suf, m = bp.size() - pre - suf;

  out.nodes.reserve(an.size() + bp.size());
  for (std::size_t i = 0; i < pre; ++i) take_both(i, i);
  if ((n + 1) * (m + 1) <= options.max_cells) {
    // Suffix table: L[i][j] = LCS length of an[pre+i..] and bn[pre+j..].
    const std::size_t w = m + 1;
    std::vector<uint32_t> L((n + 1) * (m + 1), 0);
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t j = m; j-- > 0;)
        L[i * w + j] = an[pre + i]->key == bp[pre + j]->key
                           ? L[(i + 1) * w + j + 1] + 1
                           : std::max(L[(i + 1) * w + j], L[i * w + j + 1]);
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && an[pre + i]->key == bp[pre + j]->key &&
          L[i * w + j] == L[(i + 1) * w + j + 1] + 1) {
        take_both(pre + i, pre + j);
        ++i;
        ++j;
      } else if (i < n && (j == m || L[(i + 1) * w + j] >= L[i * w + j + 1])) {
        out.nodes.push_back(take_a(pre + i++));
      } else {
        out.nodes.push_back(take_b(pre + j++));
      }
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) out.nodes.push_back(take_a(pre + i));
    for (std::size_t j = 0; j < m; ++j) out.nodes.push_back(take_b(pre + j));
  }
  for (std::size_t k = 0; k < suf; ++k) take_both(an.size() - suf + k, bp.size() - suf + k);
  note_shared(out.lossy, shared);
  return out;
}

void canonicalize_sites(Trace& trace) {
  SiteTable fresh;
  std::vector<SiteId> map(trace.sites.size(), 0);
  std::vector<bool> seen(trace.sites.size(), false);
  for (const Node& n : trace.nodes) {
    if (!seen.at(n.key.site)) {
      seen[n.key.site] = true;
      map[n.key.site] = fresh.intern(trace.sites.at(n.key.site));
    }
  }
  for (Node& n : trace.nodes) {
    n.key.site = map[n.key.site];
    for (Timing& t : n.timings) {
      if (is_pred_marker(t.pred)) continue;
      if (!seen.at(t.pred.site)) {
        seen[t.pred.site] = true;
        map[t.pred.site] = fresh.intern(trace.sites.at(t.pred.site));
      }
      t.pred.site = map[t.pred.site];
    }
    std::sort(n.timings.begin(), n.timings.end(),
              [](const Timing& x, const Timing& y) { return x.pred < y.pred; });
  }
  trace.sites = std::move(fresh);
  trace.symtab.prune(trace.sites);
}

int reduction_rounds(int size, int radix) {
  if (radix < 2) throw std::invalid_argument("reduction radix must be at least 2");
  int rounds = 0;
  for (long long span = 1; span < size; span *= radix) ++rounds;
  return rounds;
}

std::optional<Trace> reduce_trace(Trace local, Exchange& ex, int radix, const MergeOptions& options,
                                  std::vector<std::string>* errors) {
  const int r = ex.rank(), p = ex.size();
  const int rounds = reduction_rounds(p, radix);
  long long stride = 1;
  for (int s = 0; s < rounds; ++s, stride *= radix) {
    const long long group = stride * radix;
    if (r % group == 0) {
      // Receive from every child before merging anything: if a merge fails,
      // no child is left blocked in its send.
      std::vector<std::pair<long long, std::string>> incoming;
      for (int i = 1; i < radix; ++i) {
        const long long from = r + i * stride;
        if (from >= p) break;
        incoming.emplace_back(from, ex.receive(static_cast<int>(from)));
      }
      for (auto& [from, bytes] : incoming) {
        try {
          local = merge_traces(std::move(local),
                               decode_trace(bytes, "rank " + std::to_string(from)), options);
        } catch (const std::exception& ex) {
          // Keep the reduction going so no participant waits forever; the
          // subtree of `from` is left out and reported.
          if (!errors) throw;
          errors->push_back("the trace of ranks under " + std::to_string(from) +
                            " could not be merged: " + ex.what());
        }
      }
    } else if (r % stride == 0) {
      ex.send(static_cast<int>(r - r % group), encode_compact_transfer(local));
      return std::nullopt;
    }
  }
  if (r != 0) return std::nullopt;
  if (options.settle_timing) settle_timings(local);
  canonicalize_sites(local);
  return local;
}

Trace reduce_traces(std::vector<Trace> traces, int radix, const MergeOptions& options) {
  if (traces.empty()) throw std::invalid_argument("nothing to reduce");
  const int p = static_cast<int>(traces.size());
  const int rounds = reduction_rounds(p, radix);
  long long stride = 1;
  for (int s = 0; s < rounds; ++s, stride *= radix) {
    const long long group = stride * radix;
    for (long long r = 0; r < p; r += group) {
      for (int i = 1; i < radix; ++i) {
        const long long from = r + i * stride;
        if (from >= p) break;
        traces[static_cast<std::size_t>(r)] =
            merge_traces(std::move(traces[static_cast<std::size_t>(r)]),
                         std::move(traces[static_cast<std::size_t>(from)]), options);
        traces[static_cast<std::size_t>(from)] = Trace{};
      }
    }
  }
  Trace result = std::move(traces[0]);
  if (options.settle_timing) settle_timings(result);
  canonicalize_sites(result);
  return result;
}

// ------------------------------------------------------------- in-memory

struct InMemoryExchange::Impl {
  struct Endpoint final : Exchange {
    Impl* hub = nullptr;
    int me = 0;
    int rank() const override { return me; }
    int size() const override { return hub->size; }
    void send(int to, const std::string& bytes) override { hub->post(me, to, bytes); }
    std::string receive(int from) override { return hub->take(from, me); }
  };
  int size;
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<int, int>, std::deque<std::string>> boxes;
  std::vector<Endpoint> endpoints;

  explicit Impl(int n) : size(n), endpoints(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      endpoints[static_cast<std::size_t>(i)].hub = this;
      endpoints[static_cast<std::size_t>(i)].me = i;
    }
  }
  void post(int from, int to, const std::string& bytes) {
    if (to < 0 || to >= size) throw std::out_of_range("send to rank outside the exchange");
    {
      std::lock_guard lock(mu);
      boxes[{from, to}].push_back(bytes);
    }
    cv.notify_all();
  }
  std::string take(int from, int to) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return !boxes[{from, to}].empty(); });
    std::string s = std::move(boxes[{from, to}].front());
    boxes[{from, to}].pop_front();
    return s;
  }
};

InMemoryExchange::InMemoryExchange(int size) : impl_(std::make_unique<Impl>(size)) {}
InMemoryExchange::~InMemoryExchange() = default;
Exchange& InMemoryExchange::endpoint(int rank) {
  return impl_->endpoints.at(static_cast<std::size_t>(rank));
}

}  // namespace tracefold
