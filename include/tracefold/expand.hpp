// Expansion: walking a folded trace as one rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

/// The trace's numbers do not add up for a rank (e.g. a loop runs past its
/// enclosing loop, or a value sequence ends early).
class ExpandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Yields exactly rank r's recorded event sequence from a folded trace,
/// without expanding it in memory: cost is one step per event plus one per
/// loop entry. Peers come back as absolute ranks. Events carry the mean
/// compute/communication time of their node for the preceding call path
/// (when recorded).
class RankIterator {
 public:
  /// Throws std::out_of_range if rank is not in [0, world_size).
  RankIterator(const Trace& trace, int32_t rank);
  /// Next event; false at the end. Throws ExpandError on an inconsistent trace.
  bool next(Event& out);
  /// The node the last returned event came from.
  const Node* current_node() const { return last_node_; }

  /// One folded loop the last returned event lies in. Analyses that count
  /// a loop's iterations (patterns, the diagnosis's temporal context
  /// trees) read them here instead of guessing them from repeats in the
  /// expanded events.
  struct Loop {
    std::size_t head;   ///< index in trace.nodes of the node the loop starts at
    std::size_t level;  ///< which of the head's LoopLevels (0: the outermost starting there)
    int64_t iteration;  ///< 0 .. trips - 1
    int64_t trips;      ///< of this entry of the loop (its iters value)
    uint64_t entry;     ///< this rank's loop entries counted from 0, all loops together
  };
  /// How many loops the last returned event lies in.
  std::size_t loop_depth() const { return stack_.size(); }
  /// The loop at `depth` (0: outermost; < loop_depth()).
  Loop loop(std::size_t depth) const {
    const Frame& f = stack_[depth];
    return {static_cast<std::size_t>(nodes_[f.head].node - trace_.nodes.data()), f.level,
            f.trips - f.remaining, f.trips, f.entry};
  }

 private:
  struct FieldState {
    FieldId field;
    bool list;  // FieldTable::kind, looked up once, not per event
    ValueSeq::Cursor values;
  };
  struct NodeState {
    const Node* node = nullptr;
    std::vector<ValueSeq::Cursor> members;
    std::vector<ValueSeq::Cursor> iters;
    ValueSeq::Cursor count;
    std::vector<FieldState> fields;
    // Mean times of the timing block of the last predecessor looked up
    // (valid when times_known): a node is mostly reached from the same
    // call again and again.
    EventKey times_pred = kStartKey;
    bool times_known = false;
    int64_t compute_ns = -1, comm_ns = -1;
  };
  // A communicator's position of this rank and its size, for peers.
  struct CommPosition {
    int64_t comm;
    int32_t me, size;
  };
  struct Frame {
    std::size_t head;
    std::size_t level;
    int64_t remaining;
    std::size_t end;
    int64_t trips;  // for loop(): set once per entry, so the walk costs no more
    uint64_t entry;
  };
  [[noreturn]] void fail(const std::string& what) const;

  const Trace& trace_;
  int32_t rank_;
  std::vector<NodeState> nodes_;
  std::vector<Frame> stack_;
  std::size_t pos_ = 0;
  std::size_t level_ = 0;
  EventKey prev_ = kStartKey;
  const Node* last_node_ = nullptr;
  std::vector<CommPosition> positions_;
  uint64_t entries_ = 0;
};

/// All events of one rank (convenience for tests and small traces).
std::vector<Event> expand_rank(const Trace& trace, int32_t rank);

}  // namespace tracefold
