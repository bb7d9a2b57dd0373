#include "tracefold/analysis_basic.hpp"

#include <algorithm>
#include <map>

#include "tracefold/expand.hpp"
#include "tracefold/ranklist_sweep.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

std::string Difference::describe() const {
  if (rank < 0) return field + ": " + left + " vs " + right;
  return (where.empty() ? "rank " + std::to_string(rank) : where) + ", event " +
         std::to_string(position) + ", " + field + ": " + left + " vs " + right;
}

namespace {

std::string field_text(const FieldValue* f) {
  if (!f) return "(absent)";
  if (FieldTable::kind(f->field) == FieldKind::kList) {
    std::string s = "[";
    for (std::size_t i = 0; i < f->list.size(); ++i) s += (i ? "," : "") + format_value(f->list[i]);
    return s + "]";
  }
  return format_value(f->scalar);
}

}  // namespace

bool is_poll(OpId op) {
  static const std::vector<OpId> polls = [] {
    std::vector<OpId> v;
    for (const char* n :
         {"MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome", "MPI_Iprobe", "MPI_Improbe"})
      if (auto id = OpTable::find(n)) v.push_back(*id);
    return v;
  }();
  return std::find(polls.begin(), polls.end(), op) != polls.end();
}

std::optional<Difference> diff_events(int32_t rank, const EventSource& a, const SiteTable& sa,
                                      const EventSource& b, const SiteTable& sb,
                                      const DiffOptions& options) {
  Event ea, eb;
  const FieldId src_field = FieldTable::src();
  const FieldId mtag_field = FieldTable::intern("mtag", FieldKind::kScalar);
  const FieldId srcs_field = FieldTable::intern("srcs", FieldKind::kList);
  const FieldId mtags_field = FieldTable::intern("mtags", FieldKind::kList);
  const FieldId outcomes[] = {
      FieldTable::intern("index", FieldKind::kScalar),
      FieldTable::intern("indices", FieldKind::kList),
      FieldTable::intern("outcount", FieldKind::kScalar),
      FieldTable::intern("links", FieldKind::kList),
  };
  for (uint64_t pos = 0;; ++pos) {
    const bool ha = a(ea), hb = b(eb);
    if (!ha && !hb) return std::nullopt;
    if (ha != hb)
      return Difference{rank,
                        pos,
                        "length",
                        ha ? OpTable::name(ea.op) : "(end)",
                        hb ? OpTable::name(eb.op) : "(end)",
                        {}};
    if (ea.op != eb.op)
      return Difference{rank, pos, "op", OpTable::name(ea.op), OpTable::name(eb.op), {}};
    if (!options.ignore_callsites && sa.at(ea.site) != sb.at(eb.site))
      return Difference{
          rank, pos, "site", SiteTable::format(sa.at(ea.site)), SiteTable::format(sb.at(eb.site)),
          {}};
    if (options.ignore_polls && is_poll(ea.op)) continue;
    std::vector<FieldId> ids;
    for (const auto& f : ea.fields) ids.push_back(f.field);
    for (const auto& f : eb.fields) ids.push_back(f.field);
    std::sort(ids.begin(), ids.end(), FieldTable::print_before);
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (FieldId id : ids) {
      if (options.ignore_matched &&
          (id == src_field || id == mtag_field || id == srcs_field || id == mtags_field))
        continue;
      if (options.ignore_outcomes &&
          std::find(std::begin(outcomes), std::end(outcomes), id) != std::end(outcomes))
        continue;
      const FieldValue* fa = ea.find(id);
      const FieldValue* fb = eb.find(id);
      if (!fa || !fb || !(*fa == *fb))
        return Difference{rank, pos, FieldTable::name(id), field_text(fa), field_text(fb), {}};
    }
  }
}

std::optional<Difference> diff_traces(const Trace& a, const Trace& b, const DiffOptions& options) {
  if (a.world_size != b.world_size)
    return Difference{
        -1, 0, "world size", std::to_string(a.world_size), std::to_string(b.world_size), {}};
  if (a.threads != b.threads)
    return Difference{
        -1, 0, "threads per rank", std::to_string(a.threads), std::to_string(b.threads), {}};
  // Location by location: with one thread per rank, rank by rank.
  for (int32_t r = 0; r < a.locations(); ++r) {
    RankIterator ia(a, r), ib(b, r);
    auto d = diff_events(
        r, [&](Event& e) { return ia.next(e); }, a.sites, [&](Event& e) { return ib.next(e); },
        b.sites, options);
    if (d) {
      if (a.threads > 1) d->where = a.location_name(r);
      return d;
    }
  }
  return std::nullopt;
}

