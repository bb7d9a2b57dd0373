// Internals of Folder (folder*.cpp): Folder::Impl, which drives the items
// and the Merger of folder_items.hpp with the search helpers of
// folder_search.hpp. Not installed; included by the folder*.cpp files only.
#pragma once

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "folder_items.hpp"
#include "folder_search.hpp"
#include "tracefold/folder.hpp"

namespace tracefold {

struct Folder::Impl {
  using Item = folding::Item;
  using Items = folding::Items;
  using Merger = folding::Merger;
  using OpLog = folding::OpLog;
  using FoldOp = folding::FoldOp;

  int32_t rank;
  FoldOptions options;
  Items top;
  uint64_t events = 0;
  FoldPathCounts paths;
  uint64_t prev_key = kStartKey.packed();
  bool gave_up_ = false;  // a replay or walk gave up (see append)
  bool feeding_ = false;  // a given-up replay or walk feeds its events back
  // One event of such a feed: the fast path or the general one.
  void feed(const Event& ev);
  int redispatch_depth_ = 0;
  Merger merger;
  // Positions in `top` by last key, and positions of loops: lets the search
  // skip items that cannot match instead of scanning the whole window.
  folding::KeyIndex by_last;
  std::vector<std::size_t> loops;
  std::vector<Item*> chain_scratch;

  Impl(int32_t r, FoldOptions o)
      : rank(r), options(std::move(o)), merger(options.max_align_cells, r) {
    merger.log = &log_;
  }

  void index_push(std::size_t pos);

  // ------------------------------------------------- calls of top's items
  //
  // alike() compares the calls of two stretches (one pass through every
  // loop body). Flattening both sides at every test made the general path
  // quadratic in an irregular iteration's length: the growing side was
  // flattened again as it grew by each call, and was most of that path's
  // work on a data exchange. So each top-level item's calls are flattened
  // once, when a test first needs them, and laid end to end: a stretch of
  // top is a span of them. Items change structure only through the folds
  // of try_fold, which index them again (the other paths change values and
  // counts, never keys or bodies), and an item indexed again is flattened
  // again, with those after it, when next needed. An item keeps
  // at most kMaxFlatKeys + 1 calls: more make any stretch holding it too
  // long to compare by calls, whatever their number.
  static constexpr std::size_t kMaxFlatKeys = 512;
  std::size_t flat_items_ = 0;  // top[0, flat_items_) are flattened
  void flatten_upto(std::size_t to);
  std::vector<uint64_t> flat_keys_;
  std::vector<std::size_t> flat_start_{0};  // top[i]'s calls start at flat_start_[i]
  std::vector<uint64_t> flat_filter_;       // per item: filter_bit of each of its calls, or-ed
  // Per loop item, where each loop of its trailing chain (the body's last
  // item while that is a loop, as try_fold's chain) starts among its calls:
  // those of top[i] at chain_at_[chain_start_[i], chain_start_[i + 1]).
  std::vector<std::size_t> chain_at_;
  std::vector<std::size_t> chain_start_{0};
  static uint64_t filter_bit(uint64_t key) { return uint64_t{1} << (mix64(key) & 63); }

  // The calls of a stretch, and the filter of their set when known.
  struct Calls {
    std::span<const uint64_t> keys;  // more than kMaxFlatKeys: too many to compare
    uint64_t filter = 0;
    bool filtered = false;
  };
  Calls calls_of(std::size_t from, std::size_t to);
  // The calls of try_fold's chain[c] of the loop top[k] (its body's).
  Calls chain_calls(std::size_t k, std::size_t c, const Item& target);

  // ------------------------------------------------- repeats at any distance
  //
  // Exact repeats (every item directly compatible with its counterpart) are
  // found at any distance, so a loop whose body has more calls than the
  // window still folds: a polynomial hash over the top-level items'
  // compatibility keys (an event's key; a loop's first and last keys, which
  // is all directly_compatible looks at) compares two stretches, or a loop
  // body with a stretch, in O(1). A hash match is confirmed item by item
  // before anything folds, so collisions cost time, never correctness. Each
  // event looks at no more than kMaxCandidates earlier items that end like
  // it, which bounds the cost per event whatever the body length. The
  // window still bounds the approximate (LCS) matching, whose cost grows
  // with the body.
  static constexpr uint64_t kHashBase = 0x9E3779B97F4A7C15ull;
  static constexpr std::size_t kMaxCandidates = 64;
  std::vector<uint64_t> prefix_hash_{0};  // hash of top[0, i)
  std::vector<uint64_t> base_power_{1};

