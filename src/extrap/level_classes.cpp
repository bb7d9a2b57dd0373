// Extrapolation of a multigrid whose coarse levels leave ranks idle: the
// per-level rank-predicate model (docs/extrapolate.md, "Multigrid").
//
// On a periodic grid the ranks busy on a coarse level are those whose
// coordinates are multiples of the level's strides (levels.cpp), and they
// exchange with the busy ranks a stride away. Written as coordinate
// offsets with the wrap-around taken out, every rank's partners are then
// the same as those of any other rank busy on the same levels: ranks fall
// into classes by the number of levels they are busy on (their depth), and
// a class has one trace. Each class's trace is read off one rank of it in
// every input, its numbers extrapolated like those of any one part of the
// grid (nodes.cpp, the peers taken out), its offsets fitted as fixed or
// proportional to the side, and the target's ranks of the class, chosen by
// the fitted stride laws, get it back with their own partners.
#include <algorithm>
#include <bit>
#include <map>

#include "internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/merge.hpp"

namespace tracefold::extrap::detail {

namespace {

int64_t rank_at(const Topology& t, const std::vector<int64_t>& c) {
  int64_t r = 0, w = 1;
  for (std::size_t d = 0; d < c.size(); ++d) {
    r += (((c[d] % t.sizes[d]) + t.sizes[d]) % t.sizes[d]) * w;
    w *= t.sizes[d];
  }
  return r;
}

int depth_of(const Topology& t, const std::vector<BusyLevel>& levels, int64_t r) {
  const auto c = t.coords(r);
  int depth = 0;
  for (const BusyLevel& l : levels) {
    for (std::size_t d = 0; d < c.size(); ++d)
      if (c[d] % l.stride[d] != 0) return depth;
    ++depth;
  }
  return depth;
}

// One input read through its levels.
struct LevelInput {
  const ExtrapInput* in = nullptr;
  Topology topo;
  std::vector<BusyLevel> levels;
  std::vector<int32_t> rep;                  // per depth: the class's lowest rank
  std::vector<std::vector<PeerSlot>> slots;  // per depth: the class's partners
};

// Every peer field of `trace` is on the world (or a copy of it in world
// order): the offsets are read on the world's grid.
bool world_peers(const Trace& trace) {
  for (const Node& n : trace.nodes)
    if (const Elastic* comm = n.field(FieldTable::comm()))
      for (const auto& e : comm->entries())
        for (int64_t v : e.values.to_vector())
          if (!world_like_comm(trace, v)) return false;
  return true;
}

LevelInput read_levels(const ExtrapInput& x, int dims_wanted, bool open) {
  LevelInput li;
  li.in = &x;
  const int64_t p = x.trace.world_size;
  if (p > 4096) throw ExtrapError(x.name + ": more than 4,096 ranks to read levels from");
  if (!world_peers(x.trace))
    throw ExtrapError(x.name + ": peers on communicators other than the world");
  const int dims =
      dims_wanted > 0 ? dims_wanted : plausible_grid(relative_endpoints(x.trace, true)).topo.dims();
  li.topo = Topology{dims_create(p, dims), {}};
  auto levels = busy_levels(x.trace, li.topo);
  if (!levels)
    throw ExtrapError(x.name + ": on the " + li.topo.to_string() +
                      " grid MPI_Dims_create makes, the ranks that make more calls than others "
                      "are no set of coordinates multiples of a stride per dimension");
  li.levels = std::move(*levels);
  // A lone busy rank along d says only that the stride is at least the
  // side, so an input with twice the side there is the least that could
  // show the level's exchanges along d.
  std::vector<int64_t> need(li.topo.sizes.size(), 1);
  std::string lone;
  bool several = false;
  for (const BusyLevel& l : li.levels)
    for (std::size_t d = 0; d < l.lone.size(); ++d)
      if (l.lone[d] && li.topo.sizes[d] > 1 && need[d] == 1) {
        need[d] = 2 * li.topo.sizes[d];
        several = !lone.empty();
        lone += std::string(lone.empty() ? "" : " and ") + "xyz"[d < 3 ? d : 0];
      }
  if (!lone.empty()) {
    std::string at_least;
    for (std::size_t d = 0; d < need.size(); ++d)
      if (need[d] > 1)
        at_least += std::string(at_least.empty() ? "" : ", ") + std::to_string(need[d]) +
                    " along " + "xyz"[d < 3 ? d : 0];
    const std::string smallest = smallest_grid_with(need, (p & (p - 1)) == 0);
    throw ExtrapError(x.name + ": a coarse level has one busy rank along " + lone + " (" +
                      li.topo.to_string() + "), so its exchanges along " +
                      (several ? "them" : "it") +
                      " are missing there: record counts whose grids keep at least two busy ranks "
                      "along every dimension on every level (at least " +
                      at_least +
                      (smallest.empty() ? std::string()
                                        : "; the smallest count with such a grid is " + smallest) +
                      ")");
  }
  li.rep.assign(li.levels.size() + 1, -1);
  std::vector<std::vector<int64_t>> sig(li.rep.size());
  std::vector<std::vector<int32_t>> members(li.rep.size());
  for (int32_t r = 0; r < p; ++r) {
    const auto k = static_cast<std::size_t>(depth_of(li.topo, li.levels, r));
    std::vector<int64_t> mine = class_signature(x.trace, li.topo, r, open);
    members[k].push_back(r);
    if (li.rep[k] < 0) {
      li.rep[k] = r;
      sig[k] = std::move(mine);
    } else if (mine != sig[k]) {
      throw ExtrapError(
          x.name + ": ranks " + std::to_string(li.rep[k]) + " and " + std::to_string(r) +
          " are busy on the same " + std::to_string(k) +
          " coarse level(s) but their calls differ " +
          (open ? "beyond their partners (on a grid with edges, every rank of a class must make "
                  "the same calls, with MPI_PROC_NULL beyond an edge; values that follow the "
                  "position, or calls skipped at an edge, are not modelled)"
                : "beyond their partners' offsets (a grid with edges whose ranks skip calls "
                  "there, or values that follow the position)"));
    }
  }
  for (std::size_t k = 0; k < members.size(); ++k)
    li.slots.push_back(members[k].empty()
                           ? std::vector<PeerSlot>{}
                           : class_partners(x.trace, li.topo, members[k], open, x.name, k));
  return li;
}

// The class of depth `k` of input `li` as a one-rank trace, its peers
// taken out into `peers[node]` (field, offsets per call; sentinels kept in
// a separate flag vector).
struct PeerOffsets {
  FieldId field;
  std::vector<std::vector<int64_t>> offsets;  // per call: per dimension
  std::vector<int64_t> sentinel;              // per call: the sentinel, or 0
};
ExtrapInput class_trace(const LevelInput& li, std::size_t k,
                        std::vector<std::vector<PeerOffsets>>& peers) {
  const Trace& t = li.in->trace;
  const int32_t rep = li.rep[k];
  ExtrapInput out{li.in->name, {}};
  out.trace.world_size = 1;
  out.trace.sites = t.sites;
  out.trace.symtab = t.symtab;
  out.trace.comms.define_world(1);
  out.trace.lossy = t.lossy;
  out.trace.nodes = rank_nodes(t, rep, Ranklist::single(0));
  std::size_t j = 0, slot = 0;
  for (const Node& n : t.nodes) {
    if (!n.ranks.contains(rep)) continue;
    Node& mine = out.trace.nodes[j++];
    const int64_t total = executions(n.count);
    const double f =
        total > 0 ? static_cast<double>(executions(mine.count)) / static_cast<double>(total) : 0.0;
    scale_timings(mine, f);
    std::vector<PeerOffsets> mine_peers;
    for (const auto& [field, e] : mine.fields) {
      if (FieldTable::role(field) != FieldRole::kPeer) continue;
      if (FieldTable::kind(field) == FieldKind::kList)
        throw ExtrapError(li.in->name + ": lists of peers (field " + FieldTable::name(field) +
                          ") are not read as offsets");
      PeerOffsets po{field, {}, {}};
      const std::size_t calls = e.entries()[0].values.to_vector().size();
      for (std::size_t c = 0; c < calls; ++c) {
        const PeerSlot& s = li.slots[k].at(slot++);
        po.offsets.push_back(s.offset);
        po.sentinel.push_back(s.sentinel);
      }
      mine_peers.push_back(std::move(po));
    }
    std::erase_if(mine.fields,
                  [](const auto& fe) { return FieldTable::role(fe.first) == FieldRole::kPeer; });
    peers.push_back(std::move(mine_peers));
  }
  return out;
}

// The offset at the target's side `target` of one call's offsets along one
// dimension (`v[k]` at side `side[k]` in input k): fixed, or the same share
// of the side; nullopt when neither explains them. On a `ring` a step of
// half the side reads either way, so values are compared on each input's
// ring; on a grid with edges they are compared as they are.
std::optional<int64_t> fit_offset(const std::vector<int64_t>& v, const std::vector<int64_t>& side,
                                  std::size_t largest, int64_t target, bool ring) {
  const int64_t b = v[largest];
  auto same = [ring](int64_t a, int64_t s) { return (ring ? ring_offset(a, s) : a) == 0; };
  bool fixed = true, share = true;
  for (std::size_t k = 0; k < v.size(); ++k) {
    fixed = fixed && same(v[k] - b, side[k]);
    // b / side[largest] of side[k]
    share = share && (b * side[k]) % side[largest] == 0 &&
            same(v[k] - b * side[k] / side[largest], side[k]);
  }
  if (fixed) return b;
  if (share && (b * target) % side[largest] == 0) return b * target / side[largest];
  return std::nullopt;
}

Elastic with_ranks(const Elastic& e, const Ranklist& ranks) {
  Elastic out;
  for (const auto& entry : e.entries()) out.entries().push_back({entry.values, ranks});
  return out;
}

// What extrapolates a multigrid that the per-level model cannot (the
// ways docs/extrapolate.md, "Multigrid", tests).
constexpr const char* kLevelRemedies =
    "record with enough points that every level keeps a point on every rank at the target (no "
    "rank idles then, and the row-major path extrapolates it), record weak scaling (a fixed "
    "number of points a rank), or give the coarse levels' exchanges call sites of their own "
    "and drop them with --lcs (lossy)";

// "every 2nd of the 8 ranks along y": where a level of `t` idles ranks.
std::string idle_along(const Topology& t, const BusyLevel& l) {
  std::string out;
  for (std::size_t d = 0; d < l.stride.size(); ++d) {
    if (l.stride[d] <= 1) continue;
    out += std::string(out.empty() ? "" : " and ") + "every " + std::to_string(l.stride[d]) +
           (l.stride[d] == 2   ? "nd"
            : l.stride[d] == 3 ? "rd"
                               : "th") +
           " of the " + std::to_string(t.sizes[d]) + " ranks along " + "xyz"[d < 3 ? d : 0];
  }
  return out;
}

// "2nd", "3rd", "11th": an ordinal for level names.
std::string ordinal(std::size_t n) {
  const std::size_t teen = n % 100, last = n % 10;
  const char* suffix = teen >= 11 && teen <= 13 ? "th"
                       : last == 1              ? "st"
                       : last == 2              ? "nd"
                       : last == 3              ? "rd"
                                                : "th";
  return std::to_string(n) + suffix;
}

// Which of the program's levels idle level `l` of `n` (finest first) is.
// Levels idle ranks from the coarsest on, so the idle ones are the
// program's last and are counted from its coarsest; the finer levels,
// busy on every rank, leave no mark in the calls that would number them
// from the finest.
std::string level_name(std::size_t l, std::size_t n) {
  const std::size_t from_coarsest = n - l;
  std::string out = from_coarsest == 1 ? "the coarsest level"
                                       : "the " + ordinal(from_coarsest) + " coarsest level";
  if (n == 1)
    out += " (the only idle one)";
  else if (l == 0)
    out += " (the finest idle one)";
  return out;
}

// The refusal when `few` has fewer coarse levels with idle ranks than
// `many`. Under strong scaling a level's points are fixed, so each
// doubling of a side makes one more level idle ranks along it: a count
// beyond the inputs has a class of ranks (busy on fewer levels) that no
// input has, and the level it idles is busy on every rank of every input
// that far, whatever its points; two programs whose levels hold the
// largest side's points and more trace alike there. So the message
// names the level and says what would extrapolate the program.
std::string fewer_idle_levels(const LevelInput& few, const LevelInput& many) {
  const std::size_t extra = many.levels.size() - std::min(many.levels.size(), few.levels.size());
  std::string out = few.in->name + " (" + few.topo.to_string() + ") has " +
                    std::to_string(few.levels.size()) + " coarse level(s) with idle ranks, " +
                    many.in->name + " (" + many.topo.to_string() + ") has " +
                    std::to_string(many.levels.size());
  if (few.levels.size() < many.levels.size() && few.topo.ranks() < many.topo.ranks() && extra > 0) {
    // The extra levels are the finest ones of `many`.
    out += ": its finest such level keeps " + idle_along(many.topo, many.levels[0]) +
           " busy, a level on which every rank of " + few.in->name +
           " works. A multigrid whose levels keep their points as the ranks grow (strong "
           "scaling) idles ranks on one more level each time a side doubles, so every count "
           "above the inputs has ranks busy on fewer levels than any input shows, and the "
           "level they idle on is busy on every rank of every input: its calls, partners and "
           "sizes there are the same whether its points run out at the target's side or not, "
           "so no trace of these counts says which of its ranks idle at a larger one. The "
           "per-level model takes each class of ranks from every input and needs the same "
           "levels idle in all of them: record counts at which the same levels leave ranks "
           "idle, " +
           std::string(kLevelRemedies) + ", or record the target count itself";
  } else {
    out +=
        ": record counts at which the same levels leave ranks idle (a level whose points "
        "are fixed, under strong scaling, idles ranks only once a side outgrows them, so "
        "smaller counts show fewer such levels), or " +
        std::string(kLevelRemedies);
  }
  return out;
}

}  // namespace

std::optional<ExtrapResult> extrapolate_levels(const std::vector<ExtrapInput>& in,
                                               const ExtrapOptions& opts, std::string& why) {
  // Only traces with busy levels are this model's: without them the
  // stencil path's refusal stands alone.
  std::size_t largest = 0;
  for (std::size_t k = 0; k < in.size(); ++k)
    if (in[k].trace.world_size > in[largest].trace.world_size) largest = k;
  if (in[largest].trace.world_size > 4096) return std::nullopt;
  const Topology big{plausible_grid(relative_endpoints(in[largest].trace, true)).topo.sizes, {}};
  const auto seen = busy_levels(
      in[largest].trace, Topology{dims_create(in[largest].trace.world_size, big.dims()), {}});
  if (!seen || seen->empty()) return std::nullopt;
  try {
    ExtrapResult res;
    // A grid with edges: some rank has MPI_PROC_NULL for a partner.
    bool open = false;
    for (const auto& x : in)
      for (const Node& n : x.trace.nodes)
        for (const auto& [field, e] : n.fields)
          if (FieldTable::role(field) == FieldRole::kPeer)
            for (const auto& entry : e.entries())
              for (int64_t v : entry.values.to_vector()) open = open || v == kNull;
    std::vector<LevelInput> li;
    for (const auto& x : in) li.push_back(read_levels(x, big.dims(), open));
    const int dims = big.dims();
    bool pow2 = true;
    for (const auto& x : in)
      pow2 = pow2 && std::has_single_bit(static_cast<uint32_t>(x.trace.world_size));
    const std::size_t depth = li[largest].levels.size();
    for (const auto& l : li)
      if (l.levels.size() != depth) throw ExtrapError(fewer_idle_levels(l, li[largest]));
    res.target = Topology{dims_create(opts.ranks, dims), {}};
    res.target_rule = "MPI_Dims_create";
    const Topology& target = res.target;
    // The stride laws of every level.
    std::vector<BusyLevel> tlevels;
    for (std::size_t l = 0; l < depth; ++l) {
      BusyLevel tl;
      std::string laws;
      for (int d = 0; d < dims; ++d) {
        std::vector<StrideObservation> obs;
        for (const auto& x : li)
          obs.push_back({x.topo.sizes[static_cast<std::size_t>(d)],
                         x.levels[l].stride[static_cast<std::size_t>(d)],
                         static_cast<bool>(x.levels[l].lone[static_cast<std::size_t>(d)])});
        const StrideFit f = fit_stride(obs, target.sizes[static_cast<std::size_t>(d)]);
        const std::string dim(1, "xyz"[d]);
        if (!f.stride) {
          // A side no input has is what tells the laws apart.
          std::vector<int64_t> need(static_cast<std::size_t>(dims), 1);
          for (const auto& o : obs)
            need[static_cast<std::size_t>(d)] =
                std::max(need[static_cast<std::size_t>(d)], o.size + 1);
          const std::string smallest = smallest_grid_with(need, pow2);
          // A deciding count at or above the target leaves nothing to
          // extrapolate from: say what else would do.
          const bool none_below = !smallest.empty() && std::stoll(smallest) >= opts.ranks;
          throw ExtrapError(
              level_name(l, depth) + ", stride along " + dim + ": " + f.law +
              (smallest.empty() ? std::string()
                                : " (the smallest count with more ranks along " + dim +
                                      " than every input is " + smallest + ")") +
              (none_below ? "; no count below the target decides it: record the target count "
                            "itself, or " +
                                std::string(kLevelRemedies)
                          : std::string()));
        }
        std::string sides;
        int64_t widest = 0;
        for (const auto& o : obs) {
          sides += (sides.empty() ? "" : ", ") + std::to_string(o.size);
          widest = std::max(widest, o.size);
        }
        const int64_t tside = target.sizes[static_cast<std::size_t>(d)];
        if (f.fixed_count && tside > widest) {
          // A level keeps a fixed number of busy ranks when its points are
          // fixed (strong scaling), and then so are the finer levels'
          // points: one of those, busy on every rank of every input, may run
          // out of points along a side no input has and idle ranks there,
          // which no input shows. Even idle-level counts do not rule it out
          // (coarsening by other factors than 2 leaves sides without a new
          // idle level), so this is refused rather than guessed.
          std::vector<int64_t> need(static_cast<std::size_t>(dims), 1);
          need[static_cast<std::size_t>(d)] = tside;
          const std::string smallest = smallest_grid_with(need, pow2);
          const bool none_below = smallest.empty() || std::stoll(smallest) >= opts.ranks;
          throw ExtrapError(
              level_name(l, depth) + ", stride along " + dim + ": " + f.law +
              ", a fixed number of busy ranks, and the target's " + std::to_string(tside) +
              " ranks along " + dim + " exceed every input's (" + sides +
              "): a level keeps its busy ranks fixed in number when its points are fixed "
              "(strong scaling), and so are the points of the finer levels, busy on every rank "
              "of every input; one of them may run out of points beyond the inputs' sides and "
              "idle ranks that no input shows. " +
              (none_below ? "Record the target count itself (no count below it has " +
                                std::to_string(tside) + " ranks along " + dim + ")"
                          : "Record an input with " + std::to_string(tside) + " ranks along " +
                                dim + " (the smallest count with them is " + smallest + ")") +
              ", or " + kLevelRemedies);
        }
        laws += (laws.empty() ? "" : ", ") + dim + " " + f.law + " -> " + std::to_string(*f.stride);
        tl.stride.push_back(*f.stride);
      }
      res.explanation.push_back(level_name(l, depth) + ": busy ranks at coordinates multiples of " +
                                laws);
      tlevels.push_back(std::move(tl));
    }
    // The target's classes.
    std::vector<std::vector<int32_t>> members(depth + 1);
    for (int64_t r = 0; r < opts.ranks; ++r)
      members[static_cast<std::size_t>(depth_of(target, tlevels, r))].push_back(
          static_cast<int32_t>(r));
    Trace acc;
    bool first = true;
    for (std::size_t k = 0; k <= depth; ++k) {
      if (members[k].empty()) continue;
      const std::string where = "ranks busy on " + std::to_string(k) + " coarse level(s)";
      std::vector<ExtrapInput> cin;
      std::vector<std::vector<std::vector<PeerOffsets>>> peers(li.size());
      for (std::size_t x = 0; x < li.size(); ++x) {
        if (li[x].rep[k] < 0) throw ExtrapError(where + ": none in " + li[x].in->name);
        cin.push_back(class_trace(li[x], k, peers[x]));
      }
      std::vector<GridInput> cg;
      for (std::size_t x = 0; x < cin.size(); ++x) {
        GridInput g;
        g.input = &cin[x];
        g.topo = li[x].topo;
        g.cell_of_rank = {0};
        // The class's one rank stands for every part: its values are no
        // part's, so the target's first part gets them and passes them on.
        g.cell_rep.assign(static_cast<std::size_t>(cell_count(target)), 0);
        g.cell_last = g.cell_rep;
        cg.push_back(std::move(g));
      }
      std::vector<std::vector<std::size_t>> order;
      Trace part;
      part.world_size = static_cast<int32_t>(opts.ranks);
      part.comms.define_world(part.world_size);
      res.explanation.push_back(where + " (" + std::to_string(members[k].size()) + " of " +
                                std::to_string(opts.ranks) + "):");
      const std::size_t said = res.explanation.size();
      try {
        order = align_nodes(cin);
        extrapolate_nodes(cin, cg, order, target, {}, part, res, {}, opts.model_counts);
      } catch (const ExtrapError& e) {
        throw ExtrapError(where + ": " + e.what());
      }
      // The laws were fitted on the part the class's rank stands in; they
      // hold for every rank of the class.
      const std::string part_name = " @ " + cell_name(target, 0);
      for (std::size_t i = said; i < res.explanation.size(); ++i)
        for (std::size_t at; (at = res.explanation[i].find(part_name)) != std::string::npos;)
          res.explanation[i].replace(at, part_name.size(), " @ the class");
      if (part.nodes.size() != order[0].size())
        throw ExtrapError(where + ": some call has no rank at the target");
      const Ranklist ranks = Ranklist::from_ranks(members[k]);
      const double share = static_cast<double>(members[k].size());
      for (std::size_t i = 0; i < part.nodes.size(); ++i) {
        Node& n = part.nodes[i];
        const int64_t calls = executions(n.count);
        n.count = with_ranks(n.count, ranks);
        n.ranks = ranks;
        for (LoopLevel& l : n.loops) {
          l.members = with_ranks(l.members, ranks);
          l.iters = with_ranks(l.iters, ranks);
        }
        for (auto& [f, e] : n.fields) e = with_ranks(e, ranks);
        scale_timings(n, share);
        // The peers: each call's offset fitted over the inputs.
        const std::size_t fields = peers[0][order[0][i]].size();
        for (std::size_t fi = 0; fi < fields; ++fi) {
          const FieldId field = peers[0][order[0][i]][fi].field;
          std::vector<const PeerOffsets*> obs;
          for (std::size_t x = 0; x < li.size(); ++x) {
            const auto& pn = peers[x][order[x][i]];
            if (pn.size() != fields || pn[fi].field != field ||
                pn[fi].offsets.size() != static_cast<std::size_t>(calls))
              throw ExtrapError(where + ", node " + std::to_string(order[0][i]) + " (" +
                                describe_node(in[0].trace, in[0].trace.nodes[order[0][i]]) +
                                "): its calls or peer fields differ in number between the "
                                "inputs");
            obs.push_back(&pn[fi]);
          }
          std::vector<std::vector<int64_t>> toff;  // per call: offsets at the target
          std::vector<int64_t> tsent;
          for (std::size_t c = 0; c < static_cast<std::size_t>(calls); ++c) {
            tsent.push_back(obs[largest]->sentinel[c]);
            for (std::size_t x = 0; x < li.size(); ++x)
              if (open && obs[x]->sentinel[c] != tsent.back())
                throw ExtrapError(where + ", node " + std::to_string(order[0][i]) + " (" +
                                  describe_node(in[0].trace, in[0].trace.nodes[order[0][i]]) +
                                  "), call " + std::to_string(c + 1) + ": a partner in " +
                                  (tsent.back() != 0 ? li[x].in->name : in[largest].name) +
                                  ", MPI_PROC_NULL on every rank of the class in " +
                                  (tsent.back() != 0 ? in[largest].name : li[x].in->name));
            std::vector<int64_t> off;
            for (int d = 0; d < dims; ++d) {
              std::vector<int64_t> v, side;
              for (std::size_t x = 0; x < li.size(); ++x) {
                v.push_back(obs[x]->offsets[c][static_cast<std::size_t>(d)]);
                side.push_back(li[x].topo.sizes[static_cast<std::size_t>(d)]);
              }
              const auto o =
                  fit_offset(v, side, largest, target.sizes[static_cast<std::size_t>(d)], !open);
              if (!o)
                throw ExtrapError(where + ", node " + std::to_string(order[0][i]) + " (" +
                                  describe_node(in[0].trace, in[0].trace.nodes[order[0][i]]) +
                                  "), field " + FieldTable::name(field) + ", call " +
                                  std::to_string(c + 1) + ": partner offsets along " +
                                  std::string(1, "xyz"[d]) +
                                  " neither fixed nor a fixed share of the side");
              off.push_back(*o);
            }
            toff.push_back(std::move(off));
          }
          // Each target rank's relative partners; ranks with equal ones share an entry.
          std::map<std::vector<int64_t>, std::vector<int32_t>> groups;
          for (int32_t r : members[k]) {
            const auto c = target.coords(r);
            std::vector<int64_t> rel;
            for (std::size_t call = 0; call < toff.size(); ++call) {
              if (tsent[call] != 0) {
                rel.push_back(tsent[call]);
                continue;
              }
              int64_t to = 0;
              if (open) {
                const auto q = open_partner(target, c, toff[call]);
                if (!q) {
                  rel.push_back(kNull);
                  continue;
                }
                to = *q;
              } else {
                auto q = c;
                for (std::size_t d = 0; d < q.size(); ++d) q[d] += toff[call][d];
                to = rank_at(target, q);
              }
              rel.push_back(((to - r) % opts.ranks + opts.ranks) % opts.ranks);
            }
            groups[rel].push_back(r);
          }
          Elastic e;
          for (auto& [rel, rs] : groups) {
            ValueSeq seq;
            for (int64_t v : rel) seq.push_back(v);
            e.entries().push_back({std::move(seq), Ranklist::from_ranks(rs)});
          }
          e.sort_entries();
          n.fields.emplace_back(field, std::move(e));
        }
        std::sort(n.fields.begin(), n.fields.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      canonicalize_sites(part);
      if (first) {
        acc = std::move(part);
        first = false;
      } else {
        acc = merge_traces(std::move(acc), std::move(part));
      }
    }
    res.trace = std::move(acc);
    res.trace.world_size = static_cast<int32_t>(opts.ranks);
    res.explanation.insert(res.explanation.begin(),
                           "coarse levels leave ranks idle: extrapolated by the per-level "
                           "rank-predicate model, one class of ranks per number of busy levels" +
                               std::string(open ? " (a grid with edges: MPI_PROC_NULL beyond "
                                                  "them, each class's partners at fixed offsets)"
                                                : ""));
    canonicalize_sites(res.trace);
    return res;
  } catch (const ExtrapError& e) {
    why = "; the per-level model does not explain it either: " + std::string(e.what());
    return std::nullopt;
  }
}

}  // namespace tracefold::extrap::detail
