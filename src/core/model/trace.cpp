#include "tracefold/trace.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "tracefold/op_class.hpp"
#include "tracefold/ranklist_sweep.hpp"

namespace tracefold {

Elastic Elastic::of(ValueSeq values, int32_t rank) {
  Elastic e;
  e.entries_.push_back(ElasticEntry{std::move(values), Ranklist::single(rank)});
  return e;
}

const ValueSeq* Elastic::for_rank(int32_t rank) const {
  for (const auto& e : entries_)
    if (e.ranks.contains(rank)) return &e.values;
  return nullptr;
}

namespace {

// Both merges: `take` copies an entry of the other side or moves it.
template <class Entries, class Take>
void merge_entries(std::vector<ElasticEntry>& entries, Entries& other, Take take) {
  // Irregular codes give every rank its own sequence: comparing each entry
  // with each would make a merge round cost the product of the two sides'
  // entries. Past a few entries, candidates are found by value hash.
  if (entries.size() * other.size() > 64) {
    std::unordered_multimap<uint64_t, std::size_t> ours;
    ours.reserve(entries.size());
    for (std::size_t i = 0; i < entries.size(); ++i)
      ours.emplace(entries[i].values.value_hash(), i);
    for (auto& theirs : other) {
      bool merged = false;
      auto [lo, hi] = ours.equal_range(theirs.values.value_hash());
      for (auto it = lo; it != hi && !merged; ++it) {
        ElasticEntry& e = entries[it->second];
        if (e.values.equals(theirs.values)) {
          e.ranks.unite(theirs.ranks);
          merged = true;
        }
      }
      if (!merged) entries.push_back(take(theirs));
    }
    return;
  }
  for (auto& theirs : other) {
    bool merged = false;
    for (auto& ours : entries) {
      if (ours.values.equals(theirs.values)) {
        ours.ranks.unite(theirs.ranks);
        merged = true;
        break;
      }
    }
    if (!merged) entries.push_back(take(theirs));
  }
}

}  // namespace

void Elastic::merge(const Elastic& other) {
  merge_entries(entries_, other.entries_, [](const ElasticEntry& e) { return e; });
  sort_entries();
}

void Elastic::merge(Elastic&& other) {
  if (&other == this) return merge(static_cast<const Elastic&>(other));
  merge_entries(entries_, other.entries_, [](ElasticEntry& e) { return std::move(e); });
  other.entries_.clear();
  sort_entries();
}

void Elastic::sort_entries() {
  std::sort(entries_.begin(), entries_.end(), [](const ElasticEntry& a, const ElasticEntry& b) {
    return a.ranks.first() < b.ranks.first();
  });
}

Ranklist Elastic::ranks() const {
  Ranklist r;
  for (const auto& e : entries_) r.unite(e.ranks);
  return r;
}

std::string format_ranklist_or_whole(const Ranklist& ranks, const Ranklist* whole) {
  return whole && !whole->empty() && ranks == *whole ? std::string("*") : ranks.to_string();
}

Ranklist parse_ranklist_or_whole(std::string_view text, const Ranklist* whole) {
  if (text == "*") {
    if (!whole) throw std::invalid_argument("'*' (the whole set) has no meaning here");
    return *whole;
  }
  if (text.starts_with('*'))
    throw std::invalid_argument("'*' (the whole set) stands alone, found '" + std::string(text) +
                                "'");
  return Ranklist::parse(text);
}

std::string Elastic::to_string(const Ranklist* whole) const {
  std::string out;
  for (const auto& e : entries_) {
    if (!out.empty()) out += " ; ";
    out += e.values.to_string();
    out += " @ ";
    out += format_ranklist_or_whole(e.ranks, whole);
  }
  return out;
}

Elastic Elastic::parse(std::string_view text, const Ranklist* whole) {
  Elastic el;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    std::size_t at = part.find('@');
    if (at == std::string_view::npos)
      throw std::invalid_argument("expected 'VALUES @ RANKLIST' in '" + std::string(part) + "'");
    auto trim = [](std::string_view s) {
      while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
      while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
      return s;
    };
    ElasticEntry entry;
    try {
      entry.values = ValueSeq::parse(trim(part.substr(0, at)));
      entry.ranks = parse_ranklist_or_whole(trim(part.substr(at + 1)), whole);
    } catch (const std::exception& ex) {
      throw std::invalid_argument(ex.what());
    }
    if (entry.ranks.empty())
      throw std::invalid_argument("empty ranklist in '" + std::string(part) + "'");
    el.entries_.push_back(std::move(entry));
    pos = end + 1;
  }
  if (el.entries_.empty()) throw std::invalid_argument("expected at least one value entry");
  std::vector<const Ranklist*> lists;
  for (const ElasticEntry& e : el.entries_) lists.push_back(&e.ranks);
  if (const std::size_t i = first_overlapping(lists); i < lists.size())
    throw std::invalid_argument("ranklists of one value overlap: " +
                                el.entries_[i].ranks.to_string());
  return el;
}

