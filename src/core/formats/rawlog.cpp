#include "tracefold/rawlog.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <ostream>
#include <set>

#include "tracefold/expand.hpp"
#include "tracefold/limits.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/trace_io.hpp"
#include "tracefold/validate.hpp"

namespace tracefold {

namespace {

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && (line[pos] == ' ' || line[pos] == '\t')) ++pos;
    if (pos >= line.size()) break;
    std::size_t end = pos;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    out.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

template <class T>
bool to_number(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

}  // namespace

std::string format_comm_line(int64_t id, const CommGroup& g) {
  std::string s = "comm " + std::to_string(id);
  if (g.members.ascending()) return s + " members " + g.members.to_ranklist().to_string();
  s += " order";
  for (int32_t m : g.members) s += " " + std::to_string(m);
  return s;
}

std::string format_event_line(const Event& ev, bool with_timing) {
  std::string s = OpTable::name(ev.op) + " site=" + std::to_string(ev.site);
  std::vector<const FieldValue*> fields;
  for (const FieldValue& f : ev.fields) fields.push_back(&f);
  std::sort(fields.begin(), fields.end(), [](const FieldValue* a, const FieldValue* b) {
    return FieldTable::print_before(a->field, b->field);
  });
  for (const FieldValue* f : fields) {
    s += ' ';
    s += FieldTable::name(f->field);
    s += '=';
    if (FieldTable::kind(f->field) == FieldKind::kList) {
      s += '[';
      for (std::size_t i = 0; i < f->list.size(); ++i) {
        if (i) s += ',';
        s += format_value(f->list[i]);
      }
      s += ']';
    } else {
      s += format_value(f->scalar);
    }
  }
  if (with_timing) {
    if (ev.compute_ns >= 0) s += " compute_ns=" + std::to_string(ev.compute_ns);
    if (ev.comm_ns >= 0) s += " comm_ns=" + std::to_string(ev.comm_ns);
  }
  return s;
}

RawLog parse_raw_log(std::string_view text, const std::string& source) {
  RawLog log;
  std::map<int64_t, SiteId> site_ids;  // declared id -> dense id
  std::size_t line_no = 0;
  std::size_t pos = 0;
  auto fail = [&](const std::string& msg) -> void {
    throw RawLogError(source + ":" + std::to_string(line_no) + ": " + msg);
  };
  bool have_header = false;
  int32_t thread = 0;          // of the events that follow (`thread T`)
  std::vector<int32_t> order;  // `thread-order`
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    auto toks = split_spaces(line);
    if (toks.empty() || toks[0].front() == '#') continue;
    const std::string_view head = toks[0];
    if (head == "rank") {
      if (have_header) fail("second 'rank' line");
      if (toks.size() != 4 || toks[2] != "size" || !to_number(toks[1], log.rank) ||
          !to_number(toks[3], log.size) || log.size <= 0 || log.rank < 0 || log.rank >= log.size)
        fail("expected 'rank R size P' with 0 <= R < P");
      // Checked before the world's communicator is built for it.
      if (log.size > kMaxWorldSize)
        fail("size " + std::to_string(log.size) + " is above the limit of " +
             std::to_string(kMaxWorldSize) + " ranks");
      log.comms.define_world(log.size);
      have_header = true;
      continue;
    }
    if (!have_header)
      fail("expected 'rank R size P' before anything else, found '" + std::string(head) + "'");
    if (head == "thread") {
      if (toks.size() != 2 || !to_number(toks[1], thread) || thread < 0 ||
          thread >= kMaxWorldSize / log.size)
        fail("expected 'thread T' with T >= 0");
      log.threads = std::max(log.threads, thread + 1);
      continue;
    }
    if (head == "thread-order") {
      // Thread order[k] of the lines above is thread k of the trace.
      order.clear();
      for (std::size_t i = 1; i < toks.size(); ++i) {
        int32_t t;
        if (!to_number(toks[i], t) || t < 0) fail("expected thread numbers after 'thread-order'");
        order.push_back(t);
      }
      continue;
    }
    if (head == "site") {
      int64_t id;
      if (toks.size() < 3 || !to_number(toks[1], id)) fail("expected 'site ID FRAME...'");
      std::string_view frames = line.substr(static_cast<std::size_t>(toks[2].data() - line.data()));
      CallSite cs;
      if (!SiteTable::parse(frames, cs)) fail("bad frames, expected 'module+0xOFFSET ...'");
      if (const std::string bad = invalid_site(cs); !bad.empty()) fail(bad);
      if (site_ids.count(id)) fail("site " + std::to_string(id) + " declared twice");
      site_ids[id] = log.sites.intern(cs);
      continue;
    }
    if (head == "comm") {
      int64_t id;
      if (toks.size() < 3 || !to_number(toks[1], id))
        fail("expected 'comm ID members RANKLIST' or 'comm ID order R...'");
      CommGroup g;
      if (toks[2] == "members") {
        std::string_view rl =
            line.substr(static_cast<std::size_t>(toks[2].data() - line.data()) + 7);
        Ranklist members;
        try {
          members = Ranklist::parse(rl);
        } catch (const std::exception& ex) {
          fail(std::string("bad ranklist: ") + ex.what());
        }
        if (!members.empty() && members.last() >= log.size)
          fail("communicator member " + std::to_string(members.last()) + " is outside 0.." +
               std::to_string(log.size - 1));
        g.members = MemberList::from_ranklist(members);
      } else if (toks[2] == "order") {
        for (std::size_t i = 3; i < toks.size(); ++i) {
          int32_t m;
          if (!to_number(toks[i], m)) fail("expected a rank, found '" + std::string(toks[i]) + "'");
          g.members.push_back(m);
        }
      } else {
        fail("expected 'members' or 'order' after the communicator id");
      }
      if (g.members.empty()) fail("communicator " + std::to_string(id) + " has no members");
      for (int32_t m : g.members)
        if (m < 0 || m >= log.size)
          fail("communicator member " + std::to_string(m) + " is outside 0.." +
               std::to_string(log.size - 1));
      if (std::find(g.members.begin(), g.members.end(), log.rank) == g.members.end())
        fail("communicator " + std::to_string(id) + " does not contain this rank (" +
             std::to_string(log.rank) + ")");
      if (id == CommTable::kWorld) {
        if (static_cast<int32_t>(g.members.size()) != log.size)
          fail("communicator 0 is the world and must hold all ranks");
        continue;
      }
      if (log.comms.group_of(id, log.rank))
        fail("communicator " + std::to_string(id) + " declared twice");
      log.comms.define(id, std::move(g));
      continue;
    }
    auto op = OpTable::find(head);
    if (!op) fail("unknown operation or keyword '" + std::string(head) + "'");
    Event ev;
    ev.op = *op;
    bool have_site = false;
    for (std::size_t i = 1; i < toks.size(); ++i) {
      std::string_view tok = toks[i];
      auto eq = tok.find('=');
      if (eq == std::string_view::npos || eq == 0)
        fail("expected key=value, found '" + std::string(tok) + "'");
      std::string_view key = tok.substr(0, eq), val = tok.substr(eq + 1);
      if (key == "site") {
        int64_t id;
        if (!to_number(val, id) || !site_ids.count(id))
          fail("site '" + std::string(val) + "' is not declared");
        ev.site = site_ids[id];
        have_site = true;
      } else if (key == "compute_ns" || key == "comm_ns") {
        int64_t v;
        if (!to_number(val, v) || v < 0) fail(std::string(key) + " must be a non-negative integer");
        (key == "compute_ns" ? ev.compute_ns : ev.comm_ns) = v;
      } else if (!val.empty() && val.front() == '[') {
        if (val.back() != ']') fail("list value of '" + std::string(key) + "' must end with ']'");
        std::vector<int64_t> list;
        std::string_view inner = val.substr(1, val.size() - 2);
        while (!inner.empty()) {
          auto comma = inner.find(',');
          std::string_view item = inner.substr(0, comma);
          int64_t v;
          if (!parse_value(item, v) || v == kAbsent)
            fail("bad list element '" + std::string(item) + "' in " + std::string(key));
          list.push_back(v);
          if (comma == std::string_view::npos) break;
          inner.remove_prefix(comma + 1);
        }
        FieldId f = 0;
        try {
          f = FieldTable::intern(key, FieldKind::kList);
        } catch (const std::exception& ex) {
          fail(ex.what());
        }
        if (ev.find(f)) fail("field '" + std::string(key) + "' given twice");
        ev.set_list(f, std::move(list));
      } else {
        int64_t v;
        if (!parse_value(val, v) || v == kAbsent)
          fail("bad value '" + std::string(val) + "' for " + std::string(key));
        FieldId f = 0;
        try {
          f = FieldTable::intern(key, FieldKind::kScalar);
        } catch (const std::exception& ex) {
          fail(ex.what());
        }
        if (ev.find(f)) fail("field '" + std::string(key) + "' given twice");
        ev.set(f, v);
      }
    }
    if (!have_site) fail("event has no site=ID");
    if (const std::string missing = missing_required_field(ev); !missing.empty()) fail(missing);
    try {
      Event probe = ev;
      encode_relative(probe, log.rank, log.comms);
    } catch (const std::exception& ex) {
      fail(ex.what());
    }
    log.events.push_back(std::move(ev));
    if (thread != 0 && log.event_threads.empty())
      log.event_threads.resize(log.events.size() - 1, 0);
    if (!log.event_threads.empty()) log.event_threads.push_back(thread);
  }
  if (!have_header) {
    line_no = 0;
    fail("empty log: expected 'rank R size P'");
  }
  if (!order.empty()) {
    std::vector<int32_t> renumber(static_cast<std::size_t>(log.threads), -1);
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (order[k] >= log.threads || renumber[static_cast<std::size_t>(order[k])] >= 0)
        fail("'thread-order' must name each thread once");
      renumber[static_cast<std::size_t>(order[k])] = static_cast<int32_t>(k);
    }
    if (order.size() != renumber.size()) fail("'thread-order' must name each thread once");
    for (int32_t& t : log.event_threads) t = renumber[static_cast<std::size_t>(t)];
    // `lthreads` values (threads that made the requests a call completed)
    // were written with the numbers of the lines above too.
    if (const std::optional<FieldId> lthreads = FieldTable::find("lthreads"))
      for (Event& ev : log.events)
        for (FieldValue& f : ev.fields)
          if (f.field == *lthreads)
            for (int64_t& v : f.list)
              if (v >= 0 && static_cast<std::size_t>(v) < renumber.size())
                v = renumber[static_cast<std::size_t>(v)];
  }
  return log;
}

