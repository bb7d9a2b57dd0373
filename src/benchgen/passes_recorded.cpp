// Recorded wildcard matches and the resolved view of an event stream.
#include <deque>
#include <memory>

#include "passes_internal.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/wildcards.hpp"

namespace tracefold {
namespace passes {

const PassFields& pass_fields() {
  static const PassFields f = [] {
    auto scalar = [](const char* n) { return FieldTable::intern(n, FieldKind::kScalar); };
    auto list = [](const char* n) { return FieldTable::intern(n, FieldKind::kList); };
    return PassFields{FieldTable::peer(), scalar("rpeer"), scalar("tag"),   scalar("rtag"),
                      FieldTable::src(),  scalar("mtag"),  list("srcs"),    list("mtags"),
                      FieldTable::comm(), scalar("flag"),  scalar("index"), list("indices"),
                      FieldTable::links()};
  }();
  return f;
}

RecordedMatches scan_recorded_matches(const EventSource& source) {
  const PassFields& f = pass_fields();
  RecordedMatches out;
  Event ev;
  uint64_t made = 0;
  // Per request number: is it a live wildcard receive, and for a start,
  // which wildcard init it started (0: none).
  std::vector<bool> wild(1, false);
  std::vector<uint64_t> init_of(1, 0);
  std::vector<bool> marks;
  while (source(ev)) {
    const OpTraits& t = op_traits(ev.op);
    if (OpTable::makes_request(ev.op)) {
      bool w = t.family == OpFamily::kRecv && is_wildcard_receive(ev);
      uint64_t init = 0;
      if (t.family == OpFamily::kRecvInit && is_wildcard_receive(ev)) init = made + 1;
      if (t.family == OpFamily::kStart) {
        // Only a start of one request is numbered as a wildcard receive:
        // a completion's srcs entries cannot be told apart otherwise.
        const FieldValue* links = ev.find(f.links);
        if (links && links->list.size() == 1) {
          const uint64_t n = linked_number(links->list[0], made);
          // The link names the init or the previous start of the same
          // request; either knows its wildcard init.
          if (n != 0 && init_of[n] != 0) {
            w = true;
            init = init_of[n];
          }
        }
      }
      ++made;
      wild.push_back(w);
      init_of.push_back(init);
      continue;
    }
    if (t.family != OpFamily::kComplete) continue;
    const FieldValue* links = ev.find(f.links);
    if (!links) continue;
    marks.assign(links->list.size(), false);
    for (std::size_t k = 0; k < marks.size(); ++k)
      marks[k] = wild[linked_number(links->list[k], made)];
    const std::vector<WildcardMatch> m = wildcard_matches(ev, marks);
    for (std::size_t k = 0; k < m.size(); ++k) {
      if (m[k].outcome != WildcardOutcome::kMatched) continue;
      const uint64_t n = linked_number(links->list[k], made);
      const Match match{m[k].src, m[k].tag};
      out.by_number[n] = match;
      const uint64_t init = init_of[n];
      if (init == 0 || init == n) continue;
      auto [it, fresh] = out.by_init.emplace(init, match);
      if (!fresh && !(it->second == match) && !out.conflict.count(init))
        out.conflict.emplace(init, std::pair{it->second, match});
    }
  }
  return out;
}

}  // namespace passes

using namespace passes;

namespace {

// Names the recorded match in a wildcard's own source/tag fields.
void name_match(Event& ev, FieldId peer_f, FieldId tag_f, const Match& m) {
  if (ev.get(peer_f) == kAny && m.src != kAbsent) ev.set(peer_f, m.src);
  if (ev.get(tag_f) == kAny && m.tag != kAbsent) ev.set(tag_f, m.tag);
}

void drop_matches(Event& ev) {
  const PassFields& f = pass_fields();
  std::erase_if(ev.fields, [&](const FieldValue& v) {
    return v.field == f.src || v.field == f.mtag || v.field == f.srcs || v.field == f.mtags;
  });
}

}  // namespace

EventSource resolved_stream(std::function<EventSource()> open) {
  auto matches = std::make_shared<RecordedMatches>(scan_recorded_matches(open()));
  auto source = std::make_shared<EventSource>(open());
  auto made = std::make_shared<uint64_t>(0);
  return [matches, source, made](Event& ev) {
    if (!(*source)(ev)) return false;
    const PassFields& f = pass_fields();
    const OpTraits& t = op_traits(ev.op);
    if (OpTable::makes_request(ev.op)) ++*made;
    const Match own{ev.get(f.src), ev.get(f.mtag)};
    switch (t.family) {
      case OpFamily::kRecv:
        if (t.nonblocking) {
          auto it = matches->by_number.find(*made);
          if (it != matches->by_number.end()) name_match(ev, f.peer, f.tag, it->second);
        } else {
          name_match(ev, f.peer, f.tag, own);
        }
        break;
      case OpFamily::kProbe:
      case OpFamily::kMprobe:
        name_match(ev, f.peer, f.tag, own);
        break;
      case OpFamily::kSendrecv:
        name_match(ev, f.rpeer, f.rtag, own);
        break;
      case OpFamily::kRecvInit:
        if (!matches->conflict.count(*made)) {
          auto it = matches->by_init.find(*made);
          if (it != matches->by_init.end()) name_match(ev, f.peer, f.tag, it->second);
        }
        break;
      default:
        break;
    }
    drop_matches(ev);
    return true;
  };
}

}  // namespace tracefold