  static uint64_t mix64(uint64_t h);
  static uint64_t compat_hash(const Item& it);
  uint64_t range_hash(std::size_t from, std::size_t to) const;
  static uint64_t body_hash(const Item& loop);
  // Whether items a[0, len) and b[0, len) are pairwise directly compatible.
  static bool same_calls(const Item* a, const Item* b, std::size_t len);

  // Forgets the index entries of top[from..]; call before changing those items.
  void unindex_from(std::size_t from);
  // top[k], a loop and now the last item, took a fold with only top[k + 1..]
  // unindexed before it; its last call was last_before.
  void reindex_kept(std::size_t k, uint64_t last_before);

  // top[from..] (already unindexed) is replaced by `item`.
  void replace_tail(std::size_t from, Item&& item);

  // The values of one field on one execution, as the general path stores them.
  static ValueSeq field_values(const FieldValue& fv);

  Item make_item(const Event& ev, uint64_t pred);
  // make_item's values in `it`, a default-constructed item.
  void fill_item(Item& it, const Event& ev, uint64_t pred);

  void append(const Event& ev);

  void general_append(const Event& ev);

  // ------------------------------------------------------------ fast path
  //
  // Most events continue the iteration of the loop that ends the sequence.
  // The general path makes an Item for each, finds nothing to fold until the
  // iteration is complete, and then merges the stretch into the loop body
  // item by item. The fast path keeps such events aside (copied into reused
  // buffers) and merges them into the body directly, giving the same items,
  // values and index as the general path would. It is armed only when that
  // equivalence is cheap to see: the last top-level item is a loop whose
  // body is plain events, and try_fold provably finds nothing for the
  // pending events (quiet_). Anything else materializes the pending events
  // as Items and falls back to the general path.

  struct Pending {
    Event ev;  // stats are always empty here
    uint64_t pred = 0;
  };
  bool armed_ = false;
  std::vector<uint8_t> quiet_;  // per body index: an event there cannot fold
  std::unordered_set<uint64_t> seen_keys_;
  std::vector<uint8_t> has_list_;  // per body index: the event has list fields
  std::vector<Pending> pending_;   // reused slots; the first pending_count_ are live
  std::size_t pending_count_ = 0;
  bool refold_after_iteration_ = false;
  // try_fold found nothing after an iteration completed on the fast path.
  // It looks only at the items' calls and loop structure (keys, bodies, the
  // trip counts of loops before the tail), never at the tail loop's trip
  // counts or any values, and a further iteration changes only those: it
  // would find nothing again until arm() runs after a change of structure.
  // A polling loop nested in an outer loop that ends in the same poll (the
  // outer loop is refolded after each iteration) then repeats in place.
  bool refold_quiet_ = false;

  // Whether an item before position exclude_from ends in `last`. try_fold
  // can only fold the tail when that holds for the tail's last key (exact
  // repeats are found at any distance, so any such item counts).
  bool ends_earlier(uint64_t last, std::size_t exclude_from) const;

  void arm();

  bool fast_append(const Event& ev);

  // merge_pair of event item `b` with the item make_item(ev, pred) would
  // give, without making it.
  void merge_event(Item& b, const Event& ev, uint64_t pred, bool has_list) {
    merge_event(b, ev.fields.data(), ev.compute_ns, ev.comm_ns, pred, has_list);
  }
  // The same for an event's fields (as many as b has, with b's ids) and times.
  void merge_event(Item& b, const FieldValue* fields, int64_t compute, int64_t comm, uint64_t pred,
                   bool has_list);
  // The rest of such a merge once the event's values are in b's sequences:
  // its execution and its timing sample (none for an event without times).
  void merge_event_execution(Item& b, int64_t compute, int64_t comm, uint64_t pred) {
    b.reps.push_back(1);
    folding::settle_timing(b, rank);
    if (compute >= 0 || comm >= 0)
      folding::add_raw_timing(b, folding::unpack(pred), compute, comm, rank);
  }

