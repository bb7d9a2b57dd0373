// What analysis ranks of tracefold-diagnose exchange: the frames their
// shares of the recorded ranks sampled and the names each gave its part of
// them (every rank gets all), the events of its share rank 0 sends each,
// and the digests of its share each sends towards rank 0.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "diagnose/internal.hpp"

namespace tracefold::diagnose_parallel {

/// The names of the frames one analysis rank named (every rank gets all).
struct ShareNames {
  diagnose_detail::FrameMemo named;
  std::set<diagnose_detail::FrameKey> unnamed;
};

/// What an analysis rank sends towards rank 0: its share's digests and
/// what the notes about samples need of each of its ranks.
struct ShareDigest {
  int32_t first = 0;  ///< the first recorded rank of the share
  std::vector<diagnose_detail::RankDigest> digests;
  std::vector<diagnose_detail::SampleFacts> facts;
};

/// What rank 0 sends each analysis rank before it digests: the digests'
/// parameters, the exit-gap drifts to apply to its samples, and the events
/// of its share (after clock alignment, with their waiting).
struct ShareEvents {
  diagnose_detail::DigestParams params;
  std::vector<diagnose_detail::ExitGapDrift> drifts;
  std::vector<std::vector<diagnose_detail::EventSpan>> ranks;
};

std::string encode(const std::vector<diagnose_detail::FrameQuery>& frames);
/// Throws DiagnoseError when `bytes` is cut short.
std::vector<diagnose_detail::FrameQuery> decode_frames(const std::string& bytes);

/// Bytes for MPI (same program on both ends: plain structs go as they are).
/// The decoders throw DiagnoseError when `bytes` is cut short.
std::string encode(const ShareNames& d);
ShareNames decode_names(const std::string& bytes);
std::string encode(const ShareDigest& d);
ShareDigest decode(const std::string& bytes);
std::string encode(const ShareEvents& d);
ShareEvents decode_events(const std::string& bytes);

}  // namespace tracefold::diagnose_parallel
