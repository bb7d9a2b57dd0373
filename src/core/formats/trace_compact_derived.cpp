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

namespace {

// Reads a sequence value by value from its runs in place (the sequence must
// not change meanwhile). ValueSeq::Cursor copies the runs first, which for
// the one pass derive_all makes cost as much as the pass.
class RunWalk {
 public:
  // Sized first and filled in place: a push_back per run was a call of
  // about 25 instructions (not inlined), for as many runs as values in a
  // literal-heavy sequence.
  explicit RunWalk(const ValueSeq& s) : runs_(s.run_count()), left_(s.size()) {
    Piece* out = runs_.data();
    s.for_each_run([&](const int64_t* p, std::size_t len, uint64_t reps) {
      *out++ = Piece{p, len, reps};
    });
  }
  uint64_t left() const { return left_; }
  bool done() const { return left_ == 0; }
  int64_t next() {
    const Piece& r = runs_[run_];
    const int64_t v = r.p[pos_];
    if (++pos_ == r.len) {
      pos_ = 0;
      if (++rep_ == r.reps) {
        rep_ = 0;
        ++run_;
      }
    }
    --left_;
    return v;
  }

 private:
  struct Piece {
    const int64_t* p;
    std::size_t len;
    uint64_t reps;
  };
  std::vector<Piece> runs_;
  std::size_t run_ = 0, pos_ = 0;
  uint64_t rep_ = 0, left_;
};

}  // namespace

std::vector<DerivedValues> derive_all(const ValueSeq& values, const ValueSeq& trips) {
  // Work in proportion to what folds: a sequence of few runs over many
  // values (a regular code's) is not worth a pass over every value.
  if (values.is_histogram() || trips.is_histogram() || values.size() > kMaxDerivedValues ||
      values.size() > 1024 * values.run_count())
    return {};
  DerivedValues last, each;
  last.form = DerivedForm::kLastDiffers;
  each.form = DerivedForm::kPerExecution;
  bool last_fits = true, each_fits = true, have_other = false;
  RunWalk vc(values), tc(trips);
  // One pass for both forms: each execution reads its t values once.
  for (uint64_t step = 0; !tc.done() && (last_fits || each_fits); ++step) {
    const int64_t t = tc.next();
    if (step > kMaxDerivedValues) return {};
    if (t <= 0) continue;  // as expansion skips an empty loop (a negative trip is refused there)
    if (static_cast<uint64_t>(t) > vc.left()) return {};
    const int64_t first = vc.next();
    int64_t v = first;
    for (int64_t k = 1; k < t; ++k) {
      // v is an iteration's value other than the execution's last.
      if (!have_other) {
        last.other = v;
        have_other = true;
      } else if (v != last.other) {
        last_fits = false;
      }
      v = vc.next();
      if (v != first) each_fits = false;
    }
    if (last_fits) last.seq.push_back(v);
    if (each_fits) each.seq.push_back(first);
  }
  std::vector<DerivedValues> out;
  if (!vc.done()) return out;
  if (last_fits) out.push_back(std::move(last));
  if (each_fits) out.push_back(std::move(each));
  return out;
}

std::optional<DerivedValues> derive(const ValueSeq& values, const ValueSeq& trips,
                                    DerivedForm form) {
  for (DerivedValues& d : derive_all(values, trips))
    if (d.form == form) return std::move(d);
  return std::nullopt;
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