  // k more copies of `ev` (times: theirs). While the sequence ends in a loop
  // whose body is that one event, fast_append would take each copy as a
  // complete iteration: count +1 on the loop, each field value pushed once
  // more, one timing sample, nothing to refold (refold_after_iteration_
  // false). Those updates are done here k at a time, by operations that
  // promise the representation k single ones give; anything else goes
  // through append() copy by copy until that state is reached.
  Event repeat_scratch_;  // a const event given to append_repeats, copied once

  // A copy that takes no bulk path is appended as *self with its times set
  // to the copy's, then put back; self is &ev for a caller's mutable event,
  // null for a const one (copied into repeat_scratch_ when first needed).
  void append_repeats(const Event& ev, std::span<const RepeatTiming> times, Event* self);

  bool repeat_in_place(const Event& ev, std::span<const RepeatTiming> times);

  // times.size() merge_event calls of an event with these fields (b's ids)
  // at once, the
  // i-th with times[i]; each copy's predecessor is b (repeat_in_place and
  // the walk path's bulk repeats).
  void merge_copies(Item& b, const FieldValue* fields, bool has_list,
                    std::span<const RepeatTiming> times);

  // Pending events become Items, as the general path would have made them
  // (try_fold would have found nothing for them: quiet_ checked that).
  void materialize();

  // ---------------------------------------------------------- replay path
  //
  // Events that continue an iteration of a loop whose body holds loops
  // (`[[[Irecv]*4 [Isend]*4 Waitall]*10 Allreduce]*N`). The general path
  // folds such an iteration in the tail (making and growing inner loops) and
  // then merges it into the loop. Which folds it makes depends only on the
  // calls (op + site) of the iteration and on the loop structure around it,
  // never on field values or timings. So when the general path takes the
  // loop at the end of the sequence through one iteration (a session) with
  // only operations the replay reproduces (direct pairwise merges: no
  // alignment, padding, or change to items before the tail; same field ids;
  // no stats), it records its value operations on tagged nodes; when two
  // consecutive sessions had the same calls, field ids and operations, the
  // structure after each is the same (direct merges keep it, and the last
  // values of every count the folding looks at come from the same
  // operations), so every later session with the same calls makes the same
  // operations again. Those are replayed on reused slot items and the real
  // loop items, with no search and no tail items. An event that departs from
  // the recorded calls (or finish()) replays the session's events so far
  // through the general path, which then records afresh.
  //
  // One clean session is enough when the values its general path read are
  // the same after it as before. Until the iteration folds in at the end, a
  // session changes nothing of the loop, and of the loop's values the
  // folding reads only whether the last trip count of the loop and of its
  // trailing inner loops (try_fold's chain) is zero: everything else it looks
  // at is calls and structure, which a clean session keeps. So when that
  // chain reads the same after the session as before it (chain_before_), the
  // next session with the same calls starts from an equivalent state and
  // makes the same operations. (Typical: the iteration that formed the loop
  // spoils its session; the next is clean and the chain is all non-zero.)

  OpLog log_;
  bool recording_ = false;      // a session runs the general path, logged
  std::size_t session_n0_ = 0;  // top.size() when the session started
  int32_t next_slot_ = 0;
  struct Session {
    std::size_t n0 = 0;
    int32_t slots = 0;
    std::vector<uint64_t> keys;       // per event: packed key
    std::vector<uint32_t> field_end;  // per event: end of its ids in `fields`
    std::vector<FieldId> fields;
    std::vector<FoldOp> ops;
    bool operator==(const Session&) const = default;
  };
  Session rec_;  // the session being recorded
  std::vector<uint8_t> chain_before_, chain_after_;
  // Per item of the loop's trailing chain: its last trip count is non-zero.
  void read_chain(std::vector<uint8_t>& out) const;
  Session prev_;  // the last clean session, or the replayed program
  bool have_prev_ = false;
  bool learned_ = false;        // prev_ is replayed at the next session
  bool follows_clean_ = false;  // the last append ended a clean session
  bool replaying_ = false;
  std::size_t replay_pos_ = 0;
  uint64_t replay_prev_key_ = 0;
  std::vector<Event> replay_events_;
  std::vector<Item*> real_;  // items of the loop, preorder (tag -1 - i)
  std::vector<Item> slots_;
  static constexpr std::size_t kMaxSessionEvents = 4096;
  // Sessions that keep spoiling (an irregular loop with the walk off or not
  // allowed) cost their logging, and while one records the fast path stays
  // off, so the tail's inner loops (a poll loop's unsuccessful probes) go
  // through the general path one event at a time. After kSpoiledSessions
  // spoiled ones in a row, no session starts for a run of events, and the
  // fast path takes those loops; a session still records after each run, so
  // that a loop turned regular is learned again, and each spoiled one doubles
  // the run (up to kMaxSkip events). Sessions change how fast the folder
  // folds, never what it folds, so the output is the same.
  static constexpr uint32_t kSpoiledSessions = 4;
  static constexpr uint64_t kFirstSkip = 64, kMaxSkip = 8192;
  uint64_t no_session_until_ = 0;   // events: no session starts before this many
  uint64_t skip_run_ = kFirstSkip;  // the run of events without sessions after the next spoiled one

