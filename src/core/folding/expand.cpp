#include "tracefold/expand.hpp"

#include <algorithm>
#include <cmath>

namespace tracefold {

RankIterator::RankIterator(const Trace& trace, int32_t rank) : trace_(trace), rank_(rank) {
  if (rank < 0 || rank >= trace.locations())
    throw std::out_of_range(
        "rank " + std::to_string(rank) + " is not in this trace of " +
        std::to_string(trace.world_size) + " ranks" +
        (trace.threads > 1 ? " x " + std::to_string(trace.threads) + " threads" : ""));
  for (const Node& n : trace.nodes) {
    if (!n.ranks.contains(rank)) continue;
    NodeState st;
    st.node = &n;
    for (const LoopLevel& l : n.loops) {
      const ValueSeq* m = l.members.for_rank(rank);
      const ValueSeq* it = l.iters.for_rank(rank);
      if (!m || !it) break;  // this rank's loop stack is shorter
      st.members.emplace_back(*m);
      st.iters.emplace_back(*it);
    }
    if (const ValueSeq* c = n.count.for_rank(rank)) st.count = ValueSeq::Cursor(*c);
    for (const auto& [f, el] : n.fields)
      if (const ValueSeq* v = el.for_rank(rank))
        st.fields.push_back(
            FieldState{f, FieldTable::kind(f) == FieldKind::kList, ValueSeq::Cursor(*v)});
    nodes_.push_back(std::move(st));
  }
}

namespace {
// A lossy histogram is a distribution, not a sequence: a rank that reads
// more values than it holds (a histogram shared by alike ranks holds the
// largest member's count; a modelled poll loop's trip counts decide how
// often its probe's values are read) starts it over. Exact sequences that
// run out are an inconsistent trace.
bool exhausted(ValueSeq::Cursor& c, const ValueSeq* seq) {
  if (!c.done()) return false;
  if (!seq || !seq->is_histogram() || seq->empty()) return true;
  c = ValueSeq::Cursor(*seq);
  return false;
}
}  // namespace

void RankIterator::fail(const std::string& what) const {
  std::string where = pos_ < nodes_.size()
                          ? " at node " + std::to_string(nodes_[pos_].node - trace_.nodes.data())
                          : "";
  throw ExpandError("rank " + std::to_string(rank_) + where + ": " + what);
}

bool RankIterator::next(Event& out) {
  const std::size_t n = nodes_.size();
  while (true) {
    const std::size_t range_end = stack_.empty() ? n : stack_.back().end;
    if (pos_ == range_end) {
      if (stack_.empty()) return false;
      Frame& f = stack_.back();
      if (--f.remaining > 0) {
        pos_ = f.head;
        level_ = f.level + 1;
      } else {
        pos_ = f.end;
        level_ = 0;
        stack_.pop_back();
      }
      continue;
    }
    if (pos_ > range_end) fail("loop body runs past its enclosing loop");
    NodeState& ns = nodes_[pos_];
    if (level_ < ns.iters.size()) {
      if (ns.members[level_].done() ||
          exhausted(ns.iters[level_], ns.node->loops[level_].iters.for_rank(rank_)))
        fail("loop level " + std::to_string(level_) + " has too few values");
      const int64_t m = ns.members[level_].next();
      const int64_t k = ns.iters[level_].next();
      if (m < 1 || k < 0 || pos_ + static_cast<std::size_t>(m) > range_end)
        fail("loop level " + std::to_string(level_) + " has an impossible size (members " +
             std::to_string(m) + ", iterations " + std::to_string(k) + ")");
      if (k == 0) {
        pos_ += static_cast<std::size_t>(m);
        level_ = 0;
        continue;
      }
      stack_.push_back(Frame{pos_, level_, k, pos_ + static_cast<std::size_t>(m), k, entries_++});
      ++level_;
      continue;
    }
    if (exhausted(ns.count, ns.node->count.for_rank(rank_))) fail("execution counts ran out");
    const int64_t c = ns.count.next();
    if (c != 0 && c != 1) fail("execution count " + std::to_string(c) + " (expected 0 or 1)");
    if (c == 0) {
      ++pos_;
      level_ = 0;
      continue;
    }
    const Node& node = *ns.node;
    // `out` is reused call after call (replay walks millions of events):
    // overwrite its field slots in place so their storage is kept.
    out.op = node.key.op;
    out.site = node.key.site;
    out.compute_ns = -1;
    out.comm_ns = -1;
    out.stats.clear();
    std::size_t used = 0;
    auto slot = [&]() -> FieldValue& {
      if (used == out.fields.size()) out.fields.emplace_back();
      return out.fields[used++];
    };
    for (auto& [f, list, cur] : ns.fields) {
      if (cur.done() && exhausted(cur, ns.node->field(f)->for_rank(rank_)))
        fail("field " + FieldTable::name(f) + " has too few values");
      const int64_t v = cur.next();
      if (list) {
        if (v == kAbsent) continue;
        if (v < 0) fail("field " + FieldTable::name(f) + " has a negative list length");
        FieldValue& fv = slot();
        fv.field = f;
        fv.scalar = kAbsent;
        fv.list.resize(static_cast<std::size_t>(v));
        for (auto& x : fv.list) {
          if (cur.done()) fail("field " + FieldTable::name(f) + " has too few values");
          x = cur.next();
        }
      } else if (v != kAbsent) {
        FieldValue& fv = slot();
        fv.field = f;
        fv.scalar = v;
        fv.list.clear();
      }
    }
    out.fields.resize(used);
    if (!ns.times_known || ns.times_pred != prev_) {
      ns.times_known = true;
      ns.times_pred = prev_;
      ns.compute_ns = ns.comm_ns = -1;
      if (const Timing* t = node.timing_after(prev_)) {
        if (!t->compute.empty()) ns.compute_ns = std::llround(t->compute.mean());
        if (!t->comm.empty()) ns.comm_ns = std::llround(t->comm.mean());
      }
    }
    out.compute_ns = ns.compute_ns;
    out.comm_ns = ns.comm_ns;
    if (has_relative_fields(out)) {
      int64_t comm = out.get(FieldTable::comm());
      if (comm == kAbsent) comm = CommTable::kWorld;
      auto p = std::find_if(positions_.begin(), positions_.end(),
                            [&](const CommPosition& c) { return c.comm == comm; });
      if (p == positions_.end()) {
        try {
          // A location's communicators are its rank's (trace.hpp).
          const int32_t rank = trace_.world_size > 0 ? trace_.rank_of(rank_) : rank_;
          const auto [me, size] = comm_position(comm, rank, trace_.comms);
          positions_.push_back(CommPosition{comm, me, size});
        } catch (const std::exception& ex) {
          fail(ex.what());
        }
        p = positions_.end() - 1;
      }
      decode_relative(out, p->me, p->size);
    }
    ++pos_;
    level_ = 0;
    prev_ = node.key;
    last_node_ = &node;
    return true;
  }
}

std::vector<Event> expand_rank(const Trace& trace, int32_t rank) {
  std::vector<Event> out;
  RankIterator it(trace, rank);
  Event e;
  while (it.next(e)) out.push_back(e);
  return out;
}

}  // namespace tracefold
