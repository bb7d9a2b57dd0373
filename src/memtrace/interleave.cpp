#include "interleave.hpp"

#include <string>

namespace tracefold::memtrace {

InterleavedReader::InterleavedReader(const std::vector<std::filesystem::path>& files,
                                     std::uint64_t quantum)
    : quantum_(quantum) {
  for (const auto& f : files) {
    readers_.push_back(std::make_unique<RawStreamReader>(f));
    if (readers_.back()->thread() != readers_.size() - 1)
      throw RawFormatError(f.string() + ": header says thread " +
                           std::to_string(readers_.back()->thread()));
  }
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
