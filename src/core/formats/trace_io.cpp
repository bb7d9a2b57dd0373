#include "tracefold/trace_io.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <optional>
#include <sstream>

#include "trace_links.hpp"
#include "tracefold/limits.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

TraceFormatError::TraceFormatError(std::string source, std::size_t line, const std::string& message)
    : std::runtime_error(source + ":" + std::to_string(line) + ": " + message),
      source_(std::move(source)),
      line_(line) {}

TraceFormatError::TraceFormatError(std::string source, AtByte at, const std::string& message)
    : std::runtime_error(source + (at.in_body ? ": body byte " : ": byte ") +
                         std::to_string(at.offset) + ": " + message),
      source_(std::move(source)) {}

namespace {

std::string format_pred(EventKey k) {
  if (k == kStartKey) return "start";
  if (k == kOtherKey) return "other";
  return OpTable::name(k.op) + "/" + std::to_string(k.site);
}

void format_symbol_tables(const SymbolTables& tables, std::string& out);

}  // namespace

std::string format_trace(const Trace& t) {
  std::string out;
  out.reserve(4096);
  // A trace that version 2 can hold is written as version 2, so that older
  // readers still take it.
  bool other = false;
  for (const Node& n : t.nodes)
    for (const Timing& tm : n.timings) other = other || tm.pred == kOtherKey;
  bool sweeps = false;
  const auto links = links_form::stored(t, &sweeps);
  const bool derived = std::any_of(links.begin(), links.end(), [](const auto& l) { return l; });
  const int version = sweeps                     ? links_form::kSweepTextVersion
                      : derived                  ? links_form::kTextVersion
                      : t.has_thread_dimension() ? Trace::kFormatVersion
                      : other                    ? 5
                                                 : 2;
  out += "tracefold-trace " + std::to_string(version) + "\n";
  out += "world " + std::to_string(t.world_size) + "\n";
  if (version >= Trace::kFormatVersion) {
    out += "threads " + std::to_string(t.threads) + "\n";
    out += "omp " + (t.omp.empty() ? std::string("-") : t.omp.to_string()) + "\n";
  }
  // Ranks 0 .. world-1: a communicator or node of all of them is written "*".
  const Ranklist world = Ranklist::range(0, std::max<int32_t>(t.world_size, 0));
  out += "lossy " + (t.lossy.empty() ? std::string("-") : t.lossy) + "\n";
  out += "sites " + std::to_string(t.sites.size()) + "\n";
  for (SiteId i = 0; i < t.sites.size(); ++i)
    out += "site " + std::to_string(i) + " " + SiteTable::format(t.sites.at(i)) + "\n";
  format_symbol_tables(t.symtab, out);
  std::size_t groups = 0;
  for (const auto& [id, gs] : t.comms.all()) groups += gs.size();
  out += "comms " + std::to_string(groups) + "\n";
  for (const auto& [id, gs] : t.comms.all()) {
    for (const CommGroup& g : gs) {
      out += "comm " + std::to_string(id);
      if (g.members.ascending()) {
        out += " members " + format_ranklist_or_whole(g.members.to_ranklist(), &world);
      } else {
        out += " order";
        for (int32_t m : g.members) out += " " + std::to_string(m);
      }
      out += "\n";
    }
  }
  out += "nodes " + std::to_string(t.nodes.size()) + "\n";
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    out += "node " + std::to_string(i) + " " + OpTable::name(n.key.op) +
           " site=" + std::to_string(n.key.site) +
           " ranks=" + format_ranklist_or_whole(n.ranks, &world) + "\n";
    // In the node's elastic values, "@ *" stands for the node's own ranks.
    for (std::size_t l = 0; l < n.loops.size(); ++l) {
      out += "  loop " + std::to_string(l) + " members " + n.loops[l].members.to_string(&n.ranks) +
             "\n";
      out +=
          "  loop " + std::to_string(l) + " iters " + n.loops[l].iters.to_string(&n.ranks) + "\n";
    }
    out += "  count " + n.count.to_string(&n.ranks) + "\n";
    std::vector<const std::pair<FieldId, Elastic>*> fields;
    for (const auto& f : n.fields)
      fields.push_back(links[i] && f.first == links[i]->first ? &*links[i] : &f);
    std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) {
      return FieldTable::print_before(a->first, b->first);
    });
    for (const auto* f : fields) {
      const char* kind = FieldTable::kind(f->first) == FieldKind::kList ? "list " : "";
      out += "  field " + std::string(kind) + FieldTable::name(f->first) + " " +
             f->second.to_string(&n.ranks) + "\n";
    }
    for (const Timing& tm : n.timings) {
      if (tm.compute.empty() && tm.comm.empty() && tm.stats.empty()) continue;
      out += "  time pred=" + format_pred(tm.pred) + "\n";
      out += "    compute " + tm.compute.to_string() + "\n";
      out += "    comm " + tm.comm.to_string() + "\n";
      for (const auto& [name, h] : tm.stats) out += "    stat " + name + " " + h.to_string() + "\n";
    }
  }
  out += "end\n";
  return out;
}

