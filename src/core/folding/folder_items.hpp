// The items a folded sequence is made of, and the Merger that aligns and
// merges two item sequences: the folder's model of a sequence, apart from
// the Folder::Impl that drives it (folder_impl.hpp). Not installed.
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tracefold/folder.hpp"

namespace tracefold {

namespace folding {

// A timing sample kept raw (see Item::raw_more); times < 0: none.
struct RawSample {
  uint64_t pred = 0;  // packed EventKey
  int64_t compute = -1, comm = -1;
};

// One element of a (partly) folded sequence: an event or a loop. `reps` holds
// one value per traversal of the enclosing body: for an event, whether it
// happened (0/1); for a loop, how many iterations it ran.
struct Item {
  bool loop = false;
  uint64_t key = 0;    // event: packed EventKey
  uint64_t first = 0;  // first / last event key in this subtree
  uint64_t last = 0;
  ValueSeq reps;
  std::vector<Item> body;                            // loop only
  std::vector<std::pair<FieldId, ValueSeq>> fields;  // event only, sorted by id
  std::vector<Timing> timings;                       // event only, sorted by pred
  uint32_t timing_hint = 0;                          // timings index timing_record returned last
  // A fresh event keeps its one timing sample raw until it is merged into an
  // existing event: no histogram allocations on the per-event hot path.
  bool raw_timing = false;
  EventKey raw_pred = kStartKey;
  int64_t raw_compute = -1, raw_comm = -1;
  // Further raw samples of an event that has no timing records yet (an
  // inner loop's body item in an iteration being folded): merged into
  // another such event they are appended, not added to histograms that a
  // fold one nesting level up would merge again and free. Its timing is
  // its records' samples plus these and the one above (histograms do not
  // depend on the order of adds and merges); settle_timing adds them.
  std::vector<RawSample> raw_more;
  // Which node of a recorded iteration this is (see "replay" in
  // Folder::Impl); no effect on folding.
  int32_t tag = std::numeric_limits<int32_t>::min();

