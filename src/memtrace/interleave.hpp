// The threads' streams of a raw log merged into one reference stream for
// `tracefold memreplay`. The order between threads is not recorded
// (Valgrind runs one thread at a time and the tool keeps only each
// thread's own order), so it is a policy: round-robin turns of a fixed
// number of references, in thread order, a thread whose stream has ended
// dropping out; a quantum of 0 replays each thread's whole stream after
// the previous thread's.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "raw_reader.hpp"

namespace tracefold::memtrace {

// One thread's reference stream, from a raw log or a folded trace.
class RefSource {
 public:
  virtual ~RefSource() = default;
  // Up to n references into out; fewer only at the end (0 there).
  virtual std::size_t next_batch(MemRef* out, std::size_t n) = 0;
  // References in the stream when known beforehand, else 0.
  virtual std::uint64_t records() const { return 0; }
};

// A RefSource over one raw stream file already opened.
std::unique_ptr<RefSource> raw_source(std::unique_ptr<RawStreamReader> r);

class InterleavedReader {
 public:
  // files[t] is thread t's stream (raw_stream_files(dir)); each header's
  // thread number must be its index.
  InterleavedReader(const std::vector<std::filesystem::path>& files, std::uint64_t quantum);
  // sources[t] is thread t's stream.
  InterleavedReader(std::vector<std::unique_ptr<RefSource>> sources, std::uint64_t quantum);

  std::uint32_t threads() const { return static_cast<std::uint32_t>(readers_.size()); }
  std::uint64_t records() const;  // all streams' records, from the files' lengths

  // The next reference and its thread; false when every stream has ended.
  // RawFormatError from the streams passes through.
  bool next(std::uint32_t& thread, MemRef& ref) { return next_batch(thread, &ref, 1) == 1; }

  // Up to n references of one thread's turn into out, their thread in
  // `thread`; 0 when every stream has ended.
  std::size_t next_batch(std::uint32_t& thread, MemRef* out, std::size_t n) {
    while (live_ > 0) {
      if (left_ == 0 || done_[cur_]) {
        do cur_ = cur_ + 1 == readers_.size() ? 0 : cur_ + 1;
        while (done_[cur_]);
        left_ = quantum_;
      }
      const std::size_t want = quantum_ == 0 || left_ > n ? n : static_cast<std::size_t>(left_);
      const std::size_t got = readers_[cur_]->next_batch(out, want);
      if (got > 0) {
        thread = static_cast<std::uint32_t>(cur_);
        left_ -= got;  // a quantum of 0 wraps to "never ends"
        if (got == want) return got;
      }
      done_[cur_] = true;  // the stream ended within this batch
      live_--;
      if (got > 0) return got;
    }
    return 0;
  }

 private:
  std::vector<std::unique_ptr<RefSource>> readers_;
  std::vector<bool> done_;
  std::size_t live_ = 0;
  std::size_t cur_ = 0;
  std::uint64_t quantum_ = 0;
  std::uint64_t left_ = 0;
};

}  // namespace tracefold::memtrace
