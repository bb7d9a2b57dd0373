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

/// The compact form for moving a trace between processes (the rounds of
/// the merge at MPI_Finalize): no field derived from its loop and zstd
/// level 1, so larger than encode_compact's but several times cheaper to
/// write, and a fraction of the text form's size and parsing work. Read
/// back by decode_compact/decode_trace into the same trace.
std::string encode_compact_transfer(const Trace& trace);

/// save_trace with `compact_level` as encode_compact's level (the compact
/// form only; text has no level).
std::size_t save_trace(const Trace& trace, const std::filesystem::path& path,
                       TraceEncoding encoding, int compact_level);

}  // namespace tracefold