namespace {

// The fields event_bytes reads.
constexpr const char* kByteFields[] = {"count", "counts", "rcount", "rcounts", "dsize", "rdsize"};

// What the events of a rank and their bytes depend on, as groups of
// ranklists for split_ranks: each node's ranks, the entries of its loop
// levels, of its execution count and of the fields in kByteFields.
std::vector<std::vector<const Ranklist*>> calls_and_bytes_groups(const Trace& trace) {
  std::vector<FieldId> byte_fields;
  for (const char* name : kByteFields)
    if (auto id = FieldTable::find(name)) byte_fields.push_back(*id);
  std::vector<std::vector<const Ranklist*>> groups;
  auto add = [&](const Elastic& el) {
    auto& g = groups.emplace_back();
    for (const ElasticEntry& e : el.entries()) g.push_back(&e.ranks);
  };
  for (const Node& n : trace.nodes) {
    groups.push_back({&n.ranks});
    for (const LoopLevel& l : n.loops) {
      add(l.members);
      add(l.iters);
    }
    add(n.count);
    for (const auto& [f, el] : n.fields)
      if (std::find(byte_fields.begin(), byte_fields.end(), f) != byte_fields.end()) add(el);
  }
  return groups;
}

}  // namespace

uint64_t event_bytes(const Event& ev) {
  auto scalar = [&](const char* name) -> int64_t {
    auto id = FieldTable::find(name);
    if (!id) return 0;
    int64_t v = ev.get(*id);
    return is_sentinel(v) ? 0 : v;
  };
  auto list_sum = [&](const char* name) -> int64_t {
    auto id = FieldTable::find(name);
    if (!id) return -1;
    const FieldValue* f = ev.find(*id);
    if (!f) return -1;
    int64_t s = 0;
    for (int64_t v : f->list)
      if (!is_sentinel(v)) s += v;
    return s;
  };
  int64_t count = scalar("count");
  if (int64_t s = list_sum("counts"); s >= 0) count = s;
  int64_t rcount = scalar("rcount");
  if (int64_t s = list_sum("rcounts"); s >= 0) rcount = s;
  const int64_t total = count * scalar("dsize") + rcount * scalar("rdsize");
  return total > 0 ? static_cast<uint64_t>(total) : 0;
}

std::vector<StatsRow> compute_stats(const Trace& trace) {
  std::map<EventKey, StatsRow> rows;
  std::vector<StatsRow*> row_of_node;
  for (const Node& n : trace.nodes) {
    StatsRow& row = rows[n.key];
    row_of_node.push_back(&row);
    row.key = n.key;
    for (const Timing& t : n.timings) {
      row.time.merge(t.comm);
      row.compute.merge(t.compute);
    }
    row.ranks.unite(n.ranks);
  }
  // Ranks that have the same nodes, loop members and iterations, execution
  // counts and byte fields make the same calls with the same bytes: one
  // rank of each class is walked and counted for all of them.
  for (const RankClass& c : split_ranks(trace.ranks(), calls_and_bytes_groups(trace))) {
    RankIterator it(trace, c.first);
    Event e;
    while (it.next(e)) {
      StatsRow& row =
          *row_of_node[static_cast<std::size_t>(it.current_node() - trace.nodes.data())];
      row.calls += c.size;
      row.bytes += c.size * event_bytes(e);
    }
  }
  std::vector<StatsRow> out;
  for (auto& [key, row] : rows) {
    row.op = OpTable::name(key.op);
    row.frames = SiteTable::format(trace.sites.at(key.site));
    row.site = site_label(trace.symtab, trace.sites.at(key.site));
    row.site_named = row.site != row.frames;
    out.push_back(std::move(row));
  }
  std::stable_sort(out.begin(), out.end(), [](const StatsRow& a, const StatsRow& b) {
    if (a.time.sum() != b.time.sum()) return a.time.sum() > b.time.sum();
    if (a.op != b.op) return a.op < b.op;
    return a.key.site < b.key.site;
  });
  return out;
}

