// The snippet filter (snippet.hpp).
#include "tracefold/extrap/snippet.hpp"

#include <sstream>

#include "tracefold/expand.hpp"
#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/request_cut.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/merge.hpp"
#include "tracefold/op_class.hpp"

namespace tracefold::extrap {

Snippet parse_snippet(std::string_view text, const std::string& source) {
  Snippet s;
  s.source = source;
  std::istringstream in{std::string(text)};
  std::string line;
  int no = 0;
  while (std::getline(in, line)) {
    ++no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string op;
    if (!(words >> op)) continue;
    const std::string where = source + ":" + std::to_string(no) + ": ";
    const auto id = OpTable::find(op);
    if (!id) throw ExtrapError(where + "'" + op + "' is no MPI operation tracefold knows");
    SnippetEvent ev;
    ev.op = *id;
    ev.line = no;
    std::string kv;
    while (words >> kv) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) throw ExtrapError(where + "'" + kv + "': expected field=value");
      const std::string name = kv.substr(0, eq);
      const auto f = FieldTable::find(name);
      if (!f || FieldTable::kind(*f) != FieldKind::kScalar)
        throw ExtrapError(where + "'" + name + "' is no scalar field of a trace");
      if (FieldTable::role(*f) == FieldRole::kPeer)
        throw ExtrapError(where + "field " + name +
                          " depends on the rank; a snippet matches operations and plain fields "
                          "(tag, count, ...) only");
      int64_t v = 0;
      if (!parse_value(kv.substr(eq + 1), v))
        throw ExtrapError(where + "'" + kv.substr(eq + 1) + "' is no value");
      ev.fields.emplace_back(*f, v);
    }
    s.events.push_back(std::move(ev));
  }
  if (s.events.empty()) throw ExtrapError(source + ": the snippet holds no event");
  return s;
}

namespace {

// Calls the filter may drop: point-to-point and everything that handles
// their requests. The rest (collectives, environment, communicator and
// datatype calls) is kept when no match is under way.
bool filtered_kind(const Event& e) {
  return op_traits(e.op).point_to_point();
}

bool matches(const SnippetEvent& s, const Event& e) {
  if (s.op != e.op) return false;
  for (const auto& [f, v] : s.fields)
    if (e.get(f) != v) return false;
  return true;
}

}  // namespace

Trace filter_trace(const Trace& trace, const Snippet& snippet, const std::string& name,
                   FilterReport& report) {
  const int32_t p = trace.world_size;
  report.name = name;
  report.kept.assign(static_cast<std::size_t>(p), 0);
  report.dropped.assign(static_cast<std::size_t>(p), 0);
  std::vector<Trace> per_rank;
  per_rank.reserve(static_cast<std::size_t>(p));
  for (int32_t r = 0; r < p; ++r) {
    Folder folder(r);
    std::vector<Event> pending;
    std::size_t pos = 0;
    uint64_t& dropped = report.dropped[static_cast<std::size_t>(r)];
    uint64_t& kept = report.kept[static_cast<std::size_t>(r)];
    RequestCut cut;
    auto keep = [&](Event e) {
      if (!cut.pass(e, true)) {
        ++dropped;
        return;
      }
      encode_relative(e, r, trace.comms);
      folder.append(e);
      ++kept;
    };
    auto drop = [&](const Event& e) {
      Event copy = e;
      cut.pass(copy, false);
      ++dropped;
    };
    RankIterator it(trace, r);
    Event e;
    while (it.next(e)) {
      if (pos > 0 && matches(snippet.events[pos], e)) {
        pending.push_back(e);
      } else {
        if (pos > 0) {
          for (const Event& x : pending) drop(x);
          pending.clear();
          pos = 0;
        }
        if (!filtered_kind(e)) {
          keep(e);
          continue;
        }
        if (!matches(snippet.events[0], e)) {
          drop(e);
          continue;
        }
        pending.push_back(e);
      }
      pos = pending.size();
      if (pos == snippet.events.size()) {
        for (Event& x : pending) keep(std::move(x));
        pending.clear();
        pos = 0;
      }
    }
    for (const Event& x : pending) drop(x);
    report.links_cut += cut.links_cut();
    per_rank.push_back(folder.finish(p, trace.sites, trace.comms));
  }
  Trace out = reduce_traces(std::move(per_rank));
  out.symtab = trace.symtab;
  out.lossy = "snippet filter " + snippet.source;
  return out;
}

}  // namespace tracefold::extrap
