#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "tracefold/patterns.hpp"

namespace tracefold::patterns {

namespace {
constexpr Symbol kBoundary = Symbol{1} << 31;

// The furthest end of the kept occurrences that start at or before a
// position (a Fenwick tree over prefix maxima): an occurrence [p, p + l) lies
// inside a kept one exactly when that end reaches p + l.
class Reach {
 public:
  explicit Reach(std::size_t n) : tree_(n + 1, 0) {}
  void add(std::size_t start, std::size_t end) {
    for (std::size_t i = start + 1; i < tree_.size(); i += i & (~i + 1))
      tree_[i] = std::max(tree_[i], end);
  }
  std::size_t before(std::size_t pos) const {  // starts <= pos
    std::size_t best = 0;
    for (std::size_t i = pos + 1; i > 0; i -= i & (~i + 1)) best = std::max(best, tree_[i]);
    return best;
  }

 private:
  std::vector<std::size_t> tree_;
};
}  // namespace

std::vector<ProcessPattern> process_patterns(std::span<const Symbol> events,
                                             std::span<const uint32_t> context) {
  if (events.size() != context.size())
    throw std::invalid_argument("process_patterns: " + std::to_string(events.size()) +
                                " events but " + std::to_string(context.size()) + " contexts");
  // The rank's string with a distinct symbol between context runs, so no
  // repeat can span two runs; `at[k]`: the event at string position k.
  std::vector<Symbol> text;
  std::vector<std::size_t> at;
  text.reserve(events.size() + events.size() / 4);
  Symbol boundary = kBoundary;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i] >= kBoundary)
      throw std::invalid_argument("process_patterns: symbol " + std::to_string(events[i]) +
                                  " of event " + std::to_string(i) + " is 2^31 or more");
    if (i > 0 && context[i] != context[i - 1]) {
      text.push_back(boundary++);
      at.push_back(SIZE_MAX);
    }
    text.push_back(events[i]);
    at.push_back(i);
  }
  Reach kept(text.size());
  std::vector<ProcessPattern> out;
  for (const Repeat& r : maximal_repeats(text)) {
    if (r.length < 2) continue;
    if (text[r.positions[0]] >= kBoundary) continue;  // cannot: boundaries are unique
    std::vector<std::size_t> free;
    for (std::size_t p : r.positions)
      if (kept.before(p) < p + r.length) free.push_back(p);
    if (free.size() < 2) continue;
    ProcessPattern pat;
    pat.symbols.assign(text.begin() + static_cast<std::ptrdiff_t>(r.positions[0]),
                       text.begin() + static_cast<std::ptrdiff_t>(r.positions[0] + r.length));
    for (std::size_t p : free) pat.positions.push_back(at[p]);
    for (std::size_t p : free) kept.add(p, p + r.length);
    out.push_back(std::move(pat));
  }
  return out;
}

std::size_t iterations(const ProcessPattern& p) {
  if (p.loop) return p.loop->iterations;
  const std::vector<std::size_t>& at = p.positions;
  const std::size_t len = p.symbols.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < at.size();) {
    // A run of occurrences each overlapping the next at one distance.
    std::size_t j = i;
    const std::size_t d = i + 1 < at.size() ? at[i + 1] - at[i] : 0;
    while (j + 1 < at.size() && at[j + 1] - at[j] == d && d < len) ++j;
    const std::size_t span = at[j] + len - at[i];
    n += j > i && span % d == 0 ? span / d : j - i + 1;
    i = j + 1;
  }
  return n;
}

}  // namespace tracefold::patterns