  bool has_raw_timing() const { return raw_timing || !raw_more.empty(); }
  uint64_t traversals() const { return reps.size(); }
  void refresh_keys() {
    if (!loop) {
      first = last = key;
      return;
    }
    first = body.front().first;
    last = body.back().last;
  }
};

using Items = std::vector<Item>;

inline EventKey unpack(uint64_t k) {
  return EventKey{static_cast<OpId>(k >> 32), static_cast<SiteId>(k & 0xFFFFFFFFu)};
}

inline bool directly_compatible(const Item& a, const Item& b) {
  if (a.loop != b.loop) return false;
  if (!a.loop) return a.key == b.key;
  return a.first == b.first && a.last == b.last;
}

inline void pad_after(Item& it, uint64_t n) {
  it.reps.append_repeated(0, n);
}

inline void pad_before(Item& it, uint64_t n) {
  it.reps.prepend_repeated(0, n);
}

// Absent values for `executions` executions of a field (list fields: one
// length value per execution).
ValueSeq absent_values(uint64_t executions);

// An event item's timing records with its raw samples added (flattening).
std::vector<Timing> settled_timings(const Item& it, int32_t rank);

// b's timing as histograms (raw samples added to its records). Inline: the
// fast and walk paths ask it per event, mostly of an item with none raw.
void settle_raw_timing(Item& b, int32_t rank);
inline void settle_timing(Item& b, int32_t rank) {
  if (b.has_raw_timing()) settle_raw_timing(b, rank);
}

// What merging reuses of the items it merges away: emptied timing records
// (histogram buffers kept) and raw sample buffers.
struct TimingSpares {
  std::vector<Timing> records;
  std::vector<std::vector<RawSample>> raws;
};

// The index of b's timing record after `pred` (settled), made if missing.
std::size_t timing_record(Item& b, EventKey pred);

// Adds one raw timing sample to b (settled).
void add_raw_timing(Item& b, EventKey pred, int64_t compute, int64_t comm, int32_t rank);

// Moves the timing of `s` into `b` (b keeps histograms; s may still be raw;
// s's records are left empty or moved from).
// s's records merged into b's go to `spares` (emptied, buffers kept), and
// records b makes are taken from them. While b has no records and the two
// hold at most kMaxRawSamples raw samples, s's are appended to b's.
inline constexpr std::size_t kMaxRawSamples = 32;
void merge_item_timings(Item& b, Item& s, int32_t rank, TimingSpares* spares = nullptr);

// What seq.append(values) gives, where `values` is a list field's one
// execution as the general path stores it (its length, then its elements),
// without making that sequence for short lists. ValueSeq::append pushes
// each value of a sequence whose runs hold at most kSmallListValues values
// (every run of a sequence that short) and appends a one-value sequence as
// that value repeated; the events of a polling loop's completions carry
// such lists, and a sequence made per event cost a malloc and a free.
// Must equal ValueSeq's own bound (kSmallRunValues in value_seq.cpp): the
// unit test FolderLists.ShortListsAppendAsTheirSequence checks it.
inline constexpr std::size_t kSmallListValues = 8;
// The sequence of one list field's execution: its length, then its elements.
ValueSeq list_values(const std::vector<int64_t>& list);

inline void append_list_values(ValueSeq& seq, const std::vector<int64_t>& list) {
  const std::size_t n = list.size() + 1;
  if (n > kSmallListValues) {
    seq.append(list_values(list));
    return;
  }
  const auto len = static_cast<int64_t>(list.size());
  if (std::all_of(list.begin(), list.end(), [len](int64_t x) { return x == len; })) {
    seq.append_repeated(len, n);
    return;
  }
  seq.push_back(len);
  for (int64_t x : list) seq.push_back(x);
}

// merge_pair of two events with the same field ids: b's history, then s's.
void merge_same_fields(Item& b, Item& s, int32_t rank, TimingSpares* spares = nullptr);

constexpr int32_t kUntagged = std::numeric_limits<int32_t>::min();

// One value operation of the general path, on tagged nodes (tag >= 0: an
// item made during the recorded iteration; tag < 0: -1 - the preorder index
// of an item of the loop the iteration folds into).
struct FoldOp {
  // kDirectEvent only in a compiled program (Folder::Impl::compile_program):
  // a kNewEvent into a slot whose only use is a kMergeEvent into a real node.
  enum Kind : uint8_t { kNewEvent, kNewLoop, kSetBack, kMergeEvent, kMergeLoop, kDirectEvent };
  Kind kind = kNewEvent;
  int32_t a = 0, b = 0;  // kNewEvent: slot, event index; merges: into, from;
                         // kDirectEvent: real node, event index
  bool operator==(const FoldOp&) const = default;
};

// The value operations of one recorded iteration. `clean` turns false (and
// recording stops) at any operation the replay does not reproduce.
struct OpLog {
  bool active = false;
  bool clean = true;
  std::vector<FoldOp> ops;
  void add(FoldOp::Kind k, int32_t a, int32_t b = 0) {
    if (!active) return;
    if (a == kUntagged || b == kUntagged) return spoil();
    ops.push_back(FoldOp{k, a, b});
  }
  void spoil() {
    active = false;
    clean = false;
  }
};

class Merger {
 public:
  Merger(std::size_t max_cells, int32_t rank) : max_cells_(max_cells), rank_(rank) {}
  OpLog* log = nullptr;
  // Set (never cleared here) when a merge_seq gives a sequence whose calls
  // and loop structure differ from B's: an item of S kept beside B's, a run
  // of B wrapped into a loop, or S kept whole. A merge that leaves it false
  // changed only values and counts, so B's flattened calls still hold.
  bool reshaped = false;

  // How two sequences line up (see align()).
  enum class Step : uint8_t { kSkipB, kSkipS, kPair, kLoopBGroupS, kGroupBLoopS };
  struct Plan {
    std::vector<std::pair<std::size_t, std::size_t>> cells;  // (i, j) where each step starts
    std::vector<Step> steps;
    std::vector<std::size_t> group_end;  // end index of grouped run (for group steps)
    std::size_t score = 0;
  };

  // Merges two items known to be directly compatible: S's history follows B's.
  void merge_pair(Item& b, Item&& s);

  // Merges body histories: the result replays B's traversals, then S's.
  Items merge_seq(Items&& B, Items&& S);
  // merge_seq when the two pair item by item (directly_compatible, same
  // length, neither empty): S's items are merged into B's where they are,
  // left moved from. The folder merges an iteration straight from its top
  // level this way; moving it into a sequence of its own first cost a move
  // and a destruction of every item.
  void merge_direct(std::span<Item> B, std::span<Item> S) {
    for (std::size_t i = 0; i < B.size(); ++i) merge_pair(B[i], std::move(S[i]));
  }

