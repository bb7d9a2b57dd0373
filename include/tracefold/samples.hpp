// Call-path samples (`tracefold record --sample`): where each thread of a
// rank was, every sampling period, on the same clock as the rank's timeline.
// The MPI calls are known exactly from the timeline (timeline_io.hpp);
// samples are there to say what the computation between them did, which is
// what `tracefold diagnose` needs to name the cause of a loss. No MPI here.
//
// Frames are stored once, as a tree of calling contexts per rank (node 0 is
// the root; a node is one frame, module + offset, under its caller), so a
// sample is a context id and a few small deltas: the file stays at a few
// bytes per sample however deep the stacks are.
//
// File TRACE.timeline/samples-R.tfs (little-endian, docs/format.md):
//   header  "TFSM" u8 version (3; 1 and 2 are read too), i32 rank, i32 world size,
//           i64 period ns (the period asked for),
//           u8 clock (0 wall, 1 processor time)
//   blocks  u32 stored size, u32 raw size, u32 records, zstd-compressed
//           records, each a varint kind then its fields:
//             0 module:  varint length, the module line (modules.hpp)
//             1 context: varint parent, varint module, varint offset
//             2 sample:  varint (time - previous sample's time, zigzag),
//                        varint context, varint thread,
//                        varint (mpi event - previous sample's, zigzag),
//                        varint lca depth, u8 flags (1: inside an MPI call)
//             3 period:  varint thread, varint (time - previous sample's
//                        time, zigzag), varint period ns: that thread's
//                        samples from this time on are this period apart
//                        (the sampler lowered its rate: its handler cost
//                        more than 5 % of the period). Versions 2 on.
//             4 thread:  varint sampler thread, varint stream: the
//                        sampler's thread (the number in sample and period
//                        records) is the thread whose calls the timeline's
//                        records name by this number (by first MPI call).
//                        Once per thread that called MPI; version 3.
//   trailer u32 0xFFFFFFFF, u64 samples taken, u64 samples dropped,
//           i64 handler cost median ns, i64 handler cost 99th percentile ns,
//           (version 3) u32 n, n x i32: the trace's number of each stream
//           (as the timeline's trailer has them), n the threads that
//           called MPI
// A module or context record comes before the first sample that uses it,
// so a file cut short (a run that died) is read up to its last block. A
// thread record may come after samples of its thread (the sampler learns a
// thread's stream at its first MPI call): the reader names threads once
// the whole file is read.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracefold/block_file_writer.hpp"
#include "tracefold/modules.hpp"

namespace tracefold {

class SamplesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the sampling timer counts.
enum class SampleClock : uint8_t {
  kWall = 0,  ///< CLOCK_MONOTONIC: a rank blocked in a wait is still sampled
  kCpu = 1,   ///< the thread's processor time: waits get no samples
};

/// One node of a rank's calling-context tree: a frame under its caller.
struct SampleContext {
  uint32_t parent = 0;  ///< node of the caller (0: the root, i.e. outermost frame)
  uint32_t module = 0;  ///< index into RankSamples::modules
  uint64_t offset = 0;  ///< the frame's offset in its module (modules.hpp Frame)
};

struct Sample {
  int64_t time_ns = 0;   ///< on the rank's timeline clock (before correction to rank 0's)
  uint32_t context = 0;  ///< innermost frame's context node; 0 when the stack is unknown
  /// The trace's number of the thread (its location is thread * world size
  /// + rank, as in the timeline's records) when the thread called MPI,
  /// i.e. below RankSamples::trace_threads; threads that never did are
  /// numbered from trace_threads on, in the order their sampling began.
  /// 0 is always the thread that called MPI_Init. Files before version 3:
  /// the sampler's numbers (RankSamples::threads_named).
  uint32_t thread = 0;
  /// Index of the rank's MPI event the sample fell into (in_mpi), else of
  /// the next event the rank will record: the same numbering as the
  /// timeline's records and the folded trace's expansion.
  uint64_t mpi_event = 0;
  /// Depth (1 = outermost) of the deepest frame known unchanged since this
  /// thread's previous sample: that frame's call was still running. 0: none.
  uint16_t lca_depth = 0;
  bool in_mpi = false;  ///< inside a wrapped MPI call (no unwind was done)
};

/// A thread's sampling period from `time_ns` on (the sampler lowers its
/// rate during a run when its handler costs too much; docs/sampling.md).
struct SamplePeriod {
  uint32_t thread = 0;
  int64_t time_ns = 0;  ///< the first sample at the new period (same clock as its samples)
  int64_t period_ns = 0;
};

/// One rank's samples, as read back.
struct RankSamples {
  int32_t rank = 0;
  int32_t world_size = 0;
  int64_t period_ns = 0;  ///< the period asked for, every thread's at first
  SampleClock clock = SampleClock::kWall;
  /// Changes of a thread's period, in file order (per thread in time order).
  std::vector<SamplePeriod> periods;
  std::vector<Module> modules;
  std::vector<SampleContext> contexts;  ///< [0] is the root and has no frame
  std::vector<Sample> samples;          ///< in time order per thread
  bool has_trailer = false;             ///< false: the run died (file read to its last block)
  uint64_t taken = 0;                   ///< samples the handler took (trailer)
  uint64_t dropped = 0;                 ///< samples lost (buffer full, size bound)
  int64_t handler_median_ns = -1, handler_p99_ns = -1;  ///< -1: not measured
  std::string source;                                   ///< the file, for error messages
  /// The rank's threads that called MPI (its threads in the trace and the
  /// timeline); without a trailer, those the file names. At least 1.
  uint32_t trace_threads = 1;
  /// False for files before version 3: thread numbers are then the
  /// sampler's (0 the MPI_Init thread, the others by when their sampling
  /// began), which need not be the trace's.
  bool threads_named = true;

