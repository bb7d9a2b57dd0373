// Recorded timelines: every event of one rank with its enter and exit times
// (`tracefold record --timeline`), the lossless-timing companion of a
// folded trace. No MPI here.
//
// A timeline file holds timestamps only. The parameters of event k are those
// of the k-th event the folded trace expands to for the same rank, so the two
// files together give every call with its parameters and its exact times.
// Times are nanoseconds of the rank's monotonic clock; the file also keeps
// the offset to rank 0's clock measured at start and at the end, so readers
// can put all ranks on rank 0's clock (clock_sync.hpp: linear between the
// two measurements).
//
// File layout (little-endian), docs/format.md has the details:
//   header  "TFTL" u8 version (3), i32 rank, i32 world size, i64 base time,
//           i64 start offset, i64 start local time, i64 start round trip
//   blocks  u32 stored size, u32 raw size, u32 events, zstd-compressed
//           records: varint op, varint thread, varint (enter - previous
//           exit, zigzag), varint (exit - enter)
//   trailer u32 0xFFFFFFFF, i64 end offset, i64 end local time,
//           i64 end round trip, u64 events recorded, u64 events dropped,
//           u32 n, n x i32: the trace's number of each thread the records
//           number by its first call (n = 0: the same numbers)
// Version 2 files (no thread: every record is thread 0's) and version 1
// files (no round trips either) are still read.
// A file without a trailer (a run that died) is read up to its last block.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/block_file_writer.hpp"
#include "tracefold/clock_sync.hpp"
#include "tracefold/event.hpp"

namespace tracefold {

class TimelineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One call: operation, the thread that made it (the trace's thread
/// number, so location thread * world size + rank) and its enter/exit
/// times on the rank's own clock.
struct TimelineRecord {
  OpId op = 0;
  int32_t thread = 0;
  int64_t enter_ns = 0;
  int64_t exit_ns = 0;
};

/// Appends records to a file in compressed blocks, within a byte budget.
/// Never throws after open(): failures are kept in error() and recording
/// stops (the traced program must go on).
class TimelineWriter : public BlockFileWriter {
 public:
  /// Creates `path`. `max_bytes` bounds the file (0: no bound); once a block
  /// would pass it, further records are counted as dropped. Throws
  /// TimelineError if the file cannot be created.
  void open(const std::string& path, int32_t rank, int32_t world_size, int64_t base_ns,
            uint64_t max_bytes, std::size_t block_bytes = 1 << 16);
  /// The clock sample taken at the start (round trip -1: not measured).
  void set_start_offset(int64_t offset_ns, int64_t local_ns, int64_t round_trip_ns = -1);
  /// Cheap: encodes into the current block. `thread`: the trace's number
  /// of the thread that made the call.
  void add(OpId op, int64_t enter_ns, int64_t exit_ns, int32_t thread = 0);
  /// Writes the current block (e.g. before the process may die).
  void flush();
  /// Writes the last block and the trailer (with the clock sample taken at
  /// the end), closes the file. `thread_numbers[t]`: the trace's number
  /// of the thread add() was given as `t` (empty: the same).
  void close(int64_t end_offset_ns, int64_t end_local_ns, int64_t round_trip_ns = -1,
             const std::vector<int32_t>& thread_numbers = {});

  uint64_t recorded() const { return recorded_; }
  uint64_t dropped() const { return dropped_; }

 private:
  int64_t last_exit_ = 0;
  uint64_t recorded_ = 0;
  uint64_t dropped_ = 0;
};

/// A timeline file read back.
struct RankTimelineFile {
  int32_t rank = 0;
  int32_t world_size = 0;
  uint8_t version = 0;
  int64_t start_offset_ns = 0, start_local_ns = 0;
  int64_t start_round_trip_ns = -1;  ///< -1: not recorded (version 1)
  bool has_trailer = false;
  int64_t end_offset_ns = 0, end_local_ns = 0;
  int64_t end_round_trip_ns = -1;
  uint64_t dropped = 0;
  /// In the order the rank's calls were recorded, its threads' mixed.
  std::vector<TimelineRecord> records;
  /// Whether each record names its thread (version 3 on); older files
  /// give every record thread 0, whoever made it.
  bool has_threads() const { return version >= 3; }
  /// Thread `thread`'s records, in its order: those of the trace's
  /// location thread * world size + rank.
  std::vector<TimelineRecord> thread_records(int32_t thread) const;
  /// The file it was read from, for error messages.
  std::string source;
  /// Round trip of a trailer whose offset was not measured: a run aborted
  /// before MPI_Finalize repeats the start offset with it.
  static constexpr int64_t kEndNotMeasured = -2;
  /// Whether the offset at the end was measured: a trailer written at
  /// MPI_Finalize (a file whose process died has none).
  bool end_measured() const { return has_trailer && end_round_trip_ns != kEndNotMeasured; }
  /// This rank's clock against rank 0's: both samples, or the start one
  /// alone when the end was not measured.
  ClockMap clock() const;
  /// `local_ns` on rank 0's clock (offsets interpolated linearly). Throws
  /// TimelineError naming the file if the result does not fit in 64 bits
  /// (only a corrupt file gets there: 2^63 ns are 292 years).
  int64_t to_global(int64_t local_ns) const;
};

/// Largest raw (decompressed) block a reader accepts: the writer makes
/// blocks of at most 64 KiB plus one record (docs/format.md, Limits).
inline constexpr uint32_t kMaxTimelineBlockBytes = 16u << 20;

/// Largest thread number a reader accepts: far past any process's threads,
/// and small enough that thread * world size stays an int32 location for
/// any run of up to 2^16 ranks.
inline constexpr int32_t kMaxTimelineThread = (1 << 15) - 1;

/// Reads one file; throws TimelineError naming the file and what is wrong.
RankTimelineFile read_timeline_file(const std::string& path);
/// Reads the bytes of a timeline file; `source` names it in errors.
RankTimelineFile parse_timeline(std::span<const uint8_t> data, const std::string& source);

}  // namespace tracefold