  // Longest-common-subsequence alignment of B and S. A loop in one sequence
  // may align with a run of the other whose first and last calls match the
  // loop's (that run then counts as one iteration). Returns false if the
  // alignment table would exceed the cap.
  bool align(std::span<const Item> B, std::span<const Item> S, Plan& plan);
  // Whether align() takes sequences of these lengths (its table's cap).
  bool fits(std::size_t n, std::size_t m) const { return (n + 1) * (m + 1) <= max_cells_; }

  Items apply(Items&& B, Items&& S, const Plan& plan);

  // A plan whose buffers outlive one alignment, for callers outside
  // merge_seq (the folder's iteration checks); align() refills it.
  Plan& scratch_plan() { return scratch_plan_; }

  using FieldSeqs = std::vector<std::pair<FieldId, ValueSeq>>;
  // An empty field vector for a new event item: one given back by a merge
  // when there is one. The general path makes an item per event and merges
  // most of them into an earlier one at once; made and freed each time, its
  // vector and the sequences' buffers cost a malloc/free pair apiece.
  // One with `n` fields is taken if a recent spare has that many: resizing
  // another freed the buffers of the sequences cut off (and a later item
  // allocated them again), a malloc/free pair per field on codes whose
  // calls alternate between field counts (a poll after a send).
  FieldSeqs take_fields(std::size_t n) {
    if (spare_fields_.empty()) return {};
    const std::size_t last = spare_fields_.size() - 1;
    const std::size_t stop = last >= kFieldsLook ? last - kFieldsLook : 0;
    for (std::size_t i = last + 1; i-- > stop;) {
      if (spare_fields_[i].size() != n) continue;
      if (i != last) std::swap(spare_fields_[i], spare_fields_[last]);
      break;
    }
    FieldSeqs f = std::move(spare_fields_.back());
    spare_fields_.pop_back();
    return f;
  }
  // The fields of an event item merged away; kept (sequences emptied, small
  // buffers kept) while there are few spares.
  void give_fields(FieldSeqs&& f);

  // An empty item vector for a new loop's body or a merge's result: the
  // buffer of a loop body merged away when there is one. The general path
  // makes a loop for each inner loop of each iteration in the tail and
  // merges it into the enclosing loop's body item by item at the end of
  // the iteration: a malloc/free pair apiece otherwise.
  Items take_items() {
    if (spare_items_.empty()) return {};
    Items v = std::move(spare_items_.back());
    spare_items_.pop_back();
    return v;
  }
  // The items of a loop merged away (moved from): destroyed, the buffer
  // kept while there are few spares.
  void give_items(Items&& v) {
    constexpr std::size_t kMaxSpare = 64, kMaxItems = 64;
    if (v.capacity() == 0 || spare_items_.size() >= kMaxSpare || v.capacity() > kMaxItems) return;
    v.clear();
    spare_items_.push_back(std::move(v));
  }

 private:
  // A one-iteration loop around items[from, to): changes no order or count.
  Item wrap(Items& items, std::size_t from, std::size_t to, uint64_t traversals);

  std::size_t max_cells_;
  int32_t rank_;
  std::vector<FieldSeqs> spare_fields_;
  std::vector<Items> spare_items_;
  static constexpr std::size_t kFieldsLook = 8;  // spares take_fields looks at
  // Timing records of events merged away, emptied: a record made for a
  // new predecessor takes one and its histograms allocate nothing.
  TimingSpares spare_timings_;
  // merge_seq's plans by depth (it recurses through loops' bodies), kept
  // so that an alignment allocates nothing once they are warm; a deque, so
  // a deeper one added keeps the shallower ones in place.
  std::deque<Plan> plans_;
  std::size_t plan_depth_ = 0;
  Plan scratch_plan_;
  std::vector<uint32_t> score_;
  std::vector<Step> choice_;
  std::vector<std::size_t> gend_;
};

// The loop structure as text (Folder::structure).
void describe(const Items& items, std::string& out);

}  // namespace folding

}  // namespace tracefold
