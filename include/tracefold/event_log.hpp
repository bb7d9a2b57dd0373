// Event parameter logs: what a `record --sample-only` run keeps instead of
// a folded trace. Per rank, every recorded call with its parameters (peer,
// count and datatype size, communicator, tag, root, request links, ...)
// and its call site, in call order: record k of `events-R.tfe` is the call
// of record k of the rank's timeline (`rank-R.tft`, its times) and the
// event samples name by index (samples.hpp). No MPI here.
//
// File layout (little-endian), in the block form of timelines and samples
// (docs/format.md, docs/sampling.md):
//   header  "TFEV" u8 version (1), i32 rank, i32 world size
//   blocks  u32 stored size, u32 raw size, u32 records, zstd-compressed
//           records, each a varint kind then its fields:
//             0 module: varint length, the module line (modules.hpp)
//             1 site:   varint length, SiteTable::format text
//             2 comm:   varint id (zigzag), varint members, varint each
//             3 field:  u8 kind (0 scalar, 1 list), varint length, name
//             4 event:  varint op, varint site, varint fields, each
//                       varint field, then a scalar (zigzag) or
//                       varint length and values (zigzag)
//             5 again:  varint k: the event k events back, once more
//   trailer u32 0xFFFFFFFF, u64 events recorded, u64 events dropped
// Sites and fields are numbered from 0 in the order their records appear,
// and a declaration comes before the first event that uses it. Peers are
// absolute ranks in the event's communicator, as in raw logs (rawlog.hpp).
// A file without a trailer (a rank that died) is read up to its last
// complete block.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/block_file_writer.hpp"
#include "tracefold/event.hpp"
#include "tracefold/modules.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {

class EventLogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Appends declarations and events to a file in compressed blocks, within
/// a byte budget. Never throws after open(): failures are kept in error()
/// and writing stops (the traced program must go on).
class EventLogWriter : public BlockFileWriter {
 public:
  /// Creates `path`; `max_bytes` bounds the file (0: no bound). Throws
  /// EventLogError if the file cannot be created.
  void open(const std::string& path, int32_t rank, int32_t world_size, uint64_t max_bytes,
            std::size_t block_bytes = 1 << 16);
  /// Declares a loaded module (the sites' frames name modules).
  void add_module(const Module& m);
  /// The next site (sites are numbered in the order they are added).
  void add_site(const CallSite& site);
  /// Declares communicator `id` with its members (world ranks), before the
  /// first event on it.
  void add_comm(int64_t id, const CommGroup& group);
  /// Declares the fields it uses that were not declared yet.
  void add_event(const Event& ev);
  /// Writes the records kept so far as a block (a crash then loses none).
  void flush();
  /// Writes the last block and the trailer, closes the file.
  void close();

  uint64_t recorded() const { return recorded_; }
  uint64_t dropped() const { return dropped_; }

 private:
  void end_record();
  // Recent events by hash (add_event), and the number of the one written
  // last there.
  static constexpr std::size_t kRecent = 256;
  struct Recent {
    Event ev;
    uint64_t index = UINT64_MAX;
  };
  std::vector<Recent> recent_ = std::vector<Recent>(kRecent);
  uint64_t events_ = 0;             // events written to blocks so far
  std::vector<int32_t> field_ids_;  // by FieldId: its number in the file, -1 none
  uint32_t fields_ = 0;
  uint64_t recorded_ = 0, dropped_ = 0;
  uint32_t block_events_ = 0;
};

/// One rank's log read back. Site ids of `events` index `sites`.
struct RankEventLog {
  int32_t rank = 0;
  int32_t world_size = 0;
  bool has_trailer = false;  ///< false: the file was cut (a rank that died)
  uint64_t dropped = 0;      ///< events past the writer's byte budget, not in `events`
  std::vector<Module> modules;
  std::vector<CallSite> sites;
  CommTable comms;
  std::vector<Event> events;
};

/// Largest raw (decompressed) block a reader accepts.
inline constexpr uint32_t kMaxEventLogBlockBytes = 16u << 20;

/// Reads one file; throws EventLogError naming the file, the byte and what
/// is wrong.
RankEventLog read_event_log_file(const std::string& path);
/// The same for a file's bytes; `source` names it in errors.
RankEventLog parse_event_log(std::span<const uint8_t> data, const std::string& source);

/// The header of the file at `path` (rank and world size; no records are
/// read). Throws EventLogError naming the file.
RankEventLog read_event_log_header(const std::string& path);

/// `dir/events-R.tfe`.
std::string event_log_path(const std::string& dir, int32_t rank);

/// A `--sample-only` run read back: the tables a folded trace would hold
/// (world size, call sites, modules, communicators; no nodes) and every
/// rank's events with their site ids in `tables.sites`.
struct UnfoldedRun {
  Trace tables;
  std::vector<std::vector<Event>> events;
  /// Ranks whose log ends without a trailer (the rank died).
  std::vector<int32_t> cut;
  /// Per rank: the events its writer dropped past the byte budget
  /// (RankEventLog::dropped; 0 for a log without a trailer).
  std::vector<uint64_t> dropped;
};

/// Whether `dir` holds the event logs of a `--sample-only` run.
bool is_unfolded_run(const std::string& dir);
/// Reads every rank's log in `dir` (the world size is rank 0's). Throws
/// EventLogError naming the file of the first problem, or the ranks
/// without a log.
UnfoldedRun read_unfolded_run(const std::string& dir);

}  // namespace tracefold
