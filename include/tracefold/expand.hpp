// Expansion: walking a folded trace as one rank.
#pragma once

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

  /// One loop the last returned event is in: the loop level `level` of
  /// trace node `node` (an index into Trace::nodes), with `remaining`
  /// iterations of the current entry still to run, this one included. A
  /// loop entered with k iterations is in its (k - remaining + 1)-th; a
  /// walker that needs k records `remaining` where the loop appears.
  struct LoopPosition {
    std::size_t node = 0, level = 0;
    int64_t remaining = 0;
  };
  /// The loops the last returned event is in, outermost first (what the
  /// diagnosis's temporal context trees take their iterations from).
  void loops(std::vector<LoopPosition>& out) const;

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
};

/// All events of one rank (convenience for tests and small traces).
std::vector<Event> expand_rank(const Trace& trace, int32_t rank);

}  // namespace tracefold
