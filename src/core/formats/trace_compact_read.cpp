// Reader of the compact form (format versions 3 to 7, docs/format.md). Every count
// is checked against the bytes left before anything is allocated for it: an
// item takes at least one byte, so a count above the bytes left is corrupt.
#include <zstd.h>

#include <algorithm>
#include <limits>

#include "trace_compact_codec.hpp"
#include "trace_links.hpp"
#include "tracefold/limits.hpp"
#include "tracefold/ranklist_sweep.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

namespace {

using compact::HistogramColumnsReader;
using compact::HistogramKind;
using compact::In;
using compact::kHeaderBytes;

constexpr uint64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

bool is_name(std::string_view s) {
  return !s.empty() && s.find_first_of(" \n") == std::string_view::npos;
}

Ranklist get_ranklist(In& in, const Ranklist& whole, int32_t world, const compact::What& what) {
  const std::size_t code = in.count(compact::What("sections of the ", what));
  if (code == 0) return whole;
  const std::size_t at = in.start();
  std::vector<Ranklist::Section> sections(code - 1);
  for (auto& s : sections) {
    s.start = static_cast<int32_t>(in.uv("a section start", kMaxInt32));
    s.dims.resize(in.count("dimensions of a section"));
    uint64_t ranks = 1;
    for (auto& [count, stride] : s.dims) {
      count = static_cast<int32_t>(in.uv("a section count", kMaxInt32));
      stride = in.sv32("a section stride");
      ranks *= static_cast<uint64_t>(count);
      // Sections are disjoint parts of a set within the world: a bigger
      // one is corrupt, and would take long to expand.
      if (ranks > static_cast<uint64_t>(world))
        in.fail("a section of the " + what.str() + " holds more ranks than the world");
    }
  }
  try {
    return Ranklist::from_sections(sections);
  } catch (const std::exception& ex) {
    in.fail_at(at, "bad " + what.str() + ": " + ex.what());
  }
}

// pred: version 5 codes start 0, other 1 and OP/SITE 2+op, then the site;
// versions 3 and 4 start 0 and OP/SITE 1+op.
EventKey get_pred(In& in, int version, const std::vector<OpId>& ops, std::size_t sites) {
  const uint64_t code = in.uv("a predecessor");
  const uint64_t first_op = version >= 5 ? 2 : 1;
  if (code == 0) return kStartKey;
  if (code == 1 && version >= 5) return kOtherKey;
  const uint64_t op = code - first_op;
  if (op >= ops.size())
    in.fail("predecessor operation " + std::to_string(code) + " is not in the table");
  const uint64_t site = in.uv("a predecessor's site", std::numeric_limits<SiteId>::max());
  if (site >= sites) in.fail("site " + std::to_string(site) + " is not in the site table");
  return EventKey{ops[op], static_cast<SiteId>(site)};
}

ValueSeq get_seq(In& in) {
  const uint64_t header = in.uv("a value sequence");
  const std::size_t at = in.start();
  const bool histogram = header & 1;
  if (header / 2 > in.left())
    in.fail("a value sequence of " + std::to_string(header / 2) + " runs but only " +
            std::to_string(in.left()) + " bytes follow");
  // Each run's values are read into one buffer and handed on: no vector
  // per run (allocations were a third of a decode).
  thread_local std::vector<int64_t> pattern;
  ValueSeq::RunBuilder seq(histogram, static_cast<std::size_t>(header / 2));
  try {
    for (uint64_t k = header / 2; k > 0; --k) {
      pattern.resize(histogram ? 1 : in.count("values of a run"));
      for (auto& v : pattern) v = in.value("a value");
      seq.add(pattern.data(), pattern.size(), in.uv("a repeat count"));
    }
    return std::move(seq).finish();
  } catch (const ValueSeqParseError& ex) {
    in.fail_at(at, ex.what());
  }
}

// `trips` (version 7, a node whose fields derive from its loop): each
// entry's DerivedForm comes first, and its values are expanded by the trip
// counts of the entry's ranks once its ranklist is read.
Elastic get_elastic(In& in, const Ranklist& node_ranks, int32_t world, const char* what,
                    const compact::LoopTrips* trips = nullptr, uint64_t* derived_left = nullptr) {
  Elastic e;
  const std::size_t n = in.count(compact::What("entries of ", what));
  if (n == 0) in.fail(std::string(what) + " has no entries");
  // Where each entry's ranklist was read, to name the first one that
  // overlaps an earlier one once all are in (one sweep: a million-rank
  // trace has thousands of entries).
  std::vector<std::size_t> read_at(n);
  for (std::size_t i = 0; i < n; ++i) {
    ElasticEntry en;
    compact::DerivedValues d;
    if (trips) {
      d.form = static_cast<compact::DerivedForm>(in.uv("a field entry's form", 2));
      if (d.form == compact::DerivedForm::kLastDiffers) d.other = in.value("a value");
    }
    const std::size_t values_at = in.start();
    en.values = get_seq(in);
    en.ranks = get_ranklist(in, node_ranks, world, compact::What("ranklist of ", what));
    if (en.ranks.empty()) in.fail(std::string("empty ranklist in ") + what);
    if (d.form != compact::DerivedForm::kPlain) {
      const ValueSeq* t = trips->of(en.ranks);
      if (!t)
        in.fail_at(values_at, std::string(what) + " of ranks " + en.ranks.to_string() +
                                  " derive from their loop's trip counts, but those ranks do "
                                  "not share one sequence of them");
      d.seq = std::move(en.values);
      auto values = compact::expand_derived(d, *t, *derived_left);
      if (!values)
        in.fail_at(values_at, std::string(what) + " of ranks " + en.ranks.to_string() + ": " +
                                  std::to_string(d.seq.size()) +
                                  " values, one per loop execution, but the loop has a "
                                  "different number of executions, or the file's derived "
                                  "values would be more than " +
                                  std::to_string(kMaxDerivedValues));
      *derived_left -= values->size();
      en.values = std::move(*values);
    }
    read_at[i] = in.start();
    e.entries().push_back(std::move(en));
  }
  std::vector<const Ranklist*> lists;
  for (const ElasticEntry& en : e.entries()) lists.push_back(&en.ranks);
  if (const std::size_t i = first_overlapping(lists); i < n)
    in.fail_at(read_at[i], std::string("ranklists of ") + what +
                               " overlap: " + e.entries()[i].ranks.to_string());
  return e;
}

// Version 3: a histogram in place, every number written out.
Histogram get_inline_histogram(In& in, const char* what) {
  const uint64_t count =
      in.uv(compact::What("the count of a ", compact::What(what, compact::What(" histogram"))));
  const std::size_t at = in.start();
  try {
    return Histogram::from_parts(count == 0 ? Histogram::Parts{}
                                            : compact::get_plain_histogram(in, count));
  } catch (const std::exception& ex) {
    in.fail_at(at, std::string("bad ") + what + " histogram: " + ex.what());
  }
}

// One zstd frame from byte kHeaderBytes to the end of the file; errors say
// where in the file the compressed data went wrong.
std::string decompress_body(std::string_view file, const std::string& source) {
  struct Stream {
    ZSTD_DStream* ds = ZSTD_createDStream();
    ~Stream() { ZSTD_freeDStream(ds); }
  } stream;
  ZSTD_initDStream(stream.ds);
  // Version 6 bodies are compressed against a fixed dictionary.
  if (static_cast<unsigned char>(file[4]) >= 6) {
    const std::string_view dict = compact::dictionary();
    ZSTD_DCtx_refPrefix(stream.ds, dict.data(), dict.size());
  }
  std::string out;
  std::string buf(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{file.data(), file.size(), kHeaderBytes};
  while (true) {
    ZSTD_outBuffer ob{buf.data(), buf.size(), 0};
    const std::size_t ret = ZSTD_decompressStream(stream.ds, &ob, &in);
    if (ZSTD_isError(ret))
      throw TraceFormatError(source, TraceFormatError::AtByte{in.pos},
                             std::string("corrupt compressed body: ") + ZSTD_getErrorName(ret));
    out.append(buf.data(), ob.pos);
    if (out.size() > max_decompressed(file.size()))
      throw TraceFormatError(source, TraceFormatError::AtByte{in.pos},
                             "the compressed body expands to more than " +
                                 std::to_string(max_decompressed(file.size())) +
                                 " bytes (1 MiB + 1024 times the file; corrupt, or a "
                                 "decompression bomb)");
    if (ret == 0) break;
    if (in.pos == in.size && ob.pos < ob.size)
      throw TraceFormatError(source, TraceFormatError::AtByte{in.pos},
                             "the file ends inside the compressed body (truncated)");
  }
  if (in.pos != in.size)
    throw TraceFormatError(source, TraceFormatError::AtByte{in.pos},
                           "unexpected bytes after the compressed body");
  return out;
}

Trace decode_body(In& in, int version) {
  Trace t;
  t.world_size = static_cast<int32_t>(in.uv("the world size", kMaxWorldSize));
  if (t.world_size <= 0) in.fail("world size must be positive");
  const int32_t world_size = t.world_size;
  const Ranklist world = Ranklist::range(0, world_size);
  t.lossy = in.str("the lossy note");
  if (t.lossy.find('\n') != std::string::npos) in.fail("the lossy note holds a newline");
  if (version >= 8) {
    // The thread dimension: node ranklists count locations (trace.hpp).
    t.threads = static_cast<int32_t>(in.uv("the threads per rank", kMaxWorldSize / world_size));
    if (t.threads <= 0) in.fail("threads per rank must be positive");
    if (in.uv("an OpenMP table marker", 1) == 1) {
      const Ranklist all = Ranklist::range(0, t.locations());
      t.omp = get_elastic(in, all, t.locations(), "OpenMP thread numbers");
    }
  }
  const int32_t locations = t.locations();

  std::vector<OpId> ops(in.count("operations"));
  for (auto& op : ops) {
    const std::string name = in.str("an operation name");
    const auto id = OpTable::find(name);
    if (!id) in.fail("unknown operation '" + name + "'");
    op = *id;
  }
  std::vector<FieldId> fields(in.count("fields"));
  for (auto& f : fields) {
    const std::string name = in.str("a field name");
    const auto kind = in.uv("a field kind", 1) ? FieldKind::kList : FieldKind::kScalar;
    try {
      f = FieldTable::intern(name, kind);
    } catch (const std::exception& ex) {
      in.fail(ex.what());
    }
  }
  std::vector<std::string> stats(in.count("statistics"));
  for (auto& s : stats) {
    s = in.str("a statistic name");
    if (!is_name(s)) in.fail("bad statistic name '" + s + "'");
  }

  std::vector<Frame> frames;
  std::vector<std::string> module_names;
  const std::size_t nmodules = in.count("modules");
  for (std::size_t m = 0; m < nmodules; ++m) {
    const std::string module = in.str("a module name");
    if (!is_name(module) || !valid_module_name(module)) in.fail("bad module name '" + module + "'");
    module_names.push_back(module);
    const std::size_t n = in.count("frames of module " + module);
    uint64_t offset = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const uint64_t gap = in.uv("a frame offset");
      if (i > 0 && gap == 0) in.fail("frame " + module + " offset repeats");
      if (gap > std::numeric_limits<uint64_t>::max() - offset) in.fail("frame offset overflows");
      offset += gap;
      frames.push_back(Frame{module, offset});
    }
  }
  const std::size_t nsites = in.count("call sites");
  for (std::size_t i = 0; i < nsites; ++i) {
    CallSite cs;
    cs.frames.resize(in.count("frames of site " + std::to_string(i)));
    for (auto& f : cs.frames) {
      const uint64_t id = in.uv("a frame id");
      if (id >= frames.size())
        in.fail("frame " + std::to_string(id) + " is not in the frame table (" +
                std::to_string(frames.size()) + " frames)");
      f = frames[id];
    }
    if (t.sites.intern(cs) != i) in.fail("site " + std::to_string(i) + " repeats an earlier site");
  }

  const std::size_t ngroups = in.count("communicator groups");
  for (std::size_t i = 0; i < ngroups; ++i) {
    const int64_t id = in.sv("a communicator id");
    const std::size_t at = in.start();
    CommGroup g;
    if (in.uv("a member form", 1) == 0) {
      const Ranklist members = get_ranklist(in, world, world_size, "member ranklist");
      if (!members.empty() && members.last() >= world_size)
        in.fail("communicator members " + members.to_string() + " are outside the world of " +
                std::to_string(world_size) + " ranks");
      g.members = MemberList::from_ranklist(members);
    } else {
      const std::size_t n = in.count("members");
      for (std::size_t k = 0; k < n; ++k) {
        const auto m = static_cast<int32_t>(in.uv("a rank", kMaxInt32));
        if (m >= world_size)
          in.fail("communicator member " + std::to_string(m) + " is outside the world");
        g.members.push_back(m);
      }
    }
    if (g.members.empty()) in.fail_at(at, "communicator " + std::to_string(id) + " has no members");
    try {
      t.comms.define(id, std::move(g));
    } catch (const std::exception& ex) {
      in.fail_at(at, ex.what());
    }
  }

  const std::size_t nnodes = in.count("nodes");
  t.nodes.reserve(nnodes);
  uint64_t derived_left = kMaxDerivedValues;
  for (std::size_t i = 0; i < nnodes; ++i) {
    Node n;
    const uint64_t op = in.uv("an operation");
    const std::size_t node_at = in.start();
    if (op >= ops.size())
      in.fail("operation " + std::to_string(op) + " is not in the operation table");
    n.key.op = ops[op];
    n.key.site = static_cast<SiteId>(in.uv("a call site", std::numeric_limits<SiteId>::max()));
    if (n.key.site >= t.sites.size())
      in.fail("site " + std::to_string(n.key.site) + " is not in the site table");
    n.ranks = get_ranklist(in, world, locations, "node's ranklist");
    if (n.ranks.empty() || n.ranks.last() >= locations)
      in.fail("node ranks must be non-empty and inside the world");
    n.loops.resize(in.count("loop levels"));
    for (auto& l : n.loops) {
      l.members = get_elastic(in, n.ranks, locations, "loop members");
      l.iters = get_elastic(in, n.ranks, locations, "loop iterations");
    }
    n.count = get_elastic(in, n.ranks, locations, "execution count");
    const std::size_t nfields = in.count("fields of a node");
    std::optional<compact::LoopTrips> trips;
    if (version >= 7 && compact::derives_fields(n)) trips.emplace(n.loops.back().iters);
    for (std::size_t k = 0; k < nfields; ++k) {
      uint64_t idx = in.uv("a field");
      // Version 7: index * 2, plus 1 when the entries carry their form.
      const bool forms = trips && (idx & 1);
      if (trips) idx /= 2;
      if (idx >= fields.size())
        in.fail("field " + std::to_string(idx) + " is not in the field table");
      const FieldId f = fields[idx];
      if (n.field(f)) in.fail("field " + FieldTable::name(f) + " appears twice");
      auto it = std::lower_bound(n.fields.begin(), n.fields.end(), f,
                                 [](const auto& p, FieldId id) { return p.first < id; });
      n.fields.insert(it, {f, get_elastic(in, n.ranks, locations, "field values",
                                          forms ? &*trips : nullptr, &derived_left)});
    }
    if (const std::string missing = missing_required_field(n); !missing.empty())
      in.fail_at(node_at, "node " + std::to_string(i) + ": " + missing);
    n.timings.resize(in.count("timings of a node"));
    for (std::size_t k = 0; k < n.timings.size(); ++k) {
      Timing& tm = n.timings[k];
      tm.pred = get_pred(in, version, ops, t.sites.size());
      if (k > 0 && !(n.timings[k - 1].pred < tm.pred))
        in.fail("timings must be sorted by predecessor");
      if (version == 3) {
        tm.compute = get_inline_histogram(in, "compute");
        tm.comm = get_inline_histogram(in, "communication");
      }
      tm.stats.resize(in.count("statistics of a timing"));
      for (auto& [name, h] : tm.stats) {
        const uint64_t idx = in.uv("a statistic");
        if (idx >= stats.size())
          in.fail("statistic " + std::to_string(idx) + " is not in the table");
        name = stats[idx];
        if (version == 3) h = get_inline_histogram(in, "statistic");
      }
    }
    if (version >= links_form::kCompactVersion) {
      try {
        links_form::derive(n, version >= links_form::kSweepCompactVersion);
      } catch (const std::invalid_argument& e) {
        in.fail("node " + std::to_string(i) + ": " + e.what());
      }
    }
    t.nodes.push_back(std::move(n));
  }
  if (version >= 4) {
    // The histograms, in the order of the timings above.
    HistogramColumnsReader columns(in, version);
    for (Node& n : t.nodes) {
      for (Timing& tm : n.timings) {
        tm.compute = columns.next(HistogramKind::kCompute, "compute");
        tm.comm = columns.next(HistogramKind::kComm, "communication");
        for (auto& [name, h] : tm.stats) h = columns.next(HistogramKind::kStat, "statistic");
      }
    }
    columns.finish();
    if (!in.at_end()) compact::get_symbol_tables(in, t.symtab, version, module_names);
  }
  if (!in.at_end()) {
    in.uv("nothing");
    in.fail("unexpected data after the last node");
  }
  return t;
}

}  // namespace

Trace decode_compact(std::string_view bytes, const std::string& source) {
  if (!is_compact(bytes))
    throw TraceFormatError(source, TraceFormatError::AtByte{0},
                           "not a compact trace (it does not start with 89 54 46 43)");
  if (bytes.size() < kHeaderBytes)
    throw TraceFormatError(source, TraceFormatError::AtByte{bytes.size()},
                           "the file ends inside the 5-byte header (truncated)");
  const int version = static_cast<unsigned char>(bytes[4]);
  if (version < compact::kOldestVersion || version > links_form::kSweepCompactVersion)
    throw TraceFormatError(source, TraceFormatError::AtByte{4},
                           "unsupported compact format version " + std::to_string(version) +
                               " (this tracefold reads compact versions " +
                               std::to_string(compact::kOldestVersion) + " to " +
                               std::to_string(links_form::kSweepCompactVersion) + ")");
  const std::string body = decompress_body(bytes, source);
  In in(body, source);
  try {
    return decode_body(in, version);
  } catch (const std::bad_alloc&) {
    in.fail("a count or size is too large to hold in memory");
  }
}

}  // namespace tracefold