void merge_timings(std::vector<Timing>& into, const std::vector<Timing>& from) {
  for (const Timing& t : from) {
    auto it = std::lower_bound(into.begin(), into.end(), t.pred,
                               [](const Timing& x, EventKey k) { return x.pred < k; });
    if (it == into.end() || !(it->pred == t.pred)) {
      into.insert(it, t);
      continue;
    }
    it->compute.merge(t.compute);
    it->comm.merge(t.comm);
    for (const auto& [name, h] : t.stats) {
      auto s = std::find_if(it->stats.begin(), it->stats.end(),
                            [&](const auto& p) { return p.first == name; });
      if (s == it->stats.end())
        it->stats.emplace_back(name, h);
      else
        s->second.merge(h);
    }
  }
}

Elastic* Node::field(FieldId f) {
  for (auto& [id, el] : fields)
    if (id == f) return &el;
  return nullptr;
}

const Elastic* Node::field(FieldId f) const {
  for (const auto& [id, el] : fields)
    if (id == f) return &el;
  return nullptr;
}

const Timing* Node::timing_after(EventKey pred) const {
  const Timing* other = nullptr;
  for (const Timing& t : timings) {
    if (t.pred == pred) return &t;
    if (t.pred == kOtherKey) other = &t;
  }
  return other;
}

namespace {

// The typical values of two histograms of one kind differ by at most a
// factor of two (a log bin, the finest a histogram tells apart) or by at
// most kAlikeNs.
bool alike(const Histogram& a, const Histogram& b) {
  if (a.empty() || b.empty()) return a.empty() && b.empty();
  const double x = a.typical(), y = b.typical();
  const double lo = std::min(x, y), hi = std::max(x, y);
  return hi - lo <= static_cast<double>(kAlikeNs) || hi <= 2 * lo;
}

bool alike(const Timing& a, const Timing& b) {
  if (!alike(a.compute, b.compute) || !alike(a.comm, b.comm)) return false;
  if (a.stats.size() != b.stats.size()) return false;
  for (const auto& [name, h] : a.stats) {
    auto it = std::find_if(b.stats.begin(), b.stats.end(),
                           [&](const auto& p) { return p.first == name; });
    if (it == b.stats.end() || !alike(h, it->second)) return false;
  }
  return true;
}

uint64_t samples(const Timing& t) {
  uint64_t n = t.compute.count() + t.comm.count();
  for (const auto& [name, h] : t.stats) n += h.count();
  return n;
}

void settle_node(Node& n) {
  if (n.timings.size() >= 2) {
    // The main block: `other` if there is one (so a trace settled twice
    // keeps a single one), else the one with the most samples, the first
    // in pred order on a tie. Every block is compared with it as it is, so
    // the outcome does not depend on the order of the blocks.
    std::size_t main = 0;
    for (std::size_t i = 0; i < n.timings.size(); ++i) {
      if (n.timings[i].pred == kOtherKey) {
        main = i;
        break;
      }
      if (samples(n.timings[i]) > samples(n.timings[main])) main = i;
    }
    const Timing reference = n.timings[main];
    std::vector<Timing> kept, group;
    for (std::size_t i = 0; i < n.timings.size(); ++i) {
      Timing& t = n.timings[i];
      if (i == main || alike(reference, t))
        group.push_back(std::move(t));
      else
        kept.push_back(std::move(t));
    }
    if (group.size() >= 2) {
      // Histograms merge alike in any order (histogram.hpp).
      std::vector<Timing> acc;
      for (Timing& t : group) {
        t.pred = kOtherKey;
        merge_timings(acc, {t});
      }
      kept.push_back(std::move(acc.front()));
    } else {
      kept.push_back(std::move(group.front()));
    }
    std::sort(kept.begin(), kept.end(),
              [](const Timing& x, const Timing& y) { return x.pred < y.pred; });
    n.timings = std::move(kept);
  }
  for (Timing& t : n.timings) {
    t.compute.round_bin_means();
    t.comm.round_bin_means();
    for (auto& [name, h] : t.stats) h.round_bin_means();
  }
}

}  // namespace