namespace {

class LineReader {
 public:
  LineReader(std::string_view text, std::string source) : text_(text), source_(std::move(source)) {}

  // Next line without its newline; fails at end of input naming what was expected.
  std::string_view next(const std::string& expected) {
    if (pos_ >= text_.size()) fail("unexpected end of file, expected " + expected);
    std::size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) {
      // The writer always ends lines with '\n': a missing one means truncation.
      line_no_++;
      fail("file is truncated (last line has no newline), expected " + expected);
    }
    std::string_view line = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    ++line_no_;
    return line;
  }
  bool at_end() const { return pos_ >= text_.size(); }
  // The next line without taking it ("" at the end).
  std::string_view peek() const {
    if (pos_ >= text_.size()) return {};
    const std::size_t end = text_.find('\n', pos_);
    return text_.substr(pos_, end == std::string_view::npos ? end : end - pos_);
  }
  [[noreturn]] void fail(const std::string& msg) const {
    throw TraceFormatError(source_, line_no_, msg);
  }
  std::size_t line() const { return line_no_; }
  const std::string& source() const { return source_; }

 private:
  std::string_view text_;
  std::string source_;
  std::size_t pos_ = 0;
  std::size_t line_no_ = 0;
};

std::string show(std::string_view s) {
  std::string out(s.substr(0, 60));
  if (s.size() > 60) out += "...";
  return "'" + out + "'";
}

// Removes `prefix` from the front of `line` or fails.
void take(LineReader& r, std::string_view& line, std::string_view prefix, const std::string& what) {
  if (line.substr(0, prefix.size()) != prefix)
    r.fail("expected " + what + " ('" + std::string(prefix) + "'), found " + show(line));
  line.remove_prefix(prefix.size());
}

template <class T>
T take_number(LineReader& r, std::string_view& line, const std::string& what) {
  T v{};
  auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), v);
  if (ec != std::errc() || p == line.data()) r.fail("expected " + what + ", found " + show(line));
  line.remove_prefix(static_cast<std::size_t>(p - line.data()));
  return v;
}

void take_end(LineReader& r, std::string_view line, const std::string& what) {
  if (!line.empty()) r.fail("unexpected " + show(line) + " after " + what);
}

// The whole-set shorthand "*" (format version 2 on) stands for the world in
// `ranks=` and `members`, and for the node's ranks after "@" in the node's
// elastic values. The readers below take the set it stands for, or nullptr in
// a version-1 file, which has no shorthand.
const char* const kNoWholeSetInV1 =
    "'*' (the whole set) needs format version 2, this file is version 1";

// A ranklist, or "*" for `*whole`.
Ranklist take_ranklist(LineReader& r, std::string_view text, const Ranklist* whole,
                       const std::string& what) {
  if (text == "*" && !whole) r.fail("bad " + what + ": " + kNoWholeSetInV1);
  try {
    return parse_ranklist_or_whole(text, whole);
  } catch (const std::exception& ex) {
    r.fail("bad " + what + ": " + ex.what());
  }
}

// True if a ranklist of the elastic text is "*" (ranklists follow "@", and
// "@" appears nowhere else).
bool has_whole_set(std::string_view text) {
  for (auto at = text.find('@'); at != std::string_view::npos; at = text.find('@', at + 1)) {
    const auto p = text.find_first_not_of(' ', at + 1);
    if (p != std::string_view::npos && text[p] == '*') return true;
  }
  return false;
}

