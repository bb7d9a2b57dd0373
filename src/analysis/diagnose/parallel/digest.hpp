// What an analysis rank of tracefold-diagnose sends towards rank 0: the
// samples of its share of the recorded ranks, on rank 0's clock and with
// their frames named, and the frames it found without symbols.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "diagnose/internal.hpp"

namespace tracefold::diagnose_parallel {

struct ShareDigest {
  int32_t first = 0;  ///< the first recorded rank of the share
  std::vector<diagnose_detail::RankSampleDigest> ranks;
  std::set<diagnose_detail::FrameKey> unnamed;
};

/// Bytes for MPI (same program on both ends: plain structs go as they are).
std::string encode(const ShareDigest& d);
/// Throws DiagnoseError when `bytes` is cut short.
ShareDigest decode(const std::string& bytes);

}  // namespace tracefold::diagnose_parallel
