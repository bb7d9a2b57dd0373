// Folder: the replay path (an iteration of a loop with inner loops folded by
// replaying the value operations the general path made on the previous one).
#include "folder_impl.hpp"

namespace tracefold {

using namespace folding;

void Folder::Impl::tag_tree(Item& it, int32_t& next) {
  it.tag = -1 - next++;
  for (Item& c : it.body) tag_tree(c, next);
}

void Folder::Impl::collect_tree(Item& it, std::vector<Item*>& out) {
  out.push_back(&it);
  for (Item& c : it.body) collect_tree(c, out);
}

void Folder::Impl::start_session(bool follows_clean) {
  if (!follows_clean) have_prev_ = learned_ = false;
  session_n0_ = top.size();
  // While a given-up replay or walk feeds its events back (feeding_), no
  // path that keeps events aside may start: the feed appends past it.
  if (!feeding_ && learned_ && prev_.n0 == session_n0_) {
    replaying_ = true;
    replay_pos_ = 0;
    replay_prev_key_ = prev_key;
    return;
  }
  learned_ = false;
  if (!feeding_ && walk_allowed()) return start_walk();
  // The walk's start depends on the sessions' spoils: only without it can
  // they stop (see kSpoiledSessions).
  if (!options.elastic_iterations && events < no_session_until_) return;
  start_recording();
}

void Folder::Impl::start_recording() {
  recording_ = true;
  log_.active = true;
  log_.clean = true;
  // A spoiled session leaves its operations in the log; kept, they would make
  // this session differ from the next and delay learning by one iteration.
  log_.ops.clear();
  rec_.n0 = session_n0_;
  rec_.keys.clear();
  rec_.field_end.clear();
  rec_.fields.clear();
  next_slot_ = 0;
  int32_t next = 0;
  tag_tree(top[session_n0_ - 1], next);
  read_chain(chain_before_);
}

void Folder::Impl::read_chain(std::vector<uint8_t>& out) const {
  // As try_fold walks it from the loop.
  out.clear();
  for (const Item* it = &top[session_n0_ - 1];; it = &it->body.back()) {
    const bool more = it->reps.back() > 0;
    out.push_back(more);
    if (!more || !it->body.back().loop) return;
  }
}

void Folder::Impl::record_event(const Event& ev) {
  if (!ev.stats.empty() || rec_.keys.size() >= kMaxSessionEvents) log_.spoil();
  rec_.keys.push_back(ev.key().packed());
  for (const FieldValue& fv : ev.fields) rec_.fields.push_back(fv.field);
  rec_.field_end.push_back(static_cast<uint32_t>(rec_.fields.size()));
}

void Folder::Impl::end_recording() {
  recording_ = false;
  const bool clean = log_.clean && top.size() == session_n0_;
  log_.active = false;
  learned_ = false;
  unclean_streak_ = clean ? 0 : unclean_streak_ + 1;
  if (clean) {
    skip_run_ = kFirstSkip;
  } else if (unclean_streak_ >= kSpoiledSessions) {
    no_session_until_ = events + skip_run_;
    skip_run_ = std::min(2 * skip_run_, kMaxSkip);
  }
  if (clean) handed_back_ = false;  // the hand-back worked
  if (!clean) {
    have_prev_ = false;
    return;
  }
  rec_.slots = next_slot_;
  rec_.ops.swap(log_.ops);
  log_.ops.clear();
  read_chain(chain_after_);
  const bool again = have_prev_ && rec_ == prev_;
  if (again || chain_after_ == chain_before_) {
    if (!again) std::swap(rec_, prev_);
    have_prev_ = true;
    learned_ = find_timing_homes();
    if (learned_) compile_program();
    real_.clear();
    collect_tree(top[session_n0_ - 1], real_);
    if (slots_.size() < static_cast<std::size_t>(prev_.slots))
      slots_.resize(static_cast<std::size_t>(prev_.slots));
  } else {
    std::swap(rec_, prev_);
    have_prev_ = true;
  }
  follows_clean_ = true;
}

bool Folder::Impl::replay_append(const Event& ev) {
  if (!replaying_) return false;
  const std::size_t i = replay_pos_;
  const std::size_t f0 = i == 0 ? 0 : prev_.field_end[i - 1];
  const std::size_t nf = ev.fields.size();
  if (!ev.stats.empty() || ev.key().packed() != prev_.keys[i] || nf != prev_.field_end[i] - f0) {
    abort_replay();
    return false;
  }
  if (replay_events_.size() <= i) {
    replay_events_.resize(i + 1);
    changed_.resize(i + 1, 1);
  }
  // One pass checks the field ids against the program's, copies the values
  // over the previous iteration's (reusing their buffers) and notes whether
  // any changed. A departure leaves slot i half written: abort_replay uses
  // slots [0, i) only, and the program is compiled afresh before the next
  // replay, which rebuilds every slot tree its first time.
  Event& slot = replay_events_[i];
  std::vector<FieldValue>& dst = slot.fields;
  const FieldId* ids = prev_.fields.data() + f0;
  bool changed = dst.size() != nf;
  if (changed) dst.resize(nf);
  const FieldValue* src = ev.fields.data();
  FieldValue* d = dst.data();
  if (!event_has_list_[i]) {
    // Scalar fields only (the program's ids, checked here): their lists are
    // never read, so neither compared nor copied. The ids stored are
    // compared only while the program stays (last_fields_valid_), and then
    // they are the program's: a stale id needs no comparison either.
    for (std::size_t f = 0; f < nf; ++f) {
      const FieldValue& s = src[f];
      if (s.field != ids[f]) {
        abort_replay();
        return false;
      }
      changed |= d[f].scalar != s.scalar;
      d[f].field = s.field;
      d[f].scalar = s.scalar;
    }
  } else {
    for (std::size_t f = 0; f < nf; ++f) {
      const FieldValue& s = src[f];
      if (s.field != ids[f]) {
        abort_replay();
        return false;
      }
      // Stored whether or not they changed: no branch on the values.
      changed |= (d[f].field != s.field) | (d[f].scalar != s.scalar);
      d[f].field = s.field;
      d[f].scalar = s.scalar;
      if ((s.list.data() != nullptr || d[f].list.data() != nullptr) && d[f].list != s.list) {
        changed = true;
        d[f].list = s.list;
      }
    }
  }
  changed_[i] = changed;
  slot.op = ev.op;
  slot.site = ev.site;
  slot.compute_ns = ev.compute_ns;
  slot.comm_ns = ev.comm_ns;
  prev_key = prev_.keys[i];
  ++events;
  ++paths.replay;
  if (++replay_pos_ == prev_.keys.size()) {
    run_program();
    replay_pos_ = 0;
    replay_prev_key_ = prev_key;
  }
  return true;
}

void Folder::Impl::abort_replay() {
  gave_up_ = true;
  replaying_ = false;
  const std::size_t n = replay_pos_;
  replay_pos_ = 0;
  prev_key = replay_prev_key_;
  events -= n;
  paths.replay -= n;
  learned_ = false;  // prev_ stays: the session before this one
  start_recording();
  const bool outer = feeding_;
  feeding_ = true;
  for (std::size_t i = 0; i < n; ++i) general_append(replay_events_[i]);
  feeding_ = outer;
}

bool Folder::Impl::find_timing_homes() {
  std::vector<int32_t> into(static_cast<std::size_t>(prev_.slots), kUntagged);
  home_.assign(prev_.keys.size(), kUntagged);
  for (const FoldOp& op : prev_.ops) {
    if (op.kind == FoldOp::kNewEvent) home_[static_cast<std::size_t>(op.b)] = op.a;
    if (op.kind == FoldOp::kMergeEvent) {
      if (op.b < 0 || into[static_cast<std::size_t>(op.b)] != kUntagged) return false;
      into[static_cast<std::size_t>(op.b)] = op.a;
    }
  }
  for (int32_t& h : home_) {
    for (std::size_t guard = 0; h >= 0 && guard <= into.size(); ++guard)
      h = into[static_cast<std::size_t>(h)];
    if (h >= 0 || h == kUntagged) return false;
  }
  return true;
}

void Folder::Impl::compile_program() {
  const auto slots = static_cast<std::size_t>(prev_.slots);
  std::vector<int32_t> uses(slots, 0), made_from(slots, -1), merged_into(slots, kUntagged);
  auto use = [&](int32_t tag) {
    if (tag >= 0) ++uses[static_cast<std::size_t>(tag)];
  };
  for (const FoldOp& op : prev_.ops) {
    use(op.a);
    if (op.kind == FoldOp::kMergeEvent || op.kind == FoldOp::kMergeLoop) use(op.b);
    if (op.kind == FoldOp::kNewEvent) made_from[static_cast<std::size_t>(op.a)] = op.b;
    if (op.kind == FoldOp::kMergeEvent && op.b >= 0)
      merged_into[static_cast<std::size_t>(op.b)] = op.a;
  }
  auto scalar_only = [&](int32_t event) {
    const auto i = static_cast<std::size_t>(event);
    for (std::size_t f = i == 0 ? 0 : prev_.field_end[i - 1]; f < prev_.field_end[i]; ++f)
      if (FieldTable::kind(prev_.fields[f]) == FieldKind::kList) return false;
    return true;
  };
  auto direct = [&](int32_t slot) {
    if (slot < 0) return false;
    const auto s = static_cast<std::size_t>(slot);
    return uses[s] == 2 && made_from[s] >= 0 && merged_into[s] != kUntagged && merged_into[s] < 0 &&
           scalar_only(made_from[s]);
  };
  event_has_list_.assign(prev_.keys.size(), false);
  for (std::size_t i = 0; i < prev_.keys.size(); ++i)
    event_has_list_[i] = !scalar_only(static_cast<int32_t>(i));
  program_.clear();
  for (const FoldOp& op : prev_.ops) {
    if (op.kind == FoldOp::kNewEvent && direct(op.a)) continue;
    if (op.kind == FoldOp::kMergeEvent && direct(op.b)) {
      program_.push_back(
          FoldOp{FoldOp::kDirectEvent, op.a, made_from[static_cast<std::size_t>(op.b)]});
      continue;
    }
    program_.push_back(op);
  }
  find_slot_trees(slots);
}

void Folder::Impl::find_slot_trees(std::size_t slots) {
  std::vector<int32_t> parent(slots);
  for (std::size_t i = 0; i < slots; ++i) parent[i] = static_cast<int32_t>(i);
  auto root = [&](int32_t x) {
    while (parent[static_cast<std::size_t>(x)] != x)
      x = parent[static_cast<std::size_t>(x)] =
          parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    return x;
  };
  std::vector<bool> event_slot(slots, false);
  for (const FoldOp& op : program_) {
    if (op.kind == FoldOp::kNewEvent) event_slot[static_cast<std::size_t>(op.a)] = true;
    if (op.kind == FoldOp::kMergeEvent && op.a >= 0 && op.b >= 0)
      parent[static_cast<std::size_t>(root(op.a))] = root(op.b);
  }
  const std::size_t n = program_.size();
  std::vector<int64_t> last_touch(slots, -1), real_merge(slots, -1);
  std::vector<int32_t> real_merges(slots, 0);
  std::vector<bool> rebuild(slots, false);
  op_tree_.assign(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    const FoldOp& op = program_[k];
    auto touch = [&](int32_t tag) {
      if (tag < 0) return;
      const auto t = static_cast<std::size_t>(root(tag));
      if (!event_slot[static_cast<std::size_t>(tag)])
        rebuild[t] = true;  // a loop slot in an event tree
      last_touch[t] = static_cast<int64_t>(k);
    };
    switch (op.kind) {
      case FoldOp::kNewEvent:
        touch(op.a);
        op_tree_[k] = root(op.a);
        break;
      case FoldOp::kMergeEvent:
        touch(op.a);
        touch(op.b);
        if (op.a >= 0) {
          op_tree_[k] = root(op.a);
        } else if (op.b >= 0) {
          const auto t = static_cast<std::size_t>(root(op.b));
          ++real_merges[t];
          real_merge[t] = static_cast<int64_t>(k);
        }
        break;
      case FoldOp::kSetBack:
        if (op.a >= 0 && event_slot[static_cast<std::size_t>(op.a)])
          rebuild[static_cast<std::size_t>(root(op.a))] = true;
        break;
      default:
        break;
    }
  }
  tree_rebuild_.assign(slots, 0);
  for (std::size_t t = 0; t < slots; ++t)
    tree_rebuild_[t] =
        rebuild[t] || real_merges[t] > 1 || (real_merges[t] == 1 && last_touch[t] != real_merge[t]);
  event_tree_.assign(prev_.keys.size(), -1);
  for (const FoldOp& op : program_)
    if (op.kind == FoldOp::kNewEvent) event_tree_[static_cast<std::size_t>(op.b)] = root(op.a);
  last_fields_valid_ = false;
}

void Folder::Impl::mark_dirty_trees() {
  dirty_ = tree_rebuild_;
  if (!last_fields_valid_) {
    dirty_.assign(dirty_.size(), 1);
    last_fields_valid_ = true;
    return;
  }
  for (std::size_t i = 0; i < event_tree_.size(); ++i) {
    const int32_t t = event_tree_[i];
    if (t >= 0 && changed_[i]) dirty_[static_cast<std::size_t>(t)] = 1;
  }
}

void Folder::Impl::reset_event(Item& s, const Event& ev, bool has_list) {
  s.fields.resize(ev.fields.size());
  for (std::size_t i = 0; i < ev.fields.size(); ++i) {
    const FieldValue& fv = ev.fields[i];
    auto& [id, values] = s.fields[i];
    const bool list = has_list && FieldTable::kind(fv.field) == FieldKind::kList;
    id = fv.field;
    values.clear();
    if (list) {
      values.push_back(static_cast<int64_t>(fv.list.size()));
      for (int64_t x : fv.list) values.push_back(x);
    } else {
      values.push_back(fv.scalar);
    }
  }
  s.reps.clear();
  s.reps.push_back(1);
}

void Folder::Impl::run_program() {
  mark_dirty_trees();
  for (std::size_t k = 0; k < program_.size(); ++k) {
    const FoldOp& op = program_[k];
    switch (op.kind) {
      case FoldOp::kDirectEvent: {
        Item& b = node(op.a);
        const Event& ev = replay_events_[static_cast<std::size_t>(op.b)];
        for (std::size_t i = 0; i < b.fields.size(); ++i)
          b.fields[i].second.append_repeated(ev.fields[i].scalar, 1);
        b.reps.append_repeated(1, 1);
        break;
      }
      case FoldOp::kNewEvent: {
        if (!tree_dirty(op_tree_[k])) break;
        const auto event = static_cast<std::size_t>(op.b);
        reset_event(node(op.a), replay_events_[event], event_has_list_[event]);
        break;
      }
      case FoldOp::kNewLoop: {
        Item& s = node(op.a);
        s.reps.clear();
        s.reps.append_repeated(2, 1);
        break;
      }
      case FoldOp::kSetBack: {
        Item& t = node(op.a);
        t.reps.set_back(t.reps.back() + 1);
        break;
      }
      case FoldOp::kMergeEvent: {
        Item& b = node(op.a);
        const Item& from = node(op.b);
        if (op.a >= 0 && !tree_dirty(op_tree_[k])) break;
        for (std::size_t i = 0; i < b.fields.size(); ++i)
          b.fields[i].second.append(from.fields[i].second);
        b.reps.append(from.reps);
        break;
      }
      case FoldOp::kMergeLoop:
        node(op.a).reps.append(node(op.b).reps);
        break;
    }
  }
  timing_at_.resize(home_.size(), 0);
  for (std::size_t i = 0; i < home_.size(); ++i) {
    const Event& ev = replay_events_[i];
    if (ev.compute_ns < 0 && ev.comm_ns < 0) continue;  // brings no timing
    Item& h = node(home_[i]);
    if (h.has_raw_timing()) settle_timing(h, rank);
    const EventKey pred = unpack(i == 0 ? replay_prev_key_ : prev_.keys[i - 1]);
    uint32_t& at = timing_at_[i];
    if (at >= h.timings.size() || !(h.timings[at].pred == pred))
      at = static_cast<uint32_t>(timing_record(h, pred));
    Timing& t = h.timings[at];
    if (ev.compute_ns >= 0) t.compute.add(ev.compute_ns, rank);
    if (ev.comm_ns >= 0) t.comm.add(ev.comm_ns, rank);
  }
}

}  // namespace tracefold