RawLog read_raw_log(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_file_text(path);
  } catch (const std::exception& ex) {
    throw RawLogError(ex.what());
  }
  return parse_raw_log(text, path.string());
}

void write_expansion(std::ostream& out, const Trace& trace, int32_t location, bool with_timing) {
  const int32_t rank = trace.world_size > 0 ? trace.rank_of(location) : location;
  out << "rank " << rank << " size " << trace.world_size << "\n";
  for (SiteId i = 0; i < trace.sites.size(); ++i)
    out << "site " << i << " " << SiteTable::format(trace.sites.at(i)) << "\n";
  for (const auto& [id, groups] : trace.comms.all()) {
    if (id == CommTable::kWorld) continue;
    for (const CommGroup& g : groups)
      if (std::find(g.members.begin(), g.members.end(), rank) != g.members.end())
        out << format_comm_line(id, g) << "\n";
  }
  if (trace.threads > 1) out << "thread " << trace.thread_of(location) << "\n";
  RankIterator it(trace, location);
  Event ev;
  while (it.next(ev)) out << format_event_line(ev, with_timing) << "\n";
}

std::vector<Event> RawLog::thread_events(int32_t t) const {
  if (event_threads.empty()) return t == 0 ? events : std::vector<Event>{};
  std::vector<Event> out;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (event_threads[i] == t) out.push_back(events[i]);
  return out;
}