  /// Frames of `context`, outermost first (empty for 0).
  std::vector<uint32_t> path(uint32_t context) const;
  /// Depth of `context` (0 for the root).
  std::size_t depth(uint32_t context) const;
  /// The period `thread` sampled at, at `time_ns`: the time one of its
  /// samples then stands for.
  int64_t period_at(uint32_t thread, int64_t time_ns) const;
  /// The trace's location (thread * world size + rank) of `thread`'s
  /// samples; -1 for a thread that never called MPI, or one not known to
  /// have (files before version 3: every thread but 0).
  int32_t location(uint32_t thread) const;
};

/// Reads one file; throws SamplesError naming the file and what is wrong.
RankSamples read_samples_file(const std::string& path);
/// Reads the bytes of a samples file; `source` names it in errors.
RankSamples parse_samples(std::span<const uint8_t> data, const std::string& source);
/// Writes `samples` as one file (tests, conversions; the recorder streams
/// the same layout through SamplesWriter). Throws SamplesError.
void write_samples_file(const std::string& path, const RankSamples& samples);

/// Appends modules, contexts and samples to a file in compressed blocks,
/// within a byte budget, as TimelineWriter does for a timeline. Never throws
/// after open(): failures are kept in error() and writing stops (the traced
/// program must go on). Ids are handed out in the order of the calls:
/// modules from 0, contexts from 1 (0 is the root).
class SamplesWriter : public BlockFileWriter {
 public:
  /// Creates `path`. `max_bytes` bounds the file (0: no bound); once a block
  /// would pass it, that block's samples and all later ones are counted as
  /// dropped. Throws SamplesError if the file cannot be created.
  void open(const std::string& path, int32_t rank, int32_t world_size, int64_t period_ns,
            SampleClock clock, uint64_t max_bytes, std::size_t block_bytes = 1 << 16);
  /// The id the module gets.
  uint32_t add_module(const Module& m);
  /// The id the context gets. `parent` and `module` must have been added.
  uint32_t add_context(uint32_t parent, uint32_t module, uint64_t offset);
  void add_sample(const Sample& s);
  /// `thread`'s samples from `time_ns` on are `period_ns` apart. Comes
  /// before the first sample at that period.
  void add_period(uint32_t thread, int64_t time_ns, int64_t period_ns);
  /// Sampler thread `thread` is the one whose stream is `stream` (the
  /// timeline records' numbering, by first MPI call). Once per thread,
  /// anywhere in the file.
  void add_thread(uint32_t thread, uint32_t stream);
  /// Samples lost before they reached the writer (they count as taken too).
  void add_dropped(uint64_t n) { dropped_ += n; }
  /// Writes the current block (e.g. before the process may die).
  void flush();
  /// Writes the last block and the trailer, closes the file. -1: not
  /// measured. `trace_threads[s]`: the trace's number of stream `s`, one
  /// per thread that called MPI (the identity when the trace keeps the
  /// first-call order).
  void close(int64_t handler_median_ns, int64_t handler_p99_ns,
             const std::vector<int32_t>& trace_threads = {0});

  uint32_t modules() const { return modules_; }
  uint32_t contexts() const { return contexts_; }
  uint64_t recorded() const { return recorded_; }
  uint64_t dropped() const { return dropped_; }

 private:
  void end_record();

  uint32_t block_samples_ = 0;
  int64_t last_time_ = 0;
  uint64_t last_event_ = 0;
  uint32_t modules_ = 0, contexts_ = 1;
  uint64_t recorded_ = 0;
  uint64_t dropped_ = 0;
};

/// Largest raw (decompressed) block a reader accepts (as for timelines).
inline constexpr uint32_t kMaxSamplesBlockBytes = 16u << 20;

/// The path `record --sample` writes rank `rank`'s samples to.
std::string samples_path(const std::string& timeline_dir, int32_t rank);

}  // namespace tracefold
