#include "interleave.hpp"

#include <string>

namespace tracefold::memtrace {
namespace {

class RawSource : public RefSource {
 public:
  explicit RawSource(const std::filesystem::path& f) : r_(std::make_unique<RawStreamReader>(f)) {}
  explicit RawSource(std::unique_ptr<RawStreamReader> r) : r_(std::move(r)) {}
  std::size_t next_batch(MemRef* out, std::size_t n) override { return r_->next_batch(out, n); }
  std::uint64_t records() const override { return r_->records(); }
  std::uint32_t thread() const { return r_->thread(); }

 private:
  std::unique_ptr<RawStreamReader> r_;
};

}  // namespace

std::unique_ptr<RefSource> raw_source(std::unique_ptr<RawStreamReader> r) {
  return std::make_unique<RawSource>(std::move(r));
}

InterleavedReader::InterleavedReader(const std::vector<std::filesystem::path>& files,
                                     std::uint64_t quantum)
    : quantum_(quantum) {
  for (const auto& f : files) {
    auto r = std::make_unique<RawSource>(f);
    if (r->thread() != readers_.size())
      throw RawFormatError(f.string() + ": header says thread " + std::to_string(r->thread()));
    readers_.push_back(std::move(r));
  }
  done_.assign(readers_.size(), false);
  live_ = readers_.size();
  cur_ = readers_.empty() ? 0 : readers_.size() - 1;  // the first turn goes to thread 0
}

InterleavedReader::InterleavedReader(std::vector<std::unique_ptr<RefSource>> sources,
                                     std::uint64_t quantum)
    : readers_(std::move(sources)), quantum_(quantum) {
  done_.assign(readers_.size(), false);
  live_ = readers_.size();
  cur_ = readers_.empty() ? 0 : readers_.size() - 1;  // the first turn goes to thread 0
}

std::uint64_t InterleavedReader::records() const {
  std::uint64_t n = 0;
  for (const auto& r : readers_) n += r->records();
  return n;
}

}  // namespace tracefold::memtrace
