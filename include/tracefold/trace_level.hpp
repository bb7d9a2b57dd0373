// The zstd level of a trace's compact form, for writers that choose their
// own (memory traces); every other writer uses the level chosen by the
// body's size (trace_io.hpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "tracefold/trace.hpp"
#include "tracefold/trace_io.hpp"

namespace tracefold {

/// The level argument meaning: chosen by the size of the compact body (19
/// up to 64 KiB, 9 up to 4 MiB, 3 above), as encode_compact does.
inline constexpr int kCompactLevelBySize = 0;

/// encode_compact with the body compressed at zstd level `level` (1 to 22,
/// or kCompactLevelBySize). Decoding does not depend on the level.
std::string encode_compact(const Trace& trace, int level);

/// Which fields encode_compact writes derived from their loop's trip
/// counts (a poll's flags, a probe's source per execution), where that is
/// shorter than the values themselves.
enum class DerivedFields {
  /// Only fields whose values, expanded on reading, fold into the same runs
  /// as in the trace written, so that `print` of a trace and of its compact
  /// form agree. Asking costs one expansion of each such field: about a
  /// third of writing a polling code's trace.
  kSameRuns,
  /// Every field where it is shorter. The values read back are the same
  /// (lossless) but folded as pushing them one by one folds them, which may
  /// group them into other runs than the trace written. For a trace that
  /// exists only in its file: the merge at MPI_Finalize.
  kSameValues,
};

/// encode_compact at `level` with `derived` as the rule for derived fields.
std::string encode_compact(const Trace& trace, int level, DerivedFields derived);

/// The compact form for moving a trace between processes (the rounds of
/// the merge at MPI_Finalize): no field derived from its loop, completion
/// links spelled out (a version without derived links) and zstd level 1,
/// so larger than encode_compact's but several times cheaper to
/// write, and a fraction of the text form's size and parsing work. Read
/// back by decode_compact/decode_trace into the same trace.
std::string encode_compact_transfer(const Trace& trace);

/// save_trace with `compact_level` as encode_compact's level (the compact
/// form only; text has no level).
std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding, int compact_level);

/// save_trace with `derived` as encode_compact's rule for derived fields.
std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding, int compact_level, DerivedFields derived);

}  // namespace tracefold
