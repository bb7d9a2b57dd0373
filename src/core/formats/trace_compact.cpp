// The compact form of a trace, format version 6 (docs/format.md, "Compact
// form"). The text form (version 2) stays the reference for meaning; this
// one stores the same content as varints with every name, frame and
// module written once, histograms in columns after the nodes, and zstd on
// top.
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "trace_compact_codec.hpp"
#include "trace_links.hpp"
#include "tracefold/limits.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/trace_level.hpp"

namespace tracefold {

namespace {

using compact::HistogramColumnsWriter;
using compact::HistogramKind;
using compact::kMagic;
using compact::Out;

// zstd's level by the size of the body. Level 19 makes the smallest files
// but compresses at a few MB/s, and rank 0 does it inside MPI_Finalize
// while the other ranks wait: 35 ms for the 174 KiB body of a polling code
// at 1,000 cycles. Above 64 KiB the level drops to 9 (3.5 ms, a file 11 %
// larger there) and above 4 MiB to 3, so the cost stays a few ms per MiB.
// The level depends on the body alone: equal traces still give equal bytes.
int compression_level(std::size_t body_bytes) {
  if (body_bytes <= (std::size_t{64} << 10)) return 19;
  if (body_bytes <= (std::size_t{4} << 20)) return 9;
  return 3;
}

// Interns names in order of first use, so the tables come out the same for
// equal traces.
class NameTable {
 public:
  std::size_t id(const std::string& name) {
    auto [it, fresh] = index_.try_emplace(name, names_.size());
    if (fresh) names_.push_back(name);
    return it->second;
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::map<std::string, std::size_t> index_;
  std::vector<std::string> names_;
};

// Writes ranklists and value sequences; `*` (the whole set) is code 0.
void put_ranklist(Out& o, const Ranklist& r, const Ranklist* whole) {
  if (whole && !whole->empty() && r == *whole) {
    o.uv(0);
    return;
  }
  const auto sections = r.sections();
  o.uv(sections.size() + 1);
  for (const auto& s : sections) {
    o.uv(static_cast<uint64_t>(s.start));
    o.uv(s.dims.size());
    for (const auto& [count, stride] : s.dims) {
      o.uv(static_cast<uint64_t>(count));
      o.sv(stride);
    }
  }
}

void put_seq(Out& o, const ValueSeq& seq) {
  // Literal runs side by side are one stretch in the text form, and one here.
  // A histogram's runs are value:count pairs, one value each (two values
  // seen once each are two runs, not a stretch). Two passes over the runs
  // in place: the count of stretches comes first in the format, and copying
  // each run out (runs()) was a fifth of the encoder's work.
  const bool hist = seq.is_histogram();
  uint64_t stretches = 0;
  bool in_literal = false;
  seq.for_each_run([&](const int64_t*, std::size_t, uint64_t reps) {
    const bool literal = !hist && reps == 1;
    if (!(literal && in_literal)) ++stretches;
    in_literal = literal;
  });
  o.uv(stretches * 2 + (hist ? 1 : 0));
  thread_local std::vector<int64_t> literal;
  literal.clear();
  const auto flush = [&] {
    if (literal.empty()) return;
    o.uv(literal.size());
    o.values(literal.data(), literal.size());
    o.uv(1);
    literal.clear();
  };
  seq.for_each_run([&](const int64_t* pattern, std::size_t len, uint64_t reps) {
    if (!hist && reps == 1) {
      literal.insert(literal.end(), pattern, pattern + len);
      return;
    }
    flush();
    if (!hist) o.uv(len);
    o.values(pattern, len);
    o.uv(reps);
  });
  flush();
}

// The fewest bytes put_seq can write for `seq`: its count of stretches,
// a byte per value of its runs' patterns, and one stretch's length and
// count (a histogram's runs have no length).
std::size_t put_seq_floor(const ValueSeq& seq) {
  std::size_t bytes = 1;
  bool any = false;
  seq.for_each_run([&](const int64_t*, std::size_t len, uint64_t) {
    bytes += len;
    any = true;
  });
  return any ? bytes + (seq.is_histogram() ? 1 : 2) : bytes;
}

void put_elastic(Out& o, const Elastic& e, const Ranklist& node_ranks) {
  o.uv(e.entries().size());
  for (const auto& en : e.entries()) {
    put_seq(o, en.values);
    put_ranklist(o, en.ranks, &node_ranks);
  }
}

// Version 7, a node whose fields derive from its loop: the field's index
// times 2, plus 1 when its entries start with their DerivedForm (else they
// are as in put_elastic); each entry in its shortest form (whose values
// expand to the same runs, with DerivedFields::kSameRuns).
void put_derivable_field(Out& o, uint64_t index, const Elastic& e, const Ranklist& node_ranks,
                         const compact::LoopTrips& trips, uint64_t& derived_left,
                         DerivedFields check) {
  std::vector<std::pair<compact::DerivedForm, Out>> entries;
  bool any = false;
  for (const auto& en : e.entries()) {
    // The plain form is written only when a derived one could lose to it:
    // where one wins, the plain values were most of the writer's work.
    Out best;
    bool plain_written = false;
    const auto write_plain = [&] {
      if (!plain_written) put_seq(best, en.values);
      plain_written = true;
    };
    compact::DerivedForm form = compact::DerivedForm::kPlain;
    // A few runs are cheaper written out than a pass over every value.
    const ValueSeq* t = en.values.run_count() > 2 && en.values.size() <= derived_left
                            ? trips.of(en.ranks)
                            : nullptr;
    // Whether the read-back folds as the values were (`print` of a trace
    // and of its compact form agree). Asked once per entry: derive matches
    // every value, and expand_derived pushes them one by one (push_back_n
    // is n push_back calls, representation included) whatever the form,
    // so both forms read back to the same sequence.
    std::optional<bool> reads_back;
    const std::size_t plain_floor = t ? put_seq_floor(en.values) : 0;
    for (compact::DerivedValues& d :
         t ? compact::derive_all(en.values, *t) : std::vector<compact::DerivedValues>{}) {
      Out mine;
      if (d.form == compact::DerivedForm::kLastDiffers) mine.value(d.other);
      put_seq(mine, d.seq);
      if (form != compact::DerivedForm::kPlain || mine.bytes().size() + 1 >= plain_floor) {
        if (form == compact::DerivedForm::kPlain) write_plain();
        if (mine.bytes().size() + 1 >= best.bytes().size()) continue;
      }
      if (check == DerivedFields::kSameRuns) {
        if (!reads_back) {
          const auto back = compact::expand_derived(d, *t);
          reads_back = back && back->same_representation(en.values);
        }
        if (!*reads_back) break;
      }
      best = std::move(mine);
      form = d.form;
    }
    if (form == compact::DerivedForm::kPlain) write_plain();
    if (form != compact::DerivedForm::kPlain) derived_left -= en.values.size();
    any = any || form != compact::DerivedForm::kPlain;
    entries.emplace_back(form, std::move(best));
  }
  o.uv(index * 2 + (any ? 1 : 0));
  o.uv(e.entries().size());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    if (any) o.uv(static_cast<uint64_t>(entries[k].first));
    o.bytes() += entries[k].second.bytes();
    put_ranklist(o, e.entries()[k].ranks, &node_ranks);
  }
}

// start 0, other 1, OP/SITE 2+op then the site (version 5).
void put_pred(Out& o, EventKey pred, NameTable& ops) {
  if (pred == kStartKey) {
    o.uv(0);
  } else if (pred == kOtherKey) {
    o.uv(1);
  } else {
    o.uv(ops.id(OpTable::name(pred.op)) + 2);
    o.uv(pred.site);
  }
}

bool timing_written(const Timing& tm) {
  return !(tm.compute.empty() && tm.comm.empty() && tm.stats.empty());
}

using StoredLinks = std::vector<std::optional<std::pair<FieldId, Elastic>>>;

// `rule`: the rule for fields derived from their loop; nullopt writes
// every field in its plain form (`links` then holds no stored form
// either), as a transfer between processes wants it.
std::string encode_body(const Trace& t, const StoredLinks& links,
                        std::optional<DerivedFields> rule = DerivedFields::kSameRuns);

}  // namespace

std::string encode_compact_body(const Trace& t) {
  return encode_body(t, links_form::stored(t));
}

namespace {

// `links`: links_form::stored(t), which encode_compact needs too (it costs a
// pass over every `links` value of the trace).
std::string encode_body(const Trace& t, const StoredLinks& links,
                        std::optional<DerivedFields> rule) {
  // Name tables first: operations, fields (with their kind) and statistics
  // in order of first use by the nodes.
  NameTable ops, fields, stats;
  std::vector<FieldKind> field_kinds;
  std::vector<std::vector<const std::pair<FieldId, Elastic>*>> node_fields(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    ops.id(OpTable::name(n.key.op));
    for (const auto& f : n.fields)
      node_fields[i].push_back(links[i] && f.first == links[i]->first ? &*links[i] : &f);
    // The text writer's order, so that FieldId (process-local) cannot leak
    // into the bytes.
    std::sort(node_fields[i].begin(), node_fields[i].end(), [](const auto* a, const auto* b) {
      return FieldTable::print_before(a->first, b->first);
    });
    for (const auto* f : node_fields[i])
      if (fields.id(FieldTable::name(f->first)) == field_kinds.size())
        field_kinds.push_back(FieldTable::kind(f->first));
    for (const Timing& tm : n.timings) {
      if (!timing_written(tm)) continue;
      if (!is_pred_marker(tm.pred)) ops.id(OpTable::name(tm.pred.op));
      for (const auto& [name, h] : tm.stats) stats.id(name);
    }
  }
  // Frames: each distinct module+offset once, sorted, so offsets within a
  // module are stored as gaps.
  std::map<std::string, std::map<uint64_t, std::size_t>> modules;
  for (const CallSite& cs : t.sites.all())
    for (const Frame& f : cs.frames) modules[f.module][f.offset] = 0;
  std::size_t next_frame = 0;
  for (auto& [name, offsets] : modules)
    for (auto& [off, id] : offsets) id = next_frame++;

  Out o;
  o.uv(static_cast<uint64_t>(t.world_size));
  o.str(t.lossy);
  // Version 9 keeps version 8's thread line, for one thread too.
  const bool derived = std::any_of(links.begin(), links.end(), [](const auto& l) { return l; });
  if (t.has_thread_dimension() || derived) {
    o.uv(static_cast<uint64_t>(t.threads));
    o.uv(t.omp.empty() ? 0 : 1);
    if (!t.omp.empty()) put_elastic(o, t.omp, Ranklist::range(0, t.locations()));
  }
  o.uv(ops.names().size());
  for (const auto& name : ops.names()) o.str(name);
  o.uv(fields.names().size());
  for (std::size_t i = 0; i < fields.names().size(); ++i) {
    o.str(fields.names()[i]);
    o.uv(field_kinds[i] == FieldKind::kList ? 1 : 0);
  }
  o.uv(stats.names().size());
  for (const auto& name : stats.names()) o.str(name);
  o.uv(modules.size());
  for (const auto& [name, offsets] : modules) {
    o.str(name);
    o.uv(offsets.size());
    uint64_t prev = 0;
    for (const auto& [off, id] : offsets) {
      o.uv(off - prev);
      prev = off;
    }
  }
  o.uv(t.sites.size());
  for (const CallSite& cs : t.sites.all()) {
    o.uv(cs.frames.size());
    for (const Frame& f : cs.frames) o.uv(modules.at(f.module).at(f.offset));
  }
  const Ranklist world = Ranklist::range(0, std::max<int32_t>(t.world_size, 0));
  std::size_t groups = 0;
  for (const auto& [id, gs] : t.comms.all()) groups += gs.size();
  o.uv(groups);
  for (const auto& [id, gs] : t.comms.all()) {
    for (const CommGroup& g : gs) {
      o.sv(id);
      if (g.members.ascending()) {
        o.uv(0);
        put_ranklist(o, g.members.to_ranklist(), &world);
      } else {
        o.uv(1);
        o.uv(g.members.size());
        for (int32_t m : g.members) o.uv(static_cast<uint64_t>(m));
      }
    }
  }
  // Histograms go to their columns, written after the nodes.
  HistogramColumnsWriter histograms;
  uint64_t derived_left = rule ? kMaxDerivedValues : 0;
  o.uv(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    o.uv(ops.id(OpTable::name(n.key.op)));
    o.uv(n.key.site);
    put_ranklist(o, n.ranks, &world);
    o.uv(n.loops.size());
    for (const LoopLevel& l : n.loops) {
      put_elastic(o, l.members, n.ranks);
      put_elastic(o, l.iters, n.ranks);
    }
    put_elastic(o, n.count, n.ranks);
    o.uv(node_fields[i].size());
    const bool derived = compact::derives_fields(n);
    std::optional<compact::LoopTrips> trips;
    if (derived) trips.emplace(n.loops.back().iters);
    for (const auto* f : node_fields[i]) {
      const std::size_t index = fields.id(FieldTable::name(f->first));
      if (derived) {
        put_derivable_field(o, index, f->second, n.ranks, *trips, derived_left,
                            rule.value_or(DerivedFields::kSameRuns));
      } else {
        o.uv(index);
        put_elastic(o, f->second, n.ranks);
      }
    }
    std::size_t timings = 0;
    for (const Timing& tm : n.timings) timings += timing_written(tm) ? 1 : 0;
    o.uv(timings);
    for (const Timing& tm : n.timings) {
      if (!timing_written(tm)) continue;
      put_pred(o, tm.pred, ops);
      histograms.add(tm.compute, HistogramKind::kCompute);
      histograms.add(tm.comm, HistogramKind::kComm);
      o.uv(tm.stats.size());
      for (const auto& [name, h] : tm.stats) {
        o.uv(stats.id(name));
        histograms.add(h, HistogramKind::kStat);
      }
    }
  }
  histograms.write(o);
  std::vector<std::string> module_names;
  for (const auto& [name, offsets] : modules) module_names.push_back(name);
  compact::put_symbol_tables(o, t.symtab, module_names);
  return std::move(o.bytes());
}

}  // namespace

namespace {

std::string encode_compact(const Trace& t, int level, std::optional<DerivedFields> rule) {
  std::string out(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  // The transfer form keeps completion links as they are: the rounds then
  // neither shorten nor re-expand them (a seventh of a round's work on a
  // polling code's trace), for a few more bytes.
  bool sweeps = false;
  const StoredLinks links = rule ? links_form::stored(t, &sweeps) : StoredLinks(t.nodes.size());
  // Version 8 only where the thread dimension needs it: one thread per
  // rank stays the version 7 trace it always was.
  const bool derived = std::any_of(links.begin(), links.end(), [](const auto& l) { return l; });
  out += static_cast<char>(sweeps                     ? links_form::kSweepCompactVersion
                           : derived                  ? links_form::kCompactVersion
                           : t.has_thread_dimension() ? Trace::kCompactVersion
                                                      : Trace::kCompactVersionSingleThread);
  const std::string body = encode_body(t, links, rule);
  out += compact::compress_body(
      body, level == kCompactLevelBySize ? compression_level(body.size()) : level);
  return out;
}

}  // namespace

std::string encode_compact(const Trace& t, int level) {
  return encode_compact(t, level, DerivedFields::kSameRuns);
}

std::string encode_compact(const Trace& t, int level, DerivedFields derived) {
  return encode_compact(t, level, std::optional<DerivedFields>(derived));
}

std::string encode_compact_transfer(const Trace& t) {
  return encode_compact(t, 1, std::nullopt);
}

std::string encode_compact(const Trace& t) {
  return encode_compact(t, kCompactLevelBySize);
}

bool is_compact(std::string_view bytes) {
  return bytes.size() >= sizeof kMagic &&
         std::equal(kMagic, kMagic + sizeof kMagic,
                    reinterpret_cast<const unsigned char*>(bytes.data()));
}

}  // namespace tracefold