Trace fold_log(const RawLog& log, const FoldOptions& options) {
  Trace out;
  // Thread t of the rank folds at location t * size + rank (trace.hpp).
  for (int32_t t = 0; t < log.threads; ++t) {
    Folder folder(t * log.size + log.rank, options);
    for (Event ev : log.thread_events(t)) {
      encode_relative(ev, log.rank, log.comms);
      folder.append(ev);
    }
    Trace part = folder.finish(log.size, log.sites, log.comms);
    part.threads = log.threads;
    out = t == 0 ? std::move(part) : merge_traces(std::move(out), std::move(part));
  }
  return out;
}

Trace fold_directory(const std::filesystem::path& dir, const FoldOptions& options) {
  if (!std::filesystem::is_directory(dir)) throw RawLogError(dir.string() + ": not a directory");
  std::set<int32_t> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    int32_t r;
    if (name.size() > 9 && name.rfind("rank-", 0) == 0 && name.substr(name.size() - 4) == ".txt" &&
        to_number(std::string_view(name).substr(5, name.size() - 9), r))
      found.insert(r);
  }
  if (found.empty()) throw RawLogError(dir.string() + ": no rank-R.txt files");
  const int32_t size = *found.rbegin() + 1;
  for (int32_t r = 0; r < size; ++r)
    if (!found.count(r))
      throw RawLogError((dir / ("rank-" + std::to_string(r) + ".txt")).string() +
                        ": missing (ranks 0.." + std::to_string(size - 1) + " expected)");
  std::vector<Trace> traces;
  traces.reserve(static_cast<std::size_t>(size));
  for (int32_t r = 0; r < size; ++r) {
    auto path = dir / ("rank-" + std::to_string(r) + ".txt");
    RawLog log = read_raw_log(path);
    if (log.rank != r)
      throw RawLogError(path.string() + ": declares rank " + std::to_string(log.rank));
    if (log.size != size)
      throw RawLogError(path.string() + ": declares size " + std::to_string(log.size) +
                        " but the directory has " + std::to_string(size) + " ranks");
    traces.push_back(fold_log(log, options));
  }
  return reduce_traces(std::move(traces));
}

}  // namespace tracefold
