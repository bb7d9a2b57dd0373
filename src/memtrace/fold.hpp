// Folding of memory-reference streams with core's folding engine (seed 001's
// RSD/PRSD, extended to non-rectangular loops).
//
// Two levels. The first, here and cheap per reference, finds runs: a body of
// up to `max_body` references whose access sites repeat in the same order,
// each site's offset advancing by its own constant stride from one
// iteration to the next, everything else equal (the seed's RSD, several
// interleaved sites at once). References in no run stay single. The second
// level is core's Folder: a run becomes a `memrun` event (its width and trip
// count) followed by one `mem` event per body site, a single reference one
// `mem` event, and the Folder folds that event stream into loops exactly as
// it folds MPI calls, the sites playing the call sites. Numbers go in as
// differences from the site's previous value (offsets) or the previous run
// (trip counts), so that bases and trip counts that grow linearly from one
// outer iteration to the next (a triangular loop) are repeated values, which
// core's value sequences fold. Threads are ranks: the per-thread traces
// merge with core's merge, equal sequences sharing one entry of a ranklist.
//
// Lossless: MemStreamReader expands a folded trace back into each thread's
// exact recorded stream, every field of every record.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "interleave.hpp"
#include "raw_reader.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::memtrace {

struct MemFoldOptions {
  // Longest run body (references per iteration) the first level looks for.
  std::uint32_t max_body = 64;
  FoldOptions folder;
};

struct MemFoldStats {
  std::uint64_t refs = 0;     // references read
  std::uint64_t runs = 0;     // runs the first level found
  std::uint64_t in_runs = 0;  // references covered by runs
  std::uint64_t events = 0;   // events handed to core's folder
};

// A site's first offset, data-address base (daddr - offset) and owner in
// one thread: what its later values are stored as differences from.
struct SiteOrigin {
  using Values = std::array<std::int64_t, 3>;  // offset, base, owner
  SiteId site = 0;
  Values values{};
};

// Folds one thread's references as they come (append), without holding the
// stream. All threads of a trace share `sites` (the access-site table).
class ThreadFolder {
 public:
  ThreadFolder(std::uint32_t thread, SiteTable& sites, const MemFoldOptions& options = {});
  ~ThreadFolder();
  ThreadFolder(const ThreadFolder&) = delete;
  ThreadFolder& operator=(const ThreadFolder&) = delete;

  void append(const MemRef* refs, std::size_t n);
  // Ends the stream; the folded single-thread trace of a world of `threads`.
  Trace finish(std::uint32_t threads);
  const MemFoldStats& stats() const;
  // After finish: the origins of the sites this thread used, by site.
  std::vector<SiteOrigin> origins() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Merges the streams' traces (traces[s] and origins[s] of stream s, their
// sites from one table). Each stream's trace gets a `memorg` node per site
// it used, first, holding the origins as a + b * thread + c * log +
// residual, the coefficients fitted over the streams that used the site: a
// base linear in the thread number (each thread its own slice) and in the
// rank is then one value for all streams (the seed's EPRSD), anything else
// a residual of the stream's own. per_log: the streams of each log (MPI
// rank), stream s being thread s % per_log of log s / per_log; 0 for one
// log (thread = stream, no c). With several logs each stream also gets a
// `memorg` node of its own (site `memstream`) with per_log and its log's heap
// shift, which its heap sites' bases are fitted after.
Trace merge_threads(std::vector<Trace> traces, const std::vector<std::vector<SiteOrigin>>& origins,
                    std::uint32_t per_log = 0);

// Folds every thread-N.bin of a --raw-log directory and merges the threads.
Trace fold_raw_log(const std::filesystem::path& dir, const MemFoldOptions& options = {},
                   MemFoldStats* stats = nullptr);
// The same for several logs (one per MPI rank, say) into one trace: its
// streams are the logs' threads, log by log in the order given. Contexts
// (and heap blocks' allocation contexts) carry the first log's ids: a later
// log's are renumbered by call path (see fold.cpp's ContextMap).
Trace fold_raw_logs(const std::vector<std::filesystem::path>& dirs,
                    const MemFoldOptions& options = {}, MemFoldStats* stats = nullptr);

// The module table of a raw log (modules.bin: the files whose statics are
// module id + offset, and their load bases) kept in a folded trace's
// module table, as `memmod<ID>` (path: the file, base: the load base in the
// recorded run), so that sites can be named after the raw log is gone.
// With several logs the table is the first log's. Core's merge drops
// modules no site frame names: set it on the finished trace.
void set_trace_modules(Trace& trace, const std::vector<Module>& modules);
// The table back, indexed by id as read_modules gives it (empty if none).
std::vector<Module> trace_modules(const Trace& trace);

// Whether `trace` is a folded memory trace (its events are mem/memrun).
bool is_memory_trace(const Trace& trace);

// One thread's references from a folded trace, in recorded order.
class MemStreamReader : public RefSource {
 public:
  MemStreamReader(const Trace& trace, std::uint32_t thread);
  ~MemStreamReader() override;
  std::size_t next_batch(MemRef* out, std::size_t n) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sources for InterleavedReader: every thread of a folded trace (which must
// outlive them).
std::vector<std::unique_ptr<RefSource>> folded_sources(const Trace& trace);

}  // namespace tracefold::memtrace
