#include "tracefold/folder.hpp"

#include <algorithm>

#include "folder_impl.hpp"

namespace tracefold {

using namespace folding;

namespace {
// A list's values (its length, then its elements) pushed onto v.
void push_list(ValueSeq& v, const std::vector<int64_t>& list) {
  v.push_back(static_cast<int64_t>(list.size()));
  for (int64_t x : list) v.push_back(x);
}

// The values of one field on one execution, into an empty sequence.
void fill_values(ValueSeq& v, const FieldValue& fv) {
  if (FieldTable::kind(fv.field) == FieldKind::kList)
    push_list(v, fv.list);
  else
    v.push_back(fv.scalar);
}
}  // namespace

ValueSeq folding::list_values(const std::vector<int64_t>& list) {
  ValueSeq v;
  push_list(v, list);
  return v;
}

ValueSeq Folder::Impl::field_values(const FieldValue& fv) {
  ValueSeq v;
  fill_values(v, fv);
  return v;
}

Item Folder::Impl::make_item(const Event& ev, uint64_t pred) {
  Item it;
  fill_item(it, ev, pred);
  return it;
}

// Flattened: one call per event of the general path.
[[gnu::flatten]] void Folder::Impl::fill_item(Item& it, const Event& ev, uint64_t pred) {
  it.key = ev.key().packed();
  it.first = it.last = it.key;
  it.reps.push_back(1);  // ValueSeq::repeated(1, 1), made in place
  // Filled in place: no sequence made and moved per field.
  it.fields = merger.take_fields(ev.fields.size());
  it.fields.resize(ev.fields.size());
  for (std::size_t i = 0; i < ev.fields.size(); ++i) {
    it.fields[i].first = ev.fields[i].field;
    fill_values(it.fields[i].second, ev.fields[i]);
  }
  if (!ev.stats.empty()) {
    Timing t;
    t.pred = unpack(pred);
    if (ev.compute_ns >= 0) t.compute.add(ev.compute_ns, rank);
    if (ev.comm_ns >= 0) t.comm.add(ev.comm_ns, rank);
    for (const auto& [name, value] : ev.stats) {
      Histogram h;
      h.add(value, rank);
      t.stats.emplace_back(name, std::move(h));
    }
    it.timings.push_back(std::move(t));
  } else if (ev.compute_ns >= 0 || ev.comm_ns >= 0) {
    it.raw_timing = true;
    it.raw_pred = unpack(pred);
    it.raw_compute = ev.compute_ns;
    it.raw_comm = ev.comm_ns;
  }
}

void Folder::Impl::append(const Event& ev) {
  // The paths start by asking these flags; asked here, most events make
  // one call, not two.
  if (armed_ && fast_append(ev)) return;
  if (replaying_ && replay_append(ev)) return;
  if (walking_ && walk_append(ev)) return;
  // A replay or walk that gave up sent its events through the general path,
  // whose last step may have set up a path for the next event: this one.
  // (A path set up just now gives up with no events; the depth is bounded
  // all the same.)
  if (gave_up_) {
    gave_up_ = false;
    if ((armed_ || replaying_ || walking_) && redispatch_depth_ < 3) {
      ++redispatch_depth_;
      append(ev);
      --redispatch_depth_;
      return;
    }
  }
  materialize();
  general_append(ev);
}

void Folder::Impl::general_append(const Event& ev) {
  if (recording_) record_event(ev);
  // Made where it stays: an Item moved into top and then destroyed cost
  // about as much as filling its fields.
  Item& it = top.emplace_back();
  fill_item(it, ev, prev_key);
  if (recording_) {
    it.tag = next_slot_++;
    log_.add(FoldOp::kNewEvent, it.tag, static_cast<int32_t>(rec_.keys.size() - 1));
  }
  prev_key = it.key;
  ++events;
  ++paths.general;
  index_push(top.size() - 1);
  while (try_fold()) {
  }
  if (recording_ && (!log_.clean || top.size() <= session_n0_)) end_recording();
  arm();
}

std::size_t Folder::Impl::flatten(const Item& it, std::vector<const Item*>& heads,
                                  std::vector<Node>& out) {
  if (!it.loop) {
    Node node;
    node.key = unpack(it.key);
    node.ranks = Ranklist::single(rank);
    for (const Item* h : heads) {
      LoopLevel level;
      level.iters = Elastic::of(h->reps, rank);
      node.loops.push_back(std::move(level));
    }
    heads.clear();
    node.count = Elastic::of(it.reps, rank);
    for (const auto& [f, v] : it.fields) node.fields.emplace_back(f, Elastic::of(v, rank));
    node.timings = it.has_raw_timing() ? settled_timings(it, rank) : it.timings;
    out.push_back(std::move(node));
    return 1;
  }
  const std::size_t head_index = out.size();
  const std::size_t level = heads.size();
  heads.push_back(&it);
  std::size_t members = 0;
  for (const Item& child : it.body) members += flatten(child, heads, out);
  out[head_index].loops[level].members =
      Elastic::of(ValueSeq::repeated(static_cast<int64_t>(members), it.reps.size()), rank);
  return members;
}

Folder::Folder(int32_t rank, FoldOptions options)
    : impl_(std::make_unique<Impl>(rank, std::move(options))) {}
Folder::~Folder() = default;
Folder::Folder(Folder&&) noexcept = default;
Folder& Folder::operator=(Folder&&) noexcept = default;

void Folder::append(const Event& event) {
  impl_->append(event);
}
void Folder::append_repeats(const Event& event, std::span<const RepeatTiming> times) {
  impl_->append_repeats(event, times, nullptr);
}
void Folder::append_repeats(Event& event, std::span<const RepeatTiming> times) {
  impl_->append_repeats(event, times, &event);
}
uint64_t Folder::events() const {
  return impl_->events;
}
FoldPathCounts Folder::path_counts() const {
  return impl_->paths;
}
std::size_t Folder::top_level_size() const {
  impl_->materialize();
  return impl_->top.size();
}

std::string Folder::structure() const {
  impl_->materialize();
  std::string out;
  describe(impl_->top, out);
  return out;
}

Trace Folder::finish(int32_t world_size, const SiteTable& sites, const CommTable& comms) const {
  Trace t;
  t.world_size = world_size;
  t.sites = sites;
  t.comms = comms;
  impl_->materialize();
  std::vector<const Item*> heads;
  for (const Item& it : impl_->top) impl_->flatten(it, heads, t.nodes);
  apply_histogram_threshold(t, impl_->options.histogram_threshold, impl_->options.histogram_fields);
  return t;
}

}  // namespace tracefold
