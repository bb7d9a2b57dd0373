// What analysis ranks of tracefold-diagnose exchange: the frames their
// shares of the recorded ranks sampled (every rank gets all, to name its
// part of them), and what each sends towards rank 0: the samples of its
// share, on rank 0's clock, the names of the frames it was given, and
// those of them it found without symbols.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "diagnose/internal.hpp"

namespace tracefold::diagnose_parallel {

struct ShareDigest {
  int32_t first = 0;  ///< the first recorded rank of the share
  std::vector<diagnose_detail::RankSampleDigest> ranks;
  diagnose_detail::FrameMemo named;  ///< the frames this rank named
  std::set<diagnose_detail::FrameKey> unnamed;
};

std::string encode(const std::vector<diagnose_detail::FrameQuery>& frames);
/// Throws DiagnoseError when `bytes` is cut short.
std::vector<diagnose_detail::FrameQuery> decode_frames(const std::string& bytes);

/// Bytes for MPI (same program on both ends: plain structs go as they are).
std::string encode(const ShareDigest& d);
/// Throws DiagnoseError when `bytes` is cut short.
ShareDigest decode(const std::string& bytes);

}  // namespace tracefold::diagnose_parallel