std::string render_trace(const Trace& trace, bool call_paths) {
  std::string out =
      "trace of " + std::to_string(trace.world_size) + " ranks, " +
      (trace.threads > 1 ? std::to_string(trace.threads) + " threads per rank, " : std::string()) +
      std::to_string(trace.nodes.size()) + " nodes, " + std::to_string(trace.sites.size()) +
      " call sites" +
      (trace.lossy.empty() ? std::string(", lossless") : ", LOSSY: " + trace.lossy) + "\n";
  if (trace.threads > 1)
    out += "locations: thread t of rank r is t*" + std::to_string(trace.world_size) + "+r\n";
  if (!trace.omp.empty())
    out += "OpenMP thread numbers by location: " + trace.omp.to_string() + "\n";
  if (const auto level = recorded_thread_level(trace))
    out += "thread level: " + describe_thread_level(*level) + "\n";
  // Indentation follows the loops as the node's lowest rank sees them, so
  // only the ranks that are some node's lowest are followed through the
  // nodes (not every rank: a trace may stand for a million).
  struct Walk {
    int32_t rank;
    std::vector<std::size_t> ends;  // ends of open loops (in the rank's sub-list)
    std::size_t seen = 0;           // nodes of its sub-list seen so far
  };
  std::vector<Walk> walks;
  {
    std::vector<int32_t> lowest;
    for (const Node& n : trace.nodes) lowest.push_back(n.ranks.first());
    std::sort(lowest.begin(), lowest.end());
    lowest.erase(std::unique(lowest.begin(), lowest.end()), lowest.end());
    for (int32_t r : lowest) walks.push_back(Walk{r, {}, 0});
  }
  for (std::size_t i = 0; i < trace.nodes.size(); ++i) {
    const Node& n = trace.nodes[i];
    for (Walk& w : walks) {
      if (!n.ranks.contains(w.rank)) continue;
      while (!w.ends.empty() && w.ends.back() <= w.seen) w.ends.pop_back();
      for (const LoopLevel& l : n.loops) {
        const ValueSeq* m = l.members.for_rank(w.rank);
        if (!m || m->empty()) break;
        w.ends.push_back(w.seen + static_cast<std::size_t>(m->cursor().next()));
      }
      ++w.seen;
    }
    const int32_t r0 = n.ranks.first();
    const std::size_t depth =
        std::lower_bound(walks.begin(), walks.end(), r0, [](const Walk& w, int32_t r) {
          return w.rank < r;
        })->ends.size();
    // Loops headed here are printed one level out from the node itself.
    std::size_t headed = 0;
    for (const LoopLevel& l : n.loops)
      if (l.members.for_rank(r0)) ++headed;
    std::string base(2 * (depth - std::min(depth, headed)), ' ');
    for (std::size_t l = 0; l < n.loops.size(); ++l) {
      out += base + std::string(2 * l, ' ') + "loop iters " + n.loops[l].iters.to_string() +
             " | members " + n.loops[l].members.to_string() + "\n";
    }
    std::string ind(2 * depth, ' ');
    out += ind + "#" + std::to_string(i) + " " + OpTable::name(n.key.op) + " at " +
           site_label(trace.symtab, trace.sites.at(n.key.site)) + "  " +
           trace.describe_locations(n.ranks) + "\n";
    if (call_paths) {
      out += ind + "    path";
      const auto path = site_path(trace.symtab, trace.sites.at(n.key.site));
      for (std::size_t f = 0; f < path.size(); ++f) out += (f ? " <- " : " ") + path[f];
      out += "\n";
    }
    const bool always = n.count.entries().size() == 1 &&
                        n.count.entries()[0].values.run_count() == 1 &&
                        n.count.entries()[0].values.back() == 1;
    if (!always) out += ind + "    count " + n.count.to_string() + "\n";
    for (const auto& [f, el] : n.fields)
      out += ind + "    " + FieldTable::name(f) +
             (FieldTable::role(f) == FieldRole::kPeer ? " (relative)" : "") + " = " +
             el.to_string() + "\n";
    Histogram comm, compute;
    for (const Timing& t : n.timings) {
      comm.merge(t.comm);
      compute.merge(t.compute);
    }
    if (!comm.empty())
      out += ind + "    time in call: n=" + std::to_string(comm.count()) +
             " mean=" + std::to_string(static_cast<int64_t>(comm.mean())) + "ns" +
             " min=" + std::to_string(comm.min()) + "@" + std::to_string(comm.min_rank()) +
             " max=" + std::to_string(comm.max()) + "@" + std::to_string(comm.max_rank()) + "\n";
    if (!compute.empty())
      out += ind +
             "    compute before: mean=" + std::to_string(static_cast<int64_t>(compute.mean())) +
             "ns max=" + std::to_string(compute.max()) + "@" + std::to_string(compute.max_rank()) +
             "\n";
  }
  return out;
}

}  // namespace tracefold
