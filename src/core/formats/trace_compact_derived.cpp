// Field values that follow from a loop's trip counts (compact version 7,
// docs/format.md "Values derived from loop iterations"). A poll loop's
// probe returns "nothing" on every iteration but the last: stored as they
// are, its flags repeat the loop's trip counts run by run, and were the
// largest part of a polling code's trace.
#include <algorithm>

#include "trace_compact_codec.hpp"

namespace tracefold::compact {

bool derives_fields(const Node& n) {
  if (n.loops.empty()) return false;
  for (const ElasticEntry& en : n.count.entries()) {
    if (en.values.is_histogram()) return false;
    for (const ValueSeq::Run& r : en.values.runs())
      for (int64_t v : r.pattern)
        if (v != 1) return false;
  }
  return true;
}

namespace {

// Calls f(lo, hi) for each maximal interval of consecutive ranks.
template <class F>
void for_each_span(const Ranklist& r, F&& f) {
  bool open = false;
  int32_t from = 0, to = 0;
  r.for_each_interval([&](int32_t lo, int32_t hi) {
    if (open && lo == to + 1) {
      to = hi;
      return;
    }
    if (open) f(from, to);
    open = true;
    from = lo;
    to = hi;
  });
  if (open) f(from, to);
}

}  // namespace

LoopTrips::LoopTrips(const Elastic& iters) : iters_(&iters) {
  for (std::size_t k = 0; k < iters.entries().size(); ++k)
    for_each_span(iters.entries()[k].ranks, [&](int32_t lo, int32_t hi) {
      pieces_.push_back({lo, hi, k});
    });
  std::sort(pieces_.begin(), pieces_.end(),
            [](const Piece& a, const Piece& b) { return a.lo < b.lo; });
  // Spans of one entry that meet are one span, whatever the ranklist's sections.
  std::vector<Piece> joined;
  for (const Piece& p : pieces_) {
    if (!joined.empty() && joined.back().entry == p.entry && joined.back().hi + 1 == p.lo)
      joined.back().hi = p.hi;
    else
      joined.push_back(p);
  }
  pieces_ = std::move(joined);
}

const ValueSeq* LoopTrips::of(const Ranklist& ranks) const {
  std::size_t entry = SIZE_MAX;
  bool ok = !ranks.empty();
  for_each_span(ranks, [&](int32_t lo, int32_t hi) {
    if (!ok) return;
    auto it = std::upper_bound(pieces_.begin(), pieces_.end(), lo,
                               [](int32_t r, const Piece& p) { return r < p.lo; });
    if (it == pieces_.begin()) {
      ok = false;
      return;
    }
    --it;
    if (it->hi < hi || (entry != SIZE_MAX && it->entry != entry)) ok = false;
    entry = it->entry;
  });
  if (!ok || entry == SIZE_MAX) return nullptr;
  const ValueSeq& trips = iters_->entries()[entry].values;
  return trips.is_histogram() ? nullptr : &trips;
}

std::optional<DerivedValues> derive(const ValueSeq& values, const ValueSeq& trips,
                                    DerivedForm form) {
  // Work in proportion to what folds: a sequence of few runs over many
  // values (a regular code's) is not worth a pass over every value.
  if (values.is_histogram() || trips.is_histogram() || values.size() > kMaxDerivedValues ||
      values.size() > 1024 * values.run_count())
    return std::nullopt;
  DerivedValues d;
  d.form = form;
  bool have_other = false;
  ValueSeq::Cursor vc = values.cursor(), tc = trips.cursor();
  for (uint64_t step = 0; !tc.done(); ++step) {
    const int64_t t = tc.next();
    if (step > kMaxDerivedValues) return std::nullopt;
    if (t <= 0) continue;  // as expansion skips an empty loop (a negative trip is refused there)
    int64_t first = 0;
    for (int64_t k = 0; k < t; ++k) {
      if (vc.done()) return std::nullopt;
      const int64_t v = vc.next();
      if (k == 0) first = v;
      if (form == DerivedForm::kPerExecution) {
        if (v != first) return std::nullopt;
      } else if (k + 1 < t) {
        if (!have_other) d.other = v, have_other = true;
        if (v != d.other) return std::nullopt;
      }
      if (k + 1 == t) d.seq.push_back(form == DerivedForm::kPerExecution ? first : v);
    }
  }
  if (!vc.done()) return std::nullopt;
  return d;
}

std::optional<ValueSeq> expand_derived(const DerivedValues& d, const ValueSeq& trips,
                                       uint64_t max_values) {
  if (d.seq.is_histogram()) return std::nullopt;
  ValueSeq out;
  ValueSeq::Cursor dc = d.seq.cursor(), tc = trips.cursor();
  uint64_t total = 0;
  // Executions without iterations count too: a loop of 2^60 empty ones
  // must not keep a reader.
  for (uint64_t step = 0; !tc.done(); ++step) {
    const int64_t t = tc.next();
    if (step > kMaxDerivedValues) return std::nullopt;
    if (t <= 0) continue;
    total += static_cast<uint64_t>(t);
    if (dc.done() || t > static_cast<int64_t>(max_values) || total > max_values)
      return std::nullopt;
    const int64_t v = dc.next();
    if (d.form == DerivedForm::kPerExecution) {
      out.push_back_n(v, static_cast<uint64_t>(t));
    } else {
      out.push_back_n(d.other, static_cast<uint64_t>(t - 1));
      out.push_back(v);
    }
  }
  if (!dc.done()) return std::nullopt;
  return out;
}

}  // namespace tracefold::compact
