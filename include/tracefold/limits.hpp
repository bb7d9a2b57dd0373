// Hard limits of the readers (docs/format.md, "Limits"). A size read from a
// file is checked against them, and against what the rest of the file can
// hold, before anything is allocated for it: a corrupt or hostile file gets
// an error naming the file and place, never a huge allocation.
#pragma once

#include <cstdint>

namespace tracefold {

/// Largest world size (ranks of MPI_COMM_WORLD) in a trace, raw log or
/// timeline: 4,194,304, above the largest MPI runs to date. Commands keep
/// per-rank tables, so a bigger claim in a small file would cost gigabytes.
inline constexpr int32_t kMaxWorldSize = 1 << 22;

/// Largest expansion of zstd-compressed data a reader accepts: 1 MiB plus
/// 1024 times the compressed size. Traces are folded already, so their
/// bodies compress about 3 to 30 times; a few kilobytes that claim
/// gigabytes are a decompression bomb or a corrupt file.
inline constexpr uint64_t kMaxZstdRatio = 1024;
inline constexpr uint64_t kZstdSlackBytes = uint64_t{1} << 20;
inline constexpr uint64_t max_decompressed(uint64_t compressed) {
  return kZstdSlackBytes + kMaxZstdRatio * compressed;
}
/// Most field values a compact file (version 7) may store derived from loop
/// trip counts, over all its nodes: 16,777,216. Trip counts are run-length
/// coded, so a few bytes can name 2^60 iterations; a writer writes the
/// entries past the bound as they are.
inline constexpr uint64_t kMaxDerivedValues = uint64_t{1} << 24;

}  // namespace tracefold