  static void tag_tree(Item& it, int32_t& next);
  static void collect_tree(Item& it, std::vector<Item*>& out);

  // top.back() is a loop with loops in its body.
  void start_session(bool follows_clean);

  void start_recording();

  void record_event(const Event& ev);

  // The session ended (its iteration folded in) or was spoiled.
  void end_recording();

  bool replay_append(const Event& ev);

  // The session so far goes through the general path (recorded again).
  void abort_replay();

  // Timings are histograms and merge without regard to order or grouping:
  // an item's timings depend only on the samples merged into it. So each
  // event's sample goes straight to the loop item its slot ends up merged
  // into (home_, a real tag), not through the slots.
  std::vector<int32_t> home_;
  // Per event: where its record sits in its home's timings. A guess checked
  // against the record's pred: another event's new record may shift it.
  std::vector<uint32_t> timing_at_;
  bool find_timing_homes();

  // prev_.ops with the common case short-cut: an event whose slot is made
  // and then merged straight into a real node of the loop. Merging a fresh
  // one-value slot appends each value with append_repeated(v, 1) (see
  // ValueSeq::append), so doing exactly that at the merge's place in the
  // program gives the same representation without filling the slot first.
  // Events with list fields keep the slot (their slot values are not one
  // value per field).
  std::vector<FoldOp> program_;
  std::vector<bool> event_has_list_;  // per event of prev_: any list field
  void compile_program();

  // Slot trees: event slots joined by merges, each ending (at most once) in
  // a merge into a real node of the loop. What a tree's slots hold when that
  // merge happens depends only on the field values of the tree's events,
  // since the program is the same every iteration. So a tree none of whose
  // events changed since the previous replayed iteration still holds exactly
  // what rebuilding it would give (stencils repeat their peers, tags, counts
  // and request links step after step): its resets and slot-to-slot merges
  // are skipped, only its merge into the real node runs. A tree that is
  // touched again after its real merge, or merges into real nodes twice,
  // is always rebuilt.
  std::vector<int32_t> op_tree_;       // per op of program_: tree of its target slot, or -1
  std::vector<int32_t> event_tree_;    // per event: tree of its slot, or -1 (direct events)
  std::vector<uint8_t> tree_rebuild_;  // per tree: rebuild every iteration (not freezable)
  std::vector<uint8_t> dirty_;         // this iteration: tree must be rebuilt
  // Per event: its values differ from the previous iteration's (replay_append
  // compares them as it copies them over the previous ones in replay_events_).
  std::vector<uint8_t> changed_;
  // replay_events_ holds the previous replayed iteration of this program
  // (false until the first run after compiling it).
  bool last_fields_valid_ = false;

  void find_slot_trees(std::size_t slots);

  void mark_dirty_trees();
  bool tree_dirty(int32_t t) const { return t < 0 || dirty_[static_cast<std::size_t>(t)]; }

  Item& node(int32_t tag) {
    return tag >= 0 ? slots_[static_cast<std::size_t>(tag)]
                    : *real_[static_cast<std::size_t>(-1 - tag)];
  }

  // The values make_item gives (ev has no stats; timings: see home_), in a
  // reused item.
  void reset_event(Item& s, const Event& ev, bool has_list);

