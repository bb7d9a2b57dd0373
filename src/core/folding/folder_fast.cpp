// Folder: the fast path (events that continue a loop of plain events) and
// repeated events folded in bulk.
#include "folder_impl.hpp"
#include "repeat_times.hpp"

#include <algorithm>

namespace tracefold {

using namespace folding;

bool Folder::Impl::ends_earlier(uint64_t last, std::size_t exclude_from) const {
  const std::vector<std::size_t>* found = by_last.find(last);
  return found && !found->empty() && found->front() < exclude_from;
}

void Folder::Impl::arm() {
  armed_ = false;
  walking_ = false;  // started again below when it applies (nothing kept aside here)
  refold_quiet_ = false;
  const bool follows_clean = follows_clean_;
  follows_clean_ = false;
  if (recording_) return;  // the session's iteration goes the general way
  if (!options.fast_path || top.empty() || !top.back().loop) {
    have_prev_ = learned_ = false;
    return;
  }
  const Item& loop = top.back();
  const std::size_t len = loop.body.size();
  for (const Item& b : loop.body)
    if (b.loop) return start_session(follows_clean);
  have_prev_ = learned_ = false;
  if (len == 0) return;
  const std::size_t k = top.size() - 1;
  has_list_.assign(len, 0);
  for (std::size_t p = 0; p < len; ++p)
    for (const auto& f : loop.body[p].fields)
      if (FieldTable::kind(f.first) == FieldKind::kList) has_list_[p] = 1;
  quiet_.assign(len, 0);
  seen_keys_.clear();
  for (std::size_t p = 0; p + 1 < len; ++p) {
    const uint64_t key = loop.body[p].key;
    const bool repeats = !seen_keys_.insert(key).second;
    // The pending event for body[p] would sit at k + 1 + p, after the real
    // items (indexed in by_last) and the pending events before it.
    quiet_[p] = !repeats && !ends_earlier(key, k + 1);
  }
  refold_after_iteration_ = ends_earlier(loop.last, k);
  armed_ = true;
}

bool Folder::Impl::fast_append(const Event& ev) {
  if (!armed_ || !ev.stats.empty()) return false;
  Item& loop = top.back();
  const std::size_t p = pending_count_;
  const Item& b = loop.body[p];
  if (ev.key().packed() != b.key || ev.fields.size() != b.fields.size()) return false;
  for (std::size_t i = 0; i < b.fields.size(); ++i)
    if (ev.fields[i].field != b.fields[i].first) return false;
  const bool completes = p + 1 == loop.body.size();
  if (!completes && !quiet_[p]) return false;
  if (completes) {
    // The general path finds the iteration at this loop first (the latest
    // loop), whole and directly compatible, and merges it in pairwise.
    const uint64_t pred = prev_key;
    loop.reps.set_back(loop.reps.back() + 1);
    for (std::size_t i = 0; i < p; ++i)
      merge_event(loop.body[i], pending_[i].ev, pending_[i].pred, has_list_[i]);
    merge_event(loop.body[p], ev, pred, has_list_[p]);
    pending_count_ = 0;
    prev_key = b.key;
    ++events;
    ++paths.fast;
    if (refold_after_iteration_ && !refold_quiet_) {
      if (try_fold()) {
        while (try_fold()) {
        }
        arm();
      } else {
        refold_quiet_ = true;
      }
    }
    return true;
  }
  if (pending_.size() <= p) pending_.resize(p + 1);
  Pending& slot = pending_[p];
  slot.ev.op = ev.op;
  slot.ev.site = ev.site;
  slot.ev.fields = ev.fields;  // reuses the slot's buffers
  slot.ev.compute_ns = ev.compute_ns;
  slot.ev.comm_ns = ev.comm_ns;
  slot.pred = prev_key;
  ++pending_count_;
  prev_key = b.key;
  ++events;
  ++paths.fast;
  return true;
}

void Folder::Impl::merge_event(Item& b, const FieldValue* fields, int64_t compute, int64_t comm,
                               uint64_t pred, bool has_list) {
  // Appending a one-value sequence is push_back (ValueSeq::append ->
  // append_repeated(v, 1)); a list's values must go through append, which
  // folds a run of equal values differently from pushing them one by one.
  for (std::size_t i = 0; i < b.fields.size(); ++i) {
    const FieldValue& fv = fields[i];
    if (has_list && FieldTable::kind(fv.field) == FieldKind::kList)
      append_list_values(b.fields[i].second, fv.list);
    else
      b.fields[i].second.push_back(fv.scalar);
  }
  merge_event_execution(b, compute, comm, pred);
}

void Folder::Impl::append_repeats(const Event& ev, std::span<const RepeatTiming> times,
                                  Event* self) {
  std::size_t i = 0;
  while (i < times.size()) {
    // A session (see "replay") logs the general path's steps through an
    // iteration of a loop with inner loops, to replay them on the next
    // one; a polling loop inside that iteration would keep every poll on
    // the general path. Sessions never change what is folded, only how
    // fast, so this one is given up and the polls can take the fast path.
    if (recording_) {
      log_.spoil();
      end_recording();
      arm();
    }
    if (repeat_in_place(ev, times.subspan(i))) return;
    if (walking_ && walk_repeats(ev, times.subspan(i))) return;
    if (self == nullptr) {
      repeat_scratch_ = ev;  // a const event: copied once, the first time a copy is needed
      self = &repeat_scratch_;
    }
    struct Times {
      Event& ev;
      const int64_t compute, comm;
      ~Times() {
        ev.compute_ns = compute;
        ev.comm_ns = comm;
      }
    } restore{*self, self->compute_ns, self->comm_ns};
    self->compute_ns = times[i].compute_ns;
    self->comm_ns = times[i].comm_ns;
    append(*self);
    ++i;
  }
}

bool Folder::Impl::repeat_in_place(const Event& ev, std::span<const RepeatTiming> times) {
  if (!armed_ || !ev.stats.empty() || pending_count_ != 0 ||
      (refold_after_iteration_ && !refold_quiet_))
    return false;
  Item& loop = top.back();
  if (loop.body.size() != 1) return false;
  Item& b = loop.body[0];
  if (ev.key().packed() != b.key || prev_key != b.key || ev.fields.size() != b.fields.size())
    return false;
  for (std::size_t f = 0; f < b.fields.size(); ++f)
    if (ev.fields[f].field != b.fields[f].first) return false;
  const uint64_t k = times.size();
  loop.reps.step_back(1, k);
  merge_copies(b, ev.fields.data(), has_list_[0], times);
  events += k;
  paths.repeats += k;
  return true;
}

void Folder::Impl::merge_copies(Item& b, const FieldValue* fields, bool has_list,
                                std::span<const RepeatTiming> times) {
  const uint64_t k = times.size();
  for (std::size_t f = 0; f < b.fields.size(); ++f) {
    const FieldValue& fv = fields[f];
    if (has_list && FieldTable::kind(fv.field) == FieldKind::kList) {
      b.fields[f].second.append_n(field_values(fv), k);
    } else {
      b.fields[f].second.push_back_n(fv.scalar, k);
    }
  }
  b.reps.push_back_n(1, k);
  settle_timing(b, rank);
  // A copy without times adds no timing record (add_raw_timing is not
  // called for it); one with either time finds or makes the record. Each
  // copy follows the one before: its predecessor is b itself.
  const bool timed = std::any_of(times.begin(), times.end(), [](const RepeatTiming& rt) {
    return rt.compute_ns >= 0 || rt.comm_ns >= 0;
  });
  if (timed) {
    Timing& t = b.timings[timing_record(b, unpack(b.key))];
    add_repeat_times(t.compute, t.comm, times, rank);
  }
}

void Folder::Impl::materialize() {
  // A feed starts no replay or walk, so this runs at most twice.
  while ((replaying_ && replay_pos_ > 0) || (walking_ && walk_count_ > 0)) {
    if (replaying_ && replay_pos_ > 0) abort_replay();
    if (walking_ && walk_count_ > 0) abort_walk();
  }
  armed_ = false;
  for (std::size_t i = 0; i < pending_count_; ++i) {
    fill_item(top.emplace_back(), pending_[i].ev, pending_[i].pred);
    index_push(top.size() - 1);
  }
  // Kept aside by the fast path, they end up made as the general path makes them.
  paths.fast -= pending_count_;
  paths.general += pending_count_;
  pending_count_ = 0;
}

}  // namespace tracefold
