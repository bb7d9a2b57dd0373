// The messages of every recorded rank matched by the analysis ranks
// together (waits/split_match.hpp): each makes the descriptors of its
// share's sends and receives, the sends travel to the analysis rank whose
// share holds their receiver, each matches its receivers' messages and
// rank 0 receives them in rank order: match_wait_input's result, without
// rank 0 matching every rank's messages itself.
#pragma once

#include <mpi.h>

#include "waits/split_match.hpp"

namespace tracefold::diagnose_parallel {

/// Collective over MPI_COMM_WORLD: the sends of `mine` (this analysis
/// rank's share) to the shares of their receivers, then its receivers'
/// messages matched; on rank 0, every share's messages and counts in rank
/// order (match_wait_input's MatchResult), empty elsewhere.
MatchResult exchange_and_match(const Trace& trace, waits_detail::BlockMessages&& mine, int me,
                               int np);

}  // namespace tracefold::diagnose_parallel