// An elastic value; "@ *" stands for `*whole` (the node's ranks).
Elastic take_elastic(LineReader& r, std::string_view text, const Ranklist* whole,
                     const std::string& what) {
  if (!whole && has_whole_set(text)) r.fail("bad " + what + ": " + kNoWholeSetInV1);
  try {
    return Elastic::parse(text, whole);
  } catch (const std::exception& ex) {
    r.fail("bad " + what + ": " + ex.what());
  }
}

EventKey take_pred(LineReader& r, std::string_view text, std::size_t site_count) {
  if (text == "start") return kStartKey;
  if (text == "other") return kOtherKey;
  auto slash = text.find('/');
  if (slash == std::string_view::npos)
    r.fail("expected pred=start, pred=other or pred=OP/SITE, found " + show(text));
  auto op = OpTable::find(text.substr(0, slash));
  if (!op) r.fail("unknown operation " + show(text.substr(0, slash)));
  std::string_view rest = text.substr(slash + 1);
  auto site = take_number<SiteId>(r, rest, "a site id");
  take_end(r, rest, "pred");
  if (site >= site_count) r.fail("site " + std::to_string(site) + " is not in the site table");
  return EventKey{*op, site};
}

Histogram take_histogram(LineReader& r, std::string_view text, const std::string& what) {
  try {
    return Histogram::parse(text);
  } catch (const std::exception& ex) {
    r.fail("bad " + what + " histogram: " + ex.what());
  }
}

// The optional module and symbol tables (docs/format.md, "Modules and
// symbols"); traces written before them go straight on to "comms".
std::size_t take_table_count(LineReader& r, std::string_view prefix, const char* what) {
  std::string_view line = r.next(std::string("'") + std::string(prefix) + "N'");
  line.remove_prefix(prefix.size());
  std::size_t n = 0;
  auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), n);
  if (ec != std::errc() || p != line.data() + line.size() || line.empty())
    r.fail(std::string("expected ") + what + " count, found " + show(line));
  return n;
}

void parse_symbol_tables(LineReader& r, SymbolTables& tables) {
  std::string error;
  if (r.peek().substr(0, 8) == "modules ") {
    const std::size_t n = take_table_count(r, "modules ", "a module");
    for (std::size_t i = 0; i < n; ++i) {
      std::string_view line = r.next("module " + std::to_string(i));
      if (line.substr(0, 7) != "module ") r.fail("expected a module line, found " + show(line));
      auto m = parse_module_line(line.substr(7), error);
      if (!m) r.fail(error);
      if (!tables.modules.emplace(m->name, *m).second)
        r.fail("module " + m->name + " appears twice");
    }
  }
  if (r.peek().substr(0, 8) == "symbols ") {
    const std::size_t n = take_table_count(r, "symbols ", "a symbol line");
    std::optional<Frame> last;
    for (std::size_t i = 0; i < n; ++i) {
      std::string_view line = r.next("symbol line " + std::to_string(i));
      if (line.substr(0, 7) != "symbol ") r.fail("expected a symbol line, found " + show(line));
      auto s = parse_symbol_line(line.substr(7), error);
      if (!s) r.fail(error);
      auto [it, fresh] = tables.symbols.try_emplace(s->first);
      if (!fresh && !(last && *last == s->first))
        r.fail("the symbol lines of " + std::string(line.substr(7, line.find(' ', 7) - 7)) +
               " are not adjacent");
      it->second.push_back(std::move(s->second));
      last = s->first;
    }
  }
}

void format_symbol_tables(const SymbolTables& tables, std::string& out) {
  if (!tables.modules.empty()) {
    out += "modules " + std::to_string(tables.modules.size()) + "\n";
    for (const auto& [name, m] : tables.modules) out += format_module_line(m) + "\n";
  }
  if (!tables.symbols.empty()) {
    std::size_t lines = 0;
    for (const auto& [f, s] : tables.symbols) lines += s.size();
    out += "symbols " + std::to_string(lines) + "\n";
    for (const auto& [f, s] : tables.symbols) out += format_symbol_lines(f, s);
  }
}

}  // namespace

