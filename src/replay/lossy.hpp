// Coordinated draws from lossy value histograms (internal; seed 000, 5.2.6).
//
// In a trace recorded with parameter histograms, a field of a node keeps, per
// rank, only how often each value occurred. Replay draws the values from that
// multiset without replacement, so a rank still sends exactly the recorded
// number of messages of each destination and size; only their order is
// invented. The draws are a pure function of (seed, rank, node, field, draw
// number): a receiver simulating a sender's context makes exactly the
// sender's choices, without any message between them. Collective fields are
// drawn with the rank left out of the key, so every member agrees.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::replay_detail {

class LossyResolver {
 public:
  LossyResolver(const Trace& trace, int32_t rank, uint64_t seed)
      : trace_(trace), rank_(rank), seed_(seed) {}

  /// Replaces the values of `ev` that come from histograms of `node` by
  /// coordinated draws. `collective`: draw with a rank-independent key.
  void resolve(Event& ev, const Node* node, bool collective);

  /// Raises the receive counts of collective `ev` (rcount, each entry of
  /// rcounts) to the largest message a member can send at `node`, when
  /// the node holds histograms: each member draws its own send count, so
  /// a receive count recorded for one draw could be shorter than the
  /// message of another (MPI_ERR_TRUNCATE). `bench` sizes such receives
  /// the same way.
  void raise_receives(Event& ev, const Node* node);

 private:
  struct Bag {
    std::vector<std::pair<int64_t, uint64_t>> left;  // value -> copies not drawn yet
    uint64_t total = 0;
    uint64_t draws = 0;
  };
  int64_t draw(Bag& bag, uint64_t key);

  const Trace& trace_;
  int32_t rank_;
  uint64_t seed_;
  std::map<std::pair<std::size_t, FieldId>, Bag> bags_;
  std::map<std::size_t, int64_t> largest_sent_;  // node -> bytes, -1: no histogram
};

}  // namespace tracefold::replay_detail
