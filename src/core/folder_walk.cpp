// Folder: the walk path (an iteration that is alike but not identical to the
// loop's earlier ones, parsed by the loop's structure and folded in place).
#include <algorithm>

#include "folder_impl.hpp"

namespace tracefold {

using namespace folding;

namespace {
bool same_field_ids(const Item& x, const Event& ev) {
  if (ev.fields.size() != x.fields.size()) return false;
  for (std::size_t i = 0; i < x.fields.size(); ++i)
    if (ev.fields[i].field != x.fields[i].first) return false;
  return true;
}

// dst = src, reusing dst's buffers; most fields are scalars whose (empty)
// lists need no assignment. Returns whether any field is a list field
// (asked again when the event is merged; known here for free).
bool copy_fields(std::vector<FieldValue>& dst, const std::vector<FieldValue>& src) {
  const std::size_t n = src.size();
  if (dst.size() != n) dst.resize(n);
  FieldValue* d = dst.data();
  const FieldValue* s = src.data();
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
  walk_events_total_ = 0;
  walk_times_.clear();
  walk_ops_.clear();
  walk_stack_.assign(1, WalkFrame{&top.back(), 0, 0});
  walk_prev_key_ = prev_key;
  walk_refold_ = ends_earlier(top.back().last, top.size() - 1);
}

Folder::Impl::WalkResult Folder::Impl::walk_place(const Event& ev, uint32_t index) {
  const uint64_t k = ev.key().packed();
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

void Folder::Impl::walk_merge(Item& x, const Event& ev, uint64_t pred, bool has_list) {
  if (same_field_ids(x, ev)) return merge_event(x, ev, pred, has_list);
  // A call whose fields differ from the node's (a probe that found a message
  // reports its source; one that did not, none): what merge_pair does with
  // the one-event item, without making it while the event's fields are
  // among the node's.
  std::size_t i = 0;
  for (const FieldValue& fv : ev.fields) {  // both sorted by id
    while (i < x.fields.size() && x.fields[i].first < fv.field) ++i;
    if (i == x.fields.size() || x.fields[i].first != fv.field)
      return merger.merge_pair(x, make_item(ev, pred));
    ++i;
  }
  std::size_t j = 0;
  for (auto& [id, values] : x.fields) {
    if (j < ev.fields.size() && ev.fields[j].field == id) {
      const FieldValue& fv = ev.fields[j++];
      if (FieldTable::kind(fv.field) == FieldKind::kList)
        append_list_values(values, fv.list);
      else
        values.push_back(fv.scalar);
    } else {
      values.push_back(kAbsent);
    }
  }
  x.reps.push_back(1);
  settle_timing(x, rank);
  if (ev.compute_ns >= 0 || ev.comm_ns >= 0)
    add_raw_timing(x, unpack(pred), ev.compute_ns, ev.comm_ns, rank);
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
  if (walk_events_.size() <= walk_count_) {
    walk_events_.resize(walk_count_ + 1);
    walk_preds_.resize(walk_count_ + 1);
    walk_repeat_.resize(walk_count_ + 1);
    walk_has_list_.resize(walk_count_ + 1);
  }
  walk_repeat_[walk_count_] = WalkRepeat{};
  Event& slot = walk_events_[walk_count_];
  slot.op = ev.op;
  slot.site = ev.site;
  walk_has_list_[walk_count_] = copy_fields(slot.fields, ev.fields);
  slot.compute_ns = ev.compute_ns;
  slot.comm_ns = ev.comm_ns;
  walk_preds_[walk_count_] = prev_key;
  WalkResult r = walk_place(slot, static_cast<uint32_t>(walk_count_));
  if (r == WalkResult::kComplete) {
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
      walk_merge(x, walk_events_[op.event], walk_preds_[op.event], walk_has_list_[op.event]);
    } else {
      x.reps.push_back(static_cast<int64_t>(op.value));
    }
    shape = mix64(shape * kHashBase + reinterpret_cast<uintptr_t>(&x) + op.value);
  }
  walk_ops_.clear();
  walk_count_ = 0;
  walk_events_total_ = 0;
  walk_times_.clear();
  walk_stack_.assign(1, WalkFrame{&loop, 0, 0});
  walk_prev_key_ = prev_key;
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
  std::vector<Event> evs;
  std::vector<WalkRepeat> reps;
  std::vector<RepeatTiming> times;
  evs.swap(walk_events_);
  reps.swap(walk_repeat_);
  times.swap(walk_times_);
  for (std::size_t i = 0; i < n; ++i) {
    Event& e = evs[i];
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
  if (walk_events_.empty()) evs.swap(walk_events_);
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
  if (walk_events_.size() <= walk_count_) {
    walk_events_.resize(walk_count_ + 1);
    walk_preds_.resize(walk_count_ + 1);
    walk_repeat_.resize(walk_count_ + 1);
    walk_has_list_.resize(walk_count_ + 1);
  }
  Event& slot = walk_events_[walk_count_];
  slot.op = ev.op;
  slot.site = ev.site;
  walk_has_list_[walk_count_] = copy_fields(slot.fields, ev.fields);
  slot.compute_ns = slot.comm_ns = -1;
  walk_preds_[walk_count_] = k;
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
  Event& ev = walk_events_[slot];
  const WalkRepeat& rep = walk_repeat_[slot];
  if (!same_field_ids(x, ev)) {
    // An earlier event of this iteration brought x fields the copies lack
    // (a probe that found a message, before these that found nothing):
    // merged copy by copy, with absent values, as walk_merge does.
    for (uint64_t t = 0; t < rep.count; ++t) {
      ev.compute_ns = walk_times_[rep.times_from + t].compute_ns;
      ev.comm_ns = walk_times_[rep.times_from + t].comm_ns;
      walk_merge(x, ev, x.key, walk_has_list_[slot]);
    }
    return;
  }
  merge_copies(x, ev, walk_has_list_[slot], {walk_times_.data() + rep.times_from, rep.count});
}

}  // namespace tracefold