  void run_program();

  // ------------------------------------------------------------- walk path
  //
  // Irregular codes (polling, data exchanges, per-level neighbour sets) make
  // iterations that are alike but never identical: inner trip counts differ,
  // some calls happen in some iterations only. The replay path needs the
  // same calls every time and never learns such a loop, and the general path
  // costs a search and an alignment per iteration. When sessions keep
  // spoiling (unclean_streak_), the next iteration is instead walked through
  // the loop's structure: each event either is the next call of the body,
  // starts another iteration of the inner loop it ends (its first call), or
  // enters an inner loop (its first call); calls and inner loops passed over
  // run 0 times in this traversal. Any such walk is a parse of the events by
  // the loop, so appending its counts and values keeps the trace lossless;
  // the structure does not change. Decisions and events are kept aside
  // until the iteration's last call (or the next iteration's first) and then
  // applied; an event the walk cannot place sends the iteration so far
  // through the general path, which may change the structure.
  struct WalkFrame {
    Item* loop = nullptr;
    uint32_t pos = 0;    // next body item
    uint64_t iters = 0;  // iterations of `loop` in this traversal so far
  };
  struct WalkOp {
    Item* item = nullptr;
    uint32_t event = 0;  // consumed event (index into walk_slots_) when value == kConsumed
    uint64_t value = 0;  // the item's count for this traversal
  };
  static constexpr uint64_t kConsumed = std::numeric_limits<uint64_t>::max();
  // A walked event slot that stands for `count` copies of its event (a
  // polling loop's repeats, append_repeats), with their times at
  // walk_times_[times_from, times_from + count); count 0: a single event.
  struct WalkRepeat {
    std::size_t times_from = 0;
    uint64_t count = 0;
  };
  std::vector<WalkRepeat> walk_repeat_;  // per slot
  std::vector<RepeatTiming> walk_times_;
  uint64_t walk_events_total_ = 0;  // events the live slots stand for
  static constexpr std::size_t kMaxWalkEvents = std::size_t{1} << 16;
  static constexpr uint64_t kLongWalk = 64;  // see walk_append
  bool walking_ = false;
  uint32_t unclean_streak_ = 0;
  bool walk_refold_ = false;  // an earlier item ends like the loop: try_fold after each iteration
  std::vector<WalkFrame> walk_stack_;
  std::vector<WalkOp> walk_ops_;
  // The items a fold merges into earlier ones (try_fold, make_loop), moved
  // here so that the vector's buffer is reused from fold to fold.
  Items seg_scratch_;
  // A walked event kept aside: its call, predecessor, times, and its fields
  // at walk_fields_[from, from + n). One flat buffer of fields that only
  // grows, instead of an Event per slot: an Event slot's fields were resized
  // (FieldValues made and destroyed) whenever the next event kept there had
  // another number of fields.
  struct WalkSlot {
    uint64_t key = 0;
    uint64_t pred = 0;
    int64_t compute_ns = -1, comm_ns = -1;
    uint32_t from = 0, n = 0;
    bool has_list = false;
  };
  std::vector<WalkSlot> walk_slots_;     // the first walk_count_ are live
  std::vector<FieldValue> walk_fields_;  // the first walk_fields_used_ are live
  std::size_t walk_fields_used_ = 0;
  // Most walked events have no list field: theirs are kept as (id, value)
  // pairs at walk_scalars_[from, from + n) instead (slot.has_list false),
  // two words a field to copy and read rather than a FieldValue, whose list
  // must be looked at and cleared.
  struct WalkScalar {
    FieldId field = 0;
    int64_t scalar = kAbsent;
  };
  std::vector<WalkScalar> walk_scalars_;  // the first walk_scalars_used_ are live
  static void scalars_to_fields(const WalkScalar* from, std::size_t n, FieldValue* to) {
    for (std::size_t i = 0; i < n; ++i) {
      to[i].field = from[i].field;
      to[i].scalar = from[i].scalar;
      to[i].list.clear();
    }
  }
  std::size_t walk_scalars_used_ = 0;
  // Keeps ev aside in slot walk_count_ (times: compute/comm).
  WalkSlot& keep_walked(const Event& ev, uint64_t pred, int64_t compute, int64_t comm);
  // A slot's fields as FieldValues: in place for a slot with lists, else
  // made in walk_scratch_ (valid until the next call; the rarer paths only).
  const FieldValue* slot_fields(const WalkSlot& s);
  std::vector<FieldValue> walk_scratch_;
  // The event a slot holds, made again (a walk given up, a rare merge).
  Event slot_event(const WalkSlot& s, int64_t compute, int64_t comm);
  std::size_t walk_count_ = 0;
  uint64_t walk_prev_key_ = 0;
  // The shape of the last walked iteration. A run of alike ones hands the
  // loop back to the sessions, so that a loop turned regular is replayed;
  // when the sessions spoil again (the loop's structure does not fit its
  // regular iterations directly), the run needed doubles.
  uint64_t last_walk_shape_ = 1;
  uint32_t alike_walks_ = 0;
  uint32_t handback_after_ = 2;
  bool handed_back_ = false;