void settle_timings(Trace& trace) {
  for (Node& n : trace.nodes) settle_node(n);
}

Ranklist Trace::ranks() const {
  Ranklist r;
  for (const auto& n : nodes) r.unite(n.ranks);
  return r;
}

std::string Trace::location_name(int32_t location) const {
  if (world_size <= 0 || threads <= 1) return "rank " + std::to_string(location);
  return "rank " + std::to_string(rank_of(location)) + " thread " +
         std::to_string(thread_of(location));
}

std::string Trace::describe_locations(const Ranklist& locations) const {
  if (world_size <= 0 || threads <= 1) return "ranks " + locations.to_string();
  std::vector<std::vector<int32_t>> per_thread(static_cast<std::size_t>(threads));
  locations.for_each([&](int32_t l) {
    if (thread_of(l) < threads)
      per_thread[static_cast<std::size_t>(thread_of(l))].push_back(rank_of(l));
  });
  std::string out;
  for (std::size_t t = 0; t < per_thread.size(); ++t) {
    if (per_thread[t].empty()) continue;
    if (!out.empty()) out += "; ";
    out += "thread " + std::to_string(t) + " ranks " +
           Ranklist::from_ranks(std::move(per_thread[t])).to_string();
  }
  return out;
}

std::size_t Trace::memory_bytes() const {
  std::size_t bytes = sizeof(Trace);
  for (const auto& n : nodes) {
    bytes += sizeof(Node);
    auto el = [&](const Elastic& e) {
      for (const auto& en : e.entries()) bytes += en.values.memory_bytes() + sizeof(Ranklist);
    };
    for (const auto& l : n.loops) {
      el(l.members);
      el(l.iters);
    }
    el(n.count);
    for (const auto& f : n.fields) el(f.second);
    bytes += n.timings.size() * sizeof(Timing);
  }
  return bytes;
}

void drop_timing(Trace& trace) {
  for (Node& n : trace.nodes) {
    std::erase_if(n.timings, [](const Timing& t) { return t.stats.empty(); });
    for (Timing& t : n.timings) t.compute = t.comm = Histogram{};
  }
}

bool default_histogram_field(FieldId f) {
  static const FieldId count = *FieldTable::find("count");
  static const FieldId tag = *FieldTable::find("tag");
  return f == FieldTable::peer() || f == FieldTable::src() || f == count || f == tag;
}