namespace {
Trace parse_trace_lines(LineReader& r, std::string_view text);
}  // namespace

Trace parse_trace(std::string_view text, const std::string& source) {
  LineReader r(text, source);
  try {
    return parse_trace_lines(r, text);
  } catch (const std::bad_alloc&) {
    r.fail("a count or size in this line is too large to hold in memory");
  }
}

namespace {
Trace parse_trace_lines(LineReader& r, std::string_view text) {
  Trace t;
  std::string_view line =
      r.next("the header 'tracefold-trace " + std::to_string(Trace::kFormatVersion) + "'");
  take(r, line, "tracefold-trace ", "the header");
  const int version = take_number<int>(r, line, "a format version");
  // Version 1 is version 2 without the whole-set shorthand "*", version 5
  // version 2 with `pred=other`, version 6 version 5 with the thread
  // dimension; 3 and 4 were compact only.
  if (version < 1 || version > links_form::kSweepTextVersion || version == 3 || version == 4)
    r.fail("unsupported text format version " + std::to_string(version) +
           " (this tracefold reads text versions 1, 2, 5, 6, " +
           std::to_string(links_form::kTextVersion) + " and " +
           std::to_string(links_form::kSweepTextVersion) +
           "; versions 3 and 4 are the compact form only)");
  take_end(r, line, "the header");
  const bool whole_sets = version >= 2;

  line = r.next("'world N'");
  take(r, line, "world ", "the world size");
  t.world_size = take_number<int32_t>(r, line, "the number of ranks");
  if (t.world_size <= 0) r.fail("world size must be positive");
  if (t.world_size > kMaxWorldSize)
    r.fail("world size " + std::to_string(t.world_size) + " is above the limit of " +
           std::to_string(kMaxWorldSize) + " ranks");
  take_end(r, line, "the world size");
  const Ranklist world = Ranklist::range(0, t.world_size);
  const Ranklist* const star_world = whole_sets ? &world : nullptr;
  if (version >= 6) {
    line = r.next("'threads N'");
    take(r, line, "threads ", "the thread count");
    t.threads = take_number<int32_t>(r, line, "the number of threads per rank");
    if (t.threads <= 0 || int64_t{t.threads} * t.world_size > kMaxWorldSize)
      r.fail("threads per rank must be positive and threads times ranks at most " +
             std::to_string(kMaxWorldSize));
    take_end(r, line, "the thread count");
    line = r.next("'omp ...'");
    take(r, line, "omp ", "the OpenMP thread numbers");
    if (line != "-") {
      try {
        t.omp = Elastic::parse(line);
      } catch (const std::exception& ex) {
        r.fail(std::string("OpenMP thread numbers: ") + ex.what());
      }
      if (!t.omp.ranks().empty() && t.omp.ranks().last() >= t.locations())
        r.fail("OpenMP thread numbers name a location outside the trace");
    }
  }

  line = r.next("'lossy ...'");
  take(r, line, "lossy ", "the lossy marker");
  if (line != "-") t.lossy = std::string(line);

  line = r.next("'sites N'");
  take(r, line, "sites ", "the site count");
  auto nsites = take_number<std::size_t>(r, line, "a site count");
  take_end(r, line, "the site count");
  for (std::size_t i = 0; i < nsites; ++i) {
    line = r.next("site " + std::to_string(i));
    take(r, line, "site ", "a site line");
    auto id = take_number<std::size_t>(r, line, "a site id");
    if (id != i)
      r.fail("expected site " + std::to_string(i) + ", found site " + std::to_string(id));
    take(r, line, " ", "frames");
    CallSite cs;
    if (!SiteTable::parse(line, cs))
      r.fail("expected frames 'module+0xOFFSET ...', found " + show(line));
    if (const std::string bad = invalid_site(cs); !bad.empty())
      r.fail("site " + std::to_string(i) + ": " + bad);
    if (t.sites.intern(cs) != i) r.fail("site " + std::to_string(i) + " repeats an earlier site");
  }
  parse_symbol_tables(r, t.symtab);

  line = r.next("'comms N'");
  take(r, line, "comms ", "the communicator count");
  auto ncomms = take_number<std::size_t>(r, line, "a communicator count");
  take_end(r, line, "the communicator count");
  for (std::size_t i = 0; i < ncomms; ++i) {
    line = r.next("a communicator line");
    take(r, line, "comm ", "a communicator line");
    auto id = take_number<int64_t>(r, line, "a communicator id");
    CommGroup g;
    if (line.substr(0, 9) == " members ") {
      line.remove_prefix(9);
      const Ranklist members = take_ranklist(r, line, star_world, "member ranklist");
      if (!members.empty() && (members.first() < 0 || members.last() >= t.world_size))
        r.fail("communicator members " + members.to_string() + " are outside the world of " +
               std::to_string(t.world_size) + " ranks");
      g.members = MemberList::from_ranklist(members);
    } else {
      take(r, line, " order", "'members RANKLIST' or 'order R R ...'");
      while (!line.empty()) {
        take(r, line, " ", "a rank");
        const auto m = take_number<int32_t>(r, line, "a rank");
        if (m < 0 || m >= t.world_size)
          r.fail("communicator member " + std::to_string(m) + " is outside the world");
        g.members.push_back(m);
      }
    }
    if (g.members.empty()) r.fail("communicator " + std::to_string(id) + " has no members");
    try {
      t.comms.define(id, std::move(g));
    } catch (const std::exception& ex) {
      r.fail(ex.what());
    }
  }

  line = r.next("'nodes N'");
  take(r, line, "nodes ", "the node count");
  auto nnodes = take_number<std::size_t>(r, line, "a node count");
  take_end(r, line, "the node count");
  // A corrupt count must not turn into a huge allocation: every node takes at
  // least two lines of text.
  t.nodes.reserve(std::min<std::size_t>(nnodes, text.size() / 16 + 1));
  line = r.next(nnodes ? "node 0" : "'end'");
  for (std::size_t i = 0; i < nnodes; ++i) {
    Node n;
    const std::size_t node_line = r.line();
    take(r, line, "node ", "node " + std::to_string(i));
    auto idx = take_number<std::size_t>(r, line, "a node index");
    if (idx != i)
      r.fail("expected node " + std::to_string(i) + ", found node " + std::to_string(idx));
    take(r, line, " ", "an operation name");
    auto sp = line.find(' ');
    auto op = OpTable::find(line.substr(0, sp));
    if (!op) r.fail("unknown operation " + show(line.substr(0, sp)));
    line.remove_prefix(sp == std::string_view::npos ? line.size() : sp);
    take(r, line, " site=", "the call site");
    auto site = take_number<SiteId>(r, line, "a site id");
    if (site >= t.sites.size())
      r.fail("site " + std::to_string(site) + " is not in the site table");
    n.key = EventKey{*op, site};
    take(r, line, " ranks=", "the node's ranklist");
    n.ranks = take_ranklist(r, line, star_world, "ranklist");
    if (n.ranks.empty() || n.ranks.last() >= t.locations())
      r.fail("node ranks must be non-empty and inside the world");
    const Ranklist* const star_node = whole_sets ? &n.ranks : nullptr;

    bool have_count = false;
    // Which of `members` and `iters` each loop level has had: a second line
    // of either (or of `count`) is corrupt, not an update.
    std::vector<std::pair<bool, bool>> loop_lines;
    // Attribute lines until the next node or the end.
    while (true) {
      line = r.next(i + 1 < nnodes ? "node " + std::to_string(i + 1) : std::string("'end'"));
      if (line.substr(0, 2) != "  ") break;
      std::string_view a = line.substr(2);
      if (a.substr(0, 5) == "loop ") {
        a.remove_prefix(5);
        auto level = take_number<std::size_t>(r, a, "a loop level");
        if (level > n.loops.size())
          r.fail("loop level " + std::to_string(level) + " skips a level");
        if (level == n.loops.size()) {
          n.loops.emplace_back();
          loop_lines.emplace_back(false, false);
        }
        if (a.substr(0, 9) == " members ") {
          if (loop_lines[level].first)
            r.fail("loop " + std::to_string(level) + " members appears twice");
          loop_lines[level].first = true;
          n.loops[level].members = take_elastic(r, a.substr(9), star_node, "loop members");
        } else {
          take(r, a, " iters ", "'members' or 'iters'");
          if (loop_lines[level].second)
            r.fail("loop " + std::to_string(level) + " iters appears twice");
          loop_lines[level].second = true;
          n.loops[level].iters = take_elastic(r, a, star_node, "loop iterations");
        }
      } else if (a.substr(0, 6) == "count ") {
        if (have_count) r.fail("count appears twice");
        n.count = take_elastic(r, a.substr(6), star_node, "execution count");
        have_count = true;
      } else if (a.substr(0, 6) == "field ") {
        a.remove_prefix(6);
        FieldKind kind = FieldKind::kScalar;
        if (a.substr(0, 5) == "list ") {
          kind = FieldKind::kList;
          a.remove_prefix(5);
        }
        auto sp2 = a.find(' ');
        if (sp2 == std::string_view::npos) r.fail("expected 'field NAME VALUES @ RANKS'");
        FieldId f = 0;
        try {
          f = FieldTable::intern(a.substr(0, sp2), kind);
        } catch (const std::exception& ex) {
          r.fail(ex.what());
        }
        if (n.field(f)) r.fail("field " + FieldTable::name(f) + " appears twice");
        auto it = std::lower_bound(n.fields.begin(), n.fields.end(), f,
                                   [](const auto& p, FieldId id) { return p.first < id; });
        n.fields.insert(it, {f, take_elastic(r, a.substr(sp2 + 1), star_node, "field values")});
      } else if (a.substr(0, 10) == "time pred=") {
        Timing tm;
        tm.pred = take_pred(r, a.substr(10), t.sites.size());
        if (tm.pred == kOtherKey && version < 5)
          r.fail("pred=other needs format version 5, this file is version " +
                 std::to_string(version));
        line = r.next("'    compute HISTOGRAM'");
        std::string_view h = line;
        take(r, h, "    compute ", "the compute histogram");
        tm.compute = take_histogram(r, h, "compute");
        line = r.next("'    comm HISTOGRAM'");
        h = line;
        take(r, h, "    comm ", "the communication histogram");
        tm.comm = take_histogram(r, h, "communication");
        n.timings.push_back(std::move(tm));
        if (n.timings.size() >= 2 &&
            !(n.timings[n.timings.size() - 2].pred < n.timings.back().pred))
          r.fail("timings must be sorted by predecessor");
      } else if (a.substr(0, 7) == "  stat ") {
        if (n.timings.empty()) r.fail("'stat' outside a 'time' block");
        a.remove_prefix(7);
        auto sp3 = a.find(' ');
        if (sp3 == std::string_view::npos) r.fail("expected 'stat NAME HISTOGRAM'");
        n.timings.back().stats.emplace_back(std::string(a.substr(0, sp3)),
                                            take_histogram(r, a.substr(sp3 + 1), "statistic"));
      } else {
        r.fail("expected 'loop', 'count', 'field' or 'time', found " + show(a));
      }
    }
    if (!have_count) r.fail("node " + std::to_string(i) + " has no 'count' line");
    for (std::size_t l = 0; l < n.loops.size(); ++l)
      if (n.loops[l].members.empty() || n.loops[l].iters.empty())
        r.fail("node " + std::to_string(i) + " loop " + std::to_string(l) +
               " needs both 'members' and 'iters'");
    if (const std::string missing = missing_required_field(n); !missing.empty())
      throw TraceFormatError(r.source(), node_line, "node " + std::to_string(i) + ": " + missing);
    if (version >= links_form::kTextVersion) {
      try {
        links_form::derive(n, version >= links_form::kSweepTextVersion);
      } catch (const std::invalid_argument& e) {
        throw TraceFormatError(r.source(), node_line,
                               "node " + std::to_string(i) + ": " + e.what());
      }
    }
    t.nodes.push_back(std::move(n));
  }
  if (line != "end") r.fail("expected 'end', found " + show(line));
  if (!r.at_end()) {
    r.next("nothing");
    r.fail("unexpected text after 'end'");
  }
  return t;
}
}  // namespace

}  // namespace tracefold