  bool walk_allowed() const {
    return options.fast_path && options.elastic_iterations && unclean_streak_ >= 2;
  }
  void start_walk();
  bool walk_append(const Event& ev);
  // append_repeats while walking: when the walk has just placed `ev` as the
  // one call of an inner loop's body, the copies are further iterations of
  // that loop, kept aside as one slot. Returns false if that does not hold.
  bool walk_repeats(const Event& ev, std::span<const RepeatTiming> times);
  // Applies the walked iteration to the loop; returns false when the
  // structure changed afterwards (a refold) and the walk must stop.
  bool commit_walk();
  // The walked events so far go through the general path.
  void abort_walk();
  void commit_repeats(Item& x, uint32_t slot);
  // Merges one walked event into its node (merge_pair's result).
  void walk_merge(Item& x, const WalkSlot& s, int64_t compute, int64_t comm);
  // walk_merge for fields kept as F (FieldValue or WalkScalar).
  template <class F>
  void walk_merge_fields(Item& x, const F* fields, const WalkSlot& s, int64_t compute,
                         int64_t comm);
  enum class WalkResult : uint8_t { kPlaced, kComplete };
  WalkResult walk_place(uint64_t k, uint32_t index);

  // Whether two candidate iterations are alike: their items align, and the
  // share of their calls (one pass through every loop body) that a longest
  // common subsequence pairs up reaches options.min_similarity, or they
  // make the same set of calls (elastic_iterations). Comparing calls, not
  // items, keeps a half-finished iteration from looking like a whole loop
  // just because its ends match.
  // `ca` and `cb` are the calls of `a` and `b`; with `growing`, `b` is the
  // stretch after a loop re-tested as it grows (retest_lcs_).
  bool alike(std::span<const Item> a, std::span<const Item> b, Calls ca, Calls cb,
             bool growing = false);

  static bool flatten_keys(std::span<const Item> items, std::vector<uint64_t>& out);
  std::vector<uint64_t> chain_keys_;  // chain_calls when they must be flattened
  // chain_keys_ are the calls of chain[chain_keys_c_] of top[chain_keys_k_];
  // kNoChainKeys when they are no longer known to be.
  static constexpr std::size_t kNoChainKeys = static_cast<std::size_t>(-1);
  std::size_t chain_keys_k_ = kNoChainKeys, chain_keys_c_ = 0;
  std::vector<uint64_t> set_a_, set_b_;  // same_call_sets' sorted sides
  folding::LcsScratch lcs_;
  folding::GrowingLcs retest_lcs_;  // accept_iteration's

  bool try_fold();
  std::vector<std::size_t> cands_;
  // Whether two sides make the same set of calls (elastic_iterations).
  bool same_call_sets(Calls& ca, Calls& cb);

  // Whether top[k + 1, end) is similar enough to the body of try_fold's
  // chain[c] of the loop top[k] (`target`) to be merged as an iteration.
  bool accept_iteration(std::size_t k, std::size_t c, const Item& target);

  // top[j..m] and top[m+1..] become two iterations of a new loop.
  void make_loop(std::size_t j, std::size_t m);

  // ----------------------------------------------------------- flattening

  std::size_t flatten(const Item& it, std::vector<const Item*>& heads, std::vector<Node>& out);
};

}  // namespace tracefold
