// What the parts of the wait-state analysis share (not a public header).
#pragma once

#include <map>
#include <tuple>
#include <vector>

#include "tracefold/waits.hpp"

namespace tracefold::waits_detail {

/// One wait state: `waiter` lost `ns` in its event `wev` because `late` had
/// not yet reached its event `lev`.
struct WaitState {
  int32_t waiter = 0;
  std::size_t wev = 0;
  int32_t late = 0;
  std::size_t lev = 0;
  int64_t ns = 0;
};

/// A point where a rank synchronized with a partner (a message) or with the
/// members of a communicator group (a collective).
struct SyncPoint {
  std::size_t ev = 0;
  int32_t partner = -1;  ///< -1: a collective
  int64_t comm = 0;      ///< collectives: communicator id and first member of the group
  int32_t group_first = 0;
};

struct Analysis {
  const Trace& trace;
  const WaitInput& in;
  WaitReport& rep;
  const WaitOptions& opt;
  std::map<std::tuple<OpId, SiteId, bool>, int32_t> cp_index;
  std::vector<WaitState> waits;
  /// Per rank and event: the waiting time found in that call.
  std::vector<std::vector<int64_t>> waited;
  std::vector<std::vector<SyncPoint>> syncs;

  int32_t callpath(const Event& ev, bool computation);
  void add(WaitPattern p, int32_t cp, int32_t rank, int64_t ns);
};

/// Backward replay: the critical path and the delay costs (delay.cpp).
void critical_path_and_delays(Analysis& a);

}  // namespace tracefold::waits_detail
