// Message matching split by receiver (not a public header): the analysis
// rank that holds a block of recorded ranks' events makes their send and
// receive descriptors, each send goes to the analysis rank holding its
// receiver, and each matches its own receivers' messages. Concatenated in
// rank order, the blocks' messages and counts are match_wait_input's on
// every rank's events, without one process holding every rank's events
// while the matcher copies them. One thread per rank (the diagnosis's
// input); traces with threads take match_wait_input.
#pragma once

#include <cstdint>
#include <vector>

#include "tracefold/timeline.hpp"
#include "tracefold/waits.hpp"

namespace tracefold::waits_detail {

/// A send as its receiver's block matches it. All 8-byte members: it
/// travels as its bytes.
struct SendDescriptor {
  int64_t comm = 0, sender = 0, receiver = 0, tag = 0;
  uint64_t event = 0, complete = 0, bytes = 0;
};
/// A receive with its sender resolved (a wildcard's recorded source).
struct RecvDescriptor {
  int64_t comm = 0, sender = 0, receiver = 0, tag = 0;
  uint64_t event = 0, complete = 0;
};

/// The descriptors of one block of ranks.
struct BlockMessages {
  std::vector<SendDescriptor> sends;  ///< in rank, then event order
  std::vector<RecvDescriptor> recvs;
  /// Receives that can match nothing (unknown source or tag).
  uint64_t unmatched_recvs = 0;
};

/// The descriptors of ranks [first, last) of `in` (the other entries are
/// not read and may be empty). Their events are lent to the completion
/// finder one rank at a time and given back.
BlockMessages block_messages(const Trace& trace, WaitInput& in, int32_t first, int32_t last);

/// Matches `recvs` (one block's) against `sends` (every send addressed to
/// that block, each sender's in its event order): per (communicator,
/// sender, receiver, tag) in FIFO order. Messages in receiver, then
/// receive order; unmatched_sends counts the sends given that nothing
/// received.
MatchResult match_block(std::vector<SendDescriptor>&& sends, std::vector<RecvDescriptor>&& recvs,
                        uint64_t unmatched_recvs);

}  // namespace tracefold::waits_detail
