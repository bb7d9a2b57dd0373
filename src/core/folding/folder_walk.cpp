// Folder: the walk path (an iteration that is alike but not identical to the
// loop's earlier ones, parsed by the loop's structure and folded in place).
#include <algorithm>

#include "folder_impl.hpp"

namespace tracefold {

using namespace folding;

namespace {
template <class F>
bool same_field_ids(const Item& x, const F* fields, std::size_t n) {
  if (n != x.fields.size()) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (fields[i].field != x.fields[i].first) return false;
  return true;
}

bool same_field_ids(const Item& x, const Event& ev) {
  return same_field_ids(x, ev.fields.data(), ev.fields.size());
}

// d[0, n) = s[0, n), reusing d's buffers; most fields are scalars whose
// (empty) lists need no assignment. Returns whether any field is a list
// field (asked again when the event is merged; known here for free).
bool copy_fields(FieldValue* d, const FieldValue* s, std::size_t n) {
  bool any_list = false;
  for (std::size_t i = 0; i < n; ++i) {
    d[i].field = s[i].field;
    d[i].scalar = s[i].scalar;
    if (FieldTable::kind(s[i].field) == FieldKind::kList) {
      any_list = true;
      d[i].list = s[i].list;
    } else if (!d[i].list.empty()) {
      d[i].list.clear();
    }
  }
  return any_list;
}

// One execution's value of a kept field, appended as the general path
// would (a one-value sequence is push_back; a list goes through append).
void push_value(ValueSeq& seq, const FieldValue& fv) {
  if (FieldTable::kind(fv.field) == FieldKind::kList)
    append_list_values(seq, fv.list);
  else
    seq.push_back(fv.scalar);
}

// Folder::Impl::WalkScalar: never a list.
template <class Scalar>
void push_value(ValueSeq& seq, const Scalar& fv) {
  seq.push_back(fv.scalar);
}

}  // namespace

void Folder::Impl::start_walk() {
  if (handed_back_) {
    // The sessions spoiled again after a hand-back: ask for a longer run.
    handed_back_ = false;
    handback_after_ = std::min<uint32_t>(handback_after_ * 2, 1024);
  }
  // The walk changes the loop's values behind the sessions' back: a program
  // learned before it no longer describes the loop.
  have_prev_ = learned_ = false;
  walking_ = true;
  walk_count_ = 0;
  walk_fields_used_ = 0;
  walk_scalars_used_ = 0;
  walk_events_total_ = 0;
  walk_times_.clear();
  walk_ops_.clear();
  walk_stack_.assign(1, WalkFrame{&top.back(), 0, 0});
  walk_prev_key_ = prev_key;
  walk_refold_ = ends_earlier(top.back().last, top.size() - 1);
}

Folder::Impl::WalkResult Folder::Impl::walk_place(uint64_t k, uint32_t index) {
  for (;;) {
    WalkFrame& f = walk_stack_.back();
    Item& loop = *f.loop;
    if (f.pos == loop.body.size()) {
      if (walk_stack_.size() == 1) return WalkResult::kComplete;
      if (k == loop.first) {  // another iteration of this inner loop
        ++f.iters;
        f.pos = 0;
        continue;
      }
      walk_ops_.push_back(WalkOp{&loop, 0, f.iters});
      walk_stack_.pop_back();
      ++walk_stack_.back().pos;
      continue;
    }
    Item& x = loop.body[f.pos];
    if (x.loop) {
      if (x.first == k) {
        // x.first is the first call of x's first item, and so on down: the
        // descent ends at an event with key k.
        walk_stack_.push_back(WalkFrame{&x, 0, 1});
        continue;
      }
    } else if (x.key == k) {
      walk_ops_.push_back(WalkOp{&x, index, kConsumed});
      ++f.pos;
      return WalkResult::kPlaced;
    }
    walk_ops_.push_back(WalkOp{&x, 0, 0});  // passed over: 0 this traversal
    ++f.pos;
  }
}

Folder::Impl::WalkSlot& Folder::Impl::keep_walked(const Event& ev, uint64_t pred, int64_t compute,
                                                  int64_t comm) {
  if (walk_slots_.size() <= walk_count_) {
    walk_slots_.resize(walk_count_ + 1);
    walk_repeat_.resize(walk_count_ + 1);
  }
  const std::size_t n = ev.fields.size();
  WalkSlot& slot = walk_slots_[walk_count_];
  slot.key = ev.key().packed();
  slot.pred = pred;
  slot.compute_ns = compute;
  slot.comm_ns = comm;
  slot.n = static_cast<uint32_t>(n);
  if (walk_scalars_.size() < walk_scalars_used_ + n) walk_scalars_.resize(walk_scalars_used_ + n);
  WalkScalar* d = walk_scalars_.data() + walk_scalars_used_;
  const FieldValue* f = ev.fields.data();
  std::size_t i = 0;
  while (i < n && FieldTable::kind(f[i].field) != FieldKind::kList) {
    d[i].field = f[i].field;
    d[i].scalar = f[i].scalar;
    ++i;
  }
  if (i == n) {
    slot.from = static_cast<uint32_t>(walk_scalars_used_);
    slot.has_list = false;
    walk_scalars_used_ += n;
    return slot;
  }
  if (walk_fields_.size() < walk_fields_used_ + n) walk_fields_.resize(walk_fields_used_ + n);
  slot.from = static_cast<uint32_t>(walk_fields_used_);
  slot.has_list = copy_fields(walk_fields_.data() + walk_fields_used_, f, n);
  walk_fields_used_ += n;
  return slot;
}

const FieldValue* Folder::Impl::slot_fields(const WalkSlot& s) {
  if (s.has_list) return walk_fields_.data() + s.from;
  if (walk_scratch_.size() < s.n) walk_scratch_.resize(s.n);
  scalars_to_fields(walk_scalars_.data() + s.from, s.n, walk_scratch_.data());
  return walk_scratch_.data();
}

Event Folder::Impl::slot_event(const WalkSlot& s, int64_t compute, int64_t comm) {
  Event ev;
  const EventKey k = unpack(s.key);
  ev.op = k.op;
  ev.site = k.site;
  const FieldValue* fields = slot_fields(s);
  ev.fields.assign(fields, fields + s.n);
  ev.compute_ns = compute;
  ev.comm_ns = comm;
  return ev;
}

void Folder::Impl::walk_merge(Item& x, const WalkSlot& s, int64_t compute, int64_t comm) {
  if (s.has_list) return walk_merge_fields(x, walk_fields_.data() + s.from, s, compute, comm);
  walk_merge_fields(x, walk_scalars_.data() + s.from, s, compute, comm);
}

template <class F>
void Folder::Impl::walk_merge_fields(Item& x, const F* fields, const WalkSlot& s, int64_t compute,
                                     int64_t comm) {
  if (same_field_ids(x, fields, s.n)) {
    // merge_event's work: the event's values, its execution, its timing.
    for (std::size_t i = 0; i < s.n; ++i) push_value(x.fields[i].second, fields[i]);
  } else {
    // A call whose fields differ from the node's (a probe that found a
    // message reports its source; one that did not, none): what merge_pair
    // does with the one-event item, without making it while the event's
    // fields are among the node's.
    std::size_t i = 0;
    for (std::size_t f = 0; f < s.n; ++f) {  // both sorted by id
      while (i < x.fields.size() && x.fields[i].first < fields[f].field) ++i;
      if (i == x.fields.size() || x.fields[i].first != fields[f].field)
        return merger.merge_pair(x, make_item(slot_event(s, compute, comm), s.pred));
      ++i;
    }
    std::size_t j = 0;
    for (auto& [id, values] : x.fields) {
      if (j < s.n && fields[j].field == id)
        push_value(values, fields[j++]);
      else
        values.push_back(kAbsent);
    }
  }
  merge_event_execution(x, compute, comm, s.pred);
}

bool Folder::Impl::walk_append(const Event& ev) {
  if (!walking_) return false;
  Item& loop = top.back();
  if (walk_count_ == 0 && ev.key().packed() != loop.first) {
    walking_ = false;  // the loop has ended; nothing kept aside
    return false;
  }
  if (!ev.stats.empty() || walk_count_ >= kMaxWalkEvents) {
    abort_walk();
    return false;
  }
  const std::size_t fields_before = walk_fields_used_, scalars_before = walk_scalars_used_;
  keep_walked(ev, prev_key, ev.compute_ns, ev.comm_ns);
  walk_repeat_[walk_count_] = WalkRepeat{};
  WalkResult r = walk_place(ev.key().packed(), static_cast<uint32_t>(walk_count_));
  if (r == WalkResult::kComplete) {
    walk_fields_used_ = fields_before;  // ev is not kept: it ends the traversal
    walk_scalars_used_ = scalars_before;
    // The body's last items were a loop or passed over: this event ends the
    // iteration. If it does not start the next one, the loop has ended (or
    // the iteration was not one): a short iteration goes the general way,
    // which may fold it better; a longer one (a polling loop's repeats, a
    // data exchange's rounds inside an outer loop) is whole as walked, every
    // item placed or passed over, and is folded in rather than taken again
    // call by call. Taken again, a few hundred irregular calls made the
    // general path build a structure of their own that later iterations did
    // not fit either (exchange_setup: 227 nodes at 4 ranks and 400 rounds,
    // 66 when kept as walked).
    if (ev.key().packed() != loop.first) {
      if (walk_events_total_ < kLongWalk) {
        abort_walk();
        return false;
      }
      commit_walk();
      walking_ = false;
      return false;
    }
    if (!commit_walk()) {
      walking_ = false;
      return false;
    }
    return walk_append(ev);
  }
  ++walk_count_;
  ++walk_events_total_;
  prev_key = ev.key().packed();
  ++events;
  ++paths.walk;
  if (walk_stack_.size() == 1 && walk_stack_[0].pos == loop.body.size() && !commit_walk()) {
    walking_ = false;
    arm();
  }
  return true;
}

bool Folder::Impl::commit_walk() {
  Item& loop = top.back();
  loop.reps.set_back(loop.reps.back() + 1);
  uint64_t shape = 0x243f6a8885a308d3ull;
  for (const WalkOp& op : walk_ops_) {
    Item& x = *op.item;
    if (op.value == kConsumed && walk_repeat_[op.event].count > 0) {
      commit_repeats(x, op.event);
    } else if (op.value == kConsumed) {
      const WalkSlot& slot = walk_slots_[op.event];
      walk_merge(x, slot, slot.compute_ns, slot.comm_ns);
    } else {
      x.reps.push_back(static_cast<int64_t>(op.value));
    }
    // A polynomial hash over the ops, mixed once below: it is only ever
    // compared with the last iteration's.
    shape = shape * kHashBase + (reinterpret_cast<uintptr_t>(&x) ^ (op.value << 1));
  }
  walk_ops_.clear();
  walk_count_ = 0;
  walk_fields_used_ = 0;
  walk_scalars_used_ = 0;
  walk_events_total_ = 0;
  walk_times_.clear();
  walk_stack_.assign(1, WalkFrame{&loop, 0, 0});
  walk_prev_key_ = prev_key;
  shape = mix64(shape);
  alike_walks_ = shape == last_walk_shape_ ? alike_walks_ + 1 : 0;
  last_walk_shape_ = shape;
  if (walk_refold_ && try_fold()) {
    while (try_fold()) {
    }
    return false;
  }
  if (alike_walks_ + 1 >= handback_after_) {
    // Alike iterations in a row: the loop may have turned regular, which the
    // sessions (and then the replay path) fold more cheaply.
    alike_walks_ = 0;
    unclean_streak_ = 0;
    handed_back_ = true;
    return false;
  }
  return true;
}

void Folder::Impl::abort_walk() {
  gave_up_ = true;
  walking_ = false;
  const std::size_t n = walk_count_;
  walk_count_ = 0;
  walk_ops_.clear();
  prev_key = walk_prev_key_;
  events -= walk_events_total_;
  for (std::size_t i = 0; i < n; ++i) {
    if (walk_repeat_[i].count == 0) {
      --paths.walk;
    } else {
      paths.repeats -= walk_repeat_[i].count;
    }
  }
  walk_events_total_ = 0;
  start_recording();
  // No replay or walk starts during the feed (start_session), so nothing
  // is kept aside past it; the buffers are taken out all the same while
  // they are read (and their capacity given back).
  const bool outer = feeding_;
  feeding_ = true;
  std::vector<WalkSlot> slots;
  std::vector<FieldValue> fields;
  std::vector<WalkScalar> scalars;
  std::vector<WalkRepeat> reps;
  std::vector<RepeatTiming> times;
  slots.swap(walk_slots_);
  fields.swap(walk_fields_);
  scalars.swap(walk_scalars_);
  reps.swap(walk_repeat_);
  times.swap(walk_times_);
  walk_fields_used_ = 0;
  walk_scalars_used_ = 0;
  Event e;
  for (std::size_t i = 0; i < n; ++i) {
    const WalkSlot& s = slots[i];
    const EventKey k = unpack(s.key);
    e.op = k.op;
    e.site = k.site;
    if (s.has_list) {
      e.fields.assign(fields.data() + s.from, fields.data() + s.from + s.n);
    } else {
      e.fields.resize(s.n);
      scalars_to_fields(scalars.data() + s.from, s.n, e.fields.data());
    }
    e.compute_ns = s.compute_ns;
    e.comm_ns = s.comm_ns;
    if (reps[i].count == 0) {
      feed(e);
      continue;
    }
    // A run of repeated polls, as append_repeats takes it: copy by copy
    // (the fast path once the poll has a loop of its own) until the copies
    // can be counted in place.
    if (recording_) {
      log_.spoil();
      end_recording();
      arm();
    }
    std::span<const RepeatTiming> rest(times.data() + reps[i].times_from, reps[i].count);
    while (!rest.empty() && !repeat_in_place(e, rest)) {
      e.compute_ns = rest.front().compute_ns;
      e.comm_ns = rest.front().comm_ns;
      feed(e);
      rest = rest.subspan(1);
    }
  }
  feeding_ = outer;
  times.clear();
  if (walk_slots_.empty()) slots.swap(walk_slots_);
  if (walk_fields_.empty()) fields.swap(walk_fields_);
  if (walk_scalars_.empty()) scalars.swap(walk_scalars_);
  if (walk_repeat_.empty()) reps.swap(walk_repeat_);
  if (walk_times_.empty()) times.swap(walk_times_);
}

void Folder::Impl::feed(const Event& ev) {
  if (armed_ && fast_append(ev)) return;
  materialize();
  general_append(ev);
}

bool Folder::Impl::walk_repeats(const Event& ev, std::span<const RepeatTiming> times) {
  if (!walking_ || walk_count_ == 0 || !ev.stats.empty() || walk_stack_.size() < 2) return false;
  WalkFrame& f = walk_stack_.back();
  Item& loop = *f.loop;
  if (loop.body.size() != 1 || f.pos != 1) return false;
  Item& x = loop.body[0];
  const uint64_t k = ev.key().packed();
  if (x.loop || x.key != k || prev_key != k || !same_field_ids(x, ev)) return false;
  keep_walked(ev, k, -1, -1);
  walk_repeat_[walk_count_] = WalkRepeat{walk_times_.size(), times.size()};
  walk_times_.insert(walk_times_.end(), times.begin(), times.end());
  walk_ops_.push_back(WalkOp{&x, static_cast<uint32_t>(walk_count_), kConsumed});
  f.iters += times.size();
  ++walk_count_;
  walk_events_total_ += times.size();
  events += times.size();
  paths.repeats += times.size();
  return true;
}

void Folder::Impl::commit_repeats(Item& x, uint32_t slot) {
  const WalkSlot& s = walk_slots_[slot];
  const WalkRepeat& rep = walk_repeat_[slot];
  const bool same = s.has_list ? same_field_ids(x, walk_fields_.data() + s.from, s.n)
                               : same_field_ids(x, walk_scalars_.data() + s.from, s.n);
  if (!same) {
    // An earlier event of this iteration brought x fields the copies lack
    // (a probe that found a message, before these that found nothing):
    // merged copy by copy, with absent values, as walk_merge does.
    for (uint64_t t = 0; t < rep.count; ++t) {
      const RepeatTiming& rt = walk_times_[rep.times_from + t];
      walk_merge(x, s, rt.compute_ns, rt.comm_ns);
    }
    return;
  }
  merge_copies(x, slot_fields(s), s.has_list, {walk_times_.data() + rep.times_from, rep.count});
}

}  // namespace tracefold