namespace {
// Runs as the text form shows them: a repeated pattern is one, and each
// value of a stretch that does not repeat is one of its own (the literal is
// stored as one span, but a sequence that never repeats is exactly what a
// histogram should take).
bool more_runs_than(const ValueSeq& values, std::size_t threshold) {
  if (values.run_count() > threshold) return true;
  std::size_t n = 0;
  for (const ValueSeq::Run& r : values.runs()) {
    n += r.reps == 1 ? r.pattern.size() : 1;
    if (n > threshold) return true;
  }
  return false;
}

// A field's values count by what the text form writes: a repeated pattern
// of 22 partners is 22 values, not one run. The partners an irregular code
// draws among all ranks repeat every iteration, so counting the run alone
// would keep them exact per rank and the trace would grow with the ranks.
bool more_values_than(const ValueSeq& values, std::size_t threshold) {
  std::size_t n = 0;
  for (const ValueSeq::Run& r : values.runs()) {
    n += r.pattern.size();
    if (n > threshold) return true;
  }
  return false;
}
}  // namespace

namespace {
// LOSSY: a poll loop, a loop whose body is one nonblocking probe
// (MPI_Iprobe) and whose trip counts say how often it found nothing, keeps
// its trip counts (when they have more than `threshold` runs) and every
// value of its probe as histograms: how many empty polls there were, and
// their outcomes, are approximated, while the loop's place and every send
// and receive around it stay exact. Expansion draws the probe's values
// from the histograms (starting over when a rank's trip counts call for
// more); probabilistic replay skips such probes. The merge shares the
// histograms of alike ranks (share_histograms).
constexpr std::string_view kPollLoopsNote =
    "poll loops modelled: trip counts and probe values as histograms";

bool model_poll_loops(Trace& trace, std::size_t threshold) {
  if (threshold == 0) return false;
  bool any = false;
  for (Node& n : trace.nodes) {
    const OpTraits& tr = op_traits(n.key.op);
    if (tr.family != OpFamily::kProbe || !tr.nonblocking) continue;
    bool modelled = false;
    for (LoopLevel& l : n.loops) {
      // A body of the probe alone: one member on every rank.
      bool alone = true, irregular = false;
      for (const ElasticEntry& e : l.members.entries())
        for (const ValueSeq::Run& r : e.values.runs())
          alone = alone && r.pattern.size() == 1 && r.pattern.front() == 1;
      for (const ElasticEntry& e : l.iters.entries())
        irregular = irregular || more_runs_than(e.values, threshold);
      if (!alone || !irregular) continue;
      for (ElasticEntry& e : l.iters.entries())
        if (!e.values.is_histogram()) e.values.make_histogram();
      modelled = true;
    }
    if (!modelled) continue;
    // The probe's values follow the trip counts, which no longer say which
    // poll found a message: its outcomes, sources and tags become
    // distributions too, and so does how often it runs when reached.
    for (ElasticEntry& e : n.count.entries())
      if (!e.values.is_histogram()) e.values.make_histogram();
    for (auto& [f, el] : n.fields)
      for (ElasticEntry& e : el.entries())
        if (!e.values.is_histogram() && !e.values.empty()) e.values.make_histogram();
    any = true;
  }
  if (!any) return false;
  std::string note(kPollLoopsNote);
  if (trace.lossy.find(note) == std::string::npos)
    trace.lossy = trace.lossy.empty() ? note : trace.lossy + "; " + note;
  return true;
}
}  // namespace

bool apply_histogram_threshold(Trace& trace, std::size_t threshold,
                               const std::vector<FieldId>& fields) {
  if (threshold == 0) return false;
  bool any = false;
  for (Node& n : trace.nodes) {
    for (auto& [f, el] : n.fields) {
      const bool chosen = fields.empty()
                              ? default_histogram_field(f)
                              : std::find(fields.begin(), fields.end(), f) != fields.end();
      if (!chosen) continue;
      for (ElasticEntry& e : el.entries()) {
        if (e.values.is_histogram() || !more_values_than(e.values, threshold)) continue;
        e.values.make_histogram();
        any = true;
      }
    }
  }
  if (any && trace.lossy.empty()) trace.lossy = "histogram threshold=" + std::to_string(threshold);
  return model_poll_loops(trace, threshold) || any;
}

}  // namespace tracefold
