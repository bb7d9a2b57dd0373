#include "tracefold/wildcards.hpp"

#include <algorithm>

namespace tracefold {

namespace {

struct Ids {
  OpId wait, test, waitany, testany, waitall, testall, waitsome, testsome, irecv, recv_init;
  FieldId src, mtag, srcs, mtags, flag, index, tag;
};

const Ids& ids() {
  static const Ids i = [] {
    auto op = [](const char* n) { return *OpTable::find(n); };
    auto scalar = [](const char* n) { return FieldTable::intern(n, FieldKind::kScalar); };
    auto list = [](const char* n) { return FieldTable::intern(n, FieldKind::kList); };
    return Ids{op("MPI_Wait"),    op("MPI_Test"),      op("MPI_Waitany"),  op("MPI_Testany"),
               op("MPI_Waitall"), op("MPI_Testall"),   op("MPI_Waitsome"), op("MPI_Testsome"),
               op("MPI_Irecv"),   op("MPI_Recv_init"), FieldTable::src(),  scalar("mtag"),
               list("srcs"),      list("mtags"),       scalar("flag"),     scalar("index"),
               scalar("tag")};
  }();
  return i;
}

}  // namespace

bool is_wildcard_receive(const Event& creator) {
  const Ids& i = ids();
  if (creator.op != i.irecv && creator.op != i.recv_init) return false;
  return creator.get(FieldTable::peer()) == kAny || creator.get(i.tag) == kAny;
}

std::vector<WildcardMatch> wildcard_matches(const Event& completion,
                                            const std::vector<bool>& wild) {
  const Ids& i = ids();
  const FieldValue* links = completion.find(FieldTable::links());
  if (!links) return {};
  const std::size_t n = links->list.size();
  std::vector<WildcardMatch> out(n);
  std::vector<std::size_t> positions;  // the wildcard receives, in array order
  for (std::size_t k = 0; k < n && k < wild.size(); ++k)
    if (wild[k]) positions.push_back(k);
  if (positions.empty()) return out;
  auto mark_all = [&](WildcardOutcome o) {
    for (std::size_t k : positions) out[k].outcome = o;
  };
  const OpId op = completion.op;
  const int64_t flag = completion.get(i.flag);
  if (op == i.wait || op == i.test || op == i.waitany || op == i.testany) {
    if (flag == 0) {
      mark_all(WildcardOutcome::kNotCompleted);
      return out;
    }
    std::size_t done = 0;
    if (op == i.waitany || op == i.testany) {
      const int64_t index = completion.get(i.index);
      // MPI_UNDEFINED: nothing was active (recorded as undef).
      if (index == kAbsent) {
        mark_all(WildcardOutcome::kUnknown);
        return out;
      }
      mark_all(WildcardOutcome::kNotCompleted);
      if (index < 0 || static_cast<std::size_t>(index) >= n) return out;
      done = static_cast<std::size_t>(index);
    } else if (n != 1) {
      mark_all(WildcardOutcome::kUnknown);
      return out;
    }
    if (done >= wild.size() || !wild[done]) return out;
    WildcardMatch& m = out[done];
    m.src = completion.get(i.src);
    m.tag = completion.get(i.mtag);
    // Without a status the recorder saw nothing of the match.
    m.outcome = m.src == kAbsent && m.tag == kAbsent ? WildcardOutcome::kUnknown
                                                     : WildcardOutcome::kMatched;
    return out;
  }
  if (op != i.waitall && op != i.testall && op != i.waitsome && op != i.testsome) {
    mark_all(WildcardOutcome::kUnknown);
    return out;
  }
  if (op == i.testall && flag == 0) {
    mark_all(WildcardOutcome::kNotCompleted);
    return out;
  }
  const FieldValue* srcs = completion.find(i.srcs);
  const FieldValue* mtags = completion.find(i.mtags);
  // Absent lists: every entry was undef, or the trace predates them (or the
  // completion was not recorded by tracefold's recorder) -- not knowable here.
  if (!srcs || !mtags || srcs->list.size() != positions.size() ||
      mtags->list.size() != positions.size()) {
    mark_all(WildcardOutcome::kUnknown);
    return out;
  }
  for (std::size_t e = 0; e < positions.size(); ++e) {
    WildcardMatch& m = out[positions[e]];
    const int64_t s = srcs->list[e], t = mtags->list[e];
    if (s == kUndefined || t == kUndefined) {
      m.outcome = WildcardOutcome::kNotCompleted;
      continue;
    }
    m.outcome = WildcardOutcome::kMatched;
    m.src = s;
    m.tag = t;
  }
  return out;
}

}  // namespace tracefold
