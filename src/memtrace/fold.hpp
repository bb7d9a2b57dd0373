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
// core's value sequences fold. Between the two, a loop of events around a
// run with free positions (a CSR row loop) goes to core's folder as one
// event (fold_batch.hpp), its values in one list. Threads are ranks: the per-thread traces
// merge with core's merge, equal sequences sharing one entry of a ranklist.
//
// Lossless: MemStreamReader expands a folded trace back into each thread's
// exact recorded stream, every field of every record.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interleave.hpp"
#include "raw_reader.hpp"
#include "tracefold/folder.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::memtrace {

// zstd level of a memory trace's compact form (save_trace's compact_level).
// Its body is mostly the lists of values that follow data (a sparse
// matrix's columns): level 3 writes them within 0.5 % of level 9 at a third
// of the time and a tenth of level 19's, and the regular kernels' few KB
// about 12 % larger without level 19's 10 ms of setting up its tables,
// which is most of their fold (docs/memtrace.md "Sizes and speed").
inline constexpr int kTraceZstdLevel = 3;

struct MemFoldOptions {
  // Longest run body (references per iteration) the first level looks for.
  std::uint32_t max_body = 64;
  // Canonical addresses (docs/memtrace.md "Reproducible traces"): contexts
  // numbered by first use in stream order, and every static, stack and heap
  // data address replaced by one computed from its normalised address, so
  // that two runs of a deterministic program fold to the same bytes even
  // where the environment, the libraries' bases or the thread schedule
  // moved things. The raw data addresses of the run are then not kept.
  bool canonical = false;
  FoldOptions folder;
};

// The data address a canonical fold gives a reference of kind static or
// stack (heap addresses also need the log's first heap block: fold_logs).
// Each static module and each thread's stack gets a region of its own,
// far apart, the offset within it kept.
inline constexpr std::uint64_t kCanonicalStackTop = 0x7ff000000000ULL;
inline constexpr std::uint64_t kCanonicalHeapBase = 0x200000000000ULL;
inline std::uint64_t canonical_static(std::uint32_t module, std::int64_t offset) {
  return (std::uint64_t{module} << 36) + static_cast<std::uint64_t>(offset);
}
inline std::uint64_t canonical_stack(std::uint32_t owner, std::int64_t offset) {
  return kCanonicalStackTop - (std::uint64_t{owner} << 32) + static_cast<std::uint64_t>(offset);
}

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
// streams are the logs' threads, log by log in the order given. Ids are
// the trace's own (see MemTables): the first log keeps its context and
// module ids, and another log's context or module takes the id the trace
// already gives its call path or file, or the next free one. Throws
// RawFormatError naming the log when the logs traced different programs
// (another program file among their modules, one not a shared object) or
// a module at another load base.
Trace fold_raw_logs(const std::vector<std::filesystem::path>& dirs,
                    const MemFoldOptions& options = {}, MemFoldStats* stats = nullptr);

// What a folded memory trace keeps so that it can be merged with another
// and its sites named without the raw logs (docs/memtrace.md "Merging"):
// the ids its sites use, by content.
struct MemTables {
  // By module id (entry 0 unused; ids the trace does not name left empty):
  // the file whose statics a static reference's region names, or whose
  // code holds a site's instruction or a call path's call site, its load
  // base in the recorded run and the extent of its code.
  std::vector<Module> modules;
  // By context id used in the trace (a site's context, a heap block's
  // allocation context): its call path, the call instructions' addresses
  // from the thread's root down, hex, '>'-separated; "overflow" for the
  // tool's TFM_CTX_OVERFLOW, "?ID" for an id its log's table lacks.
  std::map<std::uint32_t, std::string> contexts;
  // The first log's highest context id: ids up to it are the first log's
  // own, and contexts new to the trace after the first log are numbered
  // from the next one in order of first use.
  std::uint32_t first_log_contexts = 0;
  // The first log's module count: modules new to the trace after the first
  // log are numbered from the next one. Only the modules the trace names
  // are kept in `modules` (a log lists every file with code).
  std::uint32_t first_log_modules = 0;
  // Streams (threads) of each log folded into the trace, in stream order.
  std::vector<std::uint32_t> log_streams;
};

// Stored in the trace's module table (`memmod<ID>` per module, `memctx`
// and `memctx<ID>` for the rest). Core's merge drops modules no site frame
// names: set them on the finished trace.
void set_mem_tables(Trace& trace, const MemTables& tables);
// The tables back; nullopt when the trace has no `memctx` entry (folded
// before the tables were stored: it cannot be merged).
std::optional<MemTables> mem_tables(const Trace& trace);
// The module table alone, indexed by id as read_modules gives it (empty if
// none), so that sites can be named after the raw log is gone.
std::vector<Module> trace_modules(const Trace& trace);

// Merges folded memory traces (names[i] names traces[i] in messages): the
// same trace as folding all their logs at once in the order given, byte
// for byte, since the streams are expanded, their ids renamed by content
// and folded again with `options` (those the inputs were folded with, for
// that equality). Throws std::runtime_error naming the file for a trace
// that is not a memory trace or has no tables, and for traces of
// different programs or module layouts.
Trace merge_memory_traces(const std::vector<Trace>& traces, const std::vector<std::string>& names,
                          const MemFoldOptions& options = {}, MemFoldStats* stats = nullptr);

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
