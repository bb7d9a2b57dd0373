#include "tracefold/members.hpp"

#include <algorithm>
#include <stdexcept>

namespace tracefold {

namespace {
// A list keeps runs while they hold at least this many ranks each on
// average (a Run is 24 bytes, a spelled-out rank 4), and always when it has
// few runs: a handful of short runs costs less than deciding otherwise.
constexpr std::size_t kRanksPerRun = 6;
constexpr std::size_t kFewRuns = 8;
}  // namespace

int32_t MemberList::const_iterator::operator*() const {
  if (list_->explicit_) return list_->list_[index_];
  const Run& r = list_->runs_[run_];
  return static_cast<int32_t>(r.first + static_cast<int64_t>(r.stride) * pos_);
}

MemberList::const_iterator& MemberList::const_iterator::operator++() {
  ++index_;
  if (!list_->explicit_ && ++pos_ == list_->runs_[run_].count) {
    ++run_;
    pos_ = 0;
  }
  return *this;
}

MemberList::MemberList(std::initializer_list<int32_t> ranks) {
  for (int32_t r : ranks) push_back(r);
}

MemberList::MemberList(const std::vector<int32_t>& ranks) {
  for (int32_t r : ranks) push_back(r);
}

MemberList MemberList::run(int32_t first, int32_t stride, int64_t count) {
  MemberList m;
  m.append(first, stride, count);
  return m;
}

MemberList MemberList::from_ranklist(const Ranklist& r) {
  MemberList m;
  r.for_each_interval(
      [&m](int32_t lo, int32_t hi) { m.append(lo, 1, static_cast<int64_t>(hi) - lo + 1); });
  return m;
}

int32_t MemberList::operator[](std::size_t i) const {
  if (explicit_) return list_[i];
  auto it = runs_.begin();
  if (runs_.size() > 1) {
    it = std::upper_bound(runs_.begin(), runs_.end(), static_cast<int64_t>(i),
                          [](int64_t x, const Run& r) { return x < r.offset; });
    --it;
  }
  return static_cast<int32_t>(it->first + static_cast<int64_t>(it->stride) *
                                              (static_cast<int64_t>(i) - it->offset));
}

int32_t MemberList::at(std::size_t i) const {
  if (i >= size_)
    throw std::out_of_range("member " + std::to_string(i) + " of a group of " +
                            std::to_string(size_));
  return (*this)[i];
}

MemberList::const_iterator MemberList::begin() const {
  const_iterator it;
  it.list_ = this;
  return it;
}

MemberList::const_iterator MemberList::end() const {
  const_iterator it;
  it.list_ = this;
  it.index_ = size_;
  it.run_ = runs_.size();
  return it;
}

void MemberList::push_back(int32_t rank) {
  append(rank, 0, 1);
}

void MemberList::append(int32_t first, int32_t stride, int64_t count) {
  if (count <= 0) return;
  if (explicit_) {
    list_.reserve(list_.size() + static_cast<std::size_t>(count));
    for (int64_t k = 0; k < count; ++k)
      list_.push_back(static_cast<int32_t>(first + static_cast<int64_t>(stride) * k));
    size_ += static_cast<std::size_t>(count);
    return;
  }
  size_ += static_cast<std::size_t>(count);
  // Rank by rank as push_back would: the first ranks may extend the last
  // run (or make a one-rank run a two-rank one), the rest joins it only
  // with the same step.
  while (count > 0 && !runs_.empty()) {
    Run& last = runs_.back();
    if (last.count == 1) {
      last.stride = static_cast<int32_t>(static_cast<int64_t>(first) - last.first);
    } else if (last.first + static_cast<int64_t>(last.stride) * last.count != first) {
      break;
    } else if (count > 1 && stride == last.stride) {
      last.count += count;
      return maybe_spell_out();
    }
    ++last.count;
    first = static_cast<int32_t>(first + static_cast<int64_t>(stride));
    --count;
  }
  if (count == 0) return maybe_spell_out();
  const int64_t offset = static_cast<int64_t>(size_) - count;
  runs_.push_back(Run{first, count == 1 ? 0 : stride, count, offset});
  maybe_spell_out();
}

void MemberList::maybe_spell_out() {
  if (runs_.size() <= kFewRuns || runs_.size() * kRanksPerRun <= size_) return;
  std::vector<int32_t> all = to_vector();
  runs_ = {};
  list_ = std::move(all);
  explicit_ = true;
}

bool MemberList::ascending() const {
  if (explicit_) {
    for (std::size_t i = 1; i < list_.size(); ++i)
      if (list_[i] <= list_[i - 1]) return false;
    return true;
  }
  for (std::size_t k = 0; k < runs_.size(); ++k) {
    const Run& r = runs_[k];
    if (r.count > 1 && r.stride <= 0) return false;
    if (k > 0) {
      const Run& p = runs_[k - 1];
      if (r.first <= p.first + static_cast<int64_t>(p.stride) * (p.count - 1)) return false;
    }
  }
  return true;
}

Ranklist MemberList::to_ranklist() const {
  if (explicit_) return Ranklist::from_ranks(list_);
  std::vector<Ranklist::Section> sections;
  sections.reserve(runs_.size());
  for (const Run& r : runs_) {
    Ranklist::Section s{r.first, {}};
    if (r.count > 1) s.dims.emplace_back(static_cast<int32_t>(r.count), r.stride);
    sections.push_back(std::move(s));
  }
  return Ranklist::from_sections(sections);
}

std::vector<int32_t> MemberList::to_vector() const {
  if (explicit_) return list_;
  std::vector<int32_t> out;
  out.reserve(size_);
  for (int32_t r : *this) out.push_back(r);
  return out;
}

std::size_t MemberList::memory_bytes() const {
  return runs_.capacity() * sizeof(Run) + list_.capacity() * sizeof(int32_t);
}

bool operator==(const MemberList& a, const MemberList& b) {
  if (a.size_ != b.size_) return false;
  if (!a.explicit_ && !b.explicit_ && a.runs_ == b.runs_) return true;
  if (a.explicit_ && b.explicit_) return a.list_ == b.list_;
  return std::equal(a.begin(), a.end(), b.begin());
}

std::strong_ordering operator<=>(const MemberList& a, const MemberList& b) {
  auto ia = a.begin(), ib = b.begin();
  const auto ea = a.end(), eb = b.end();
  for (; ia != ea && ib != eb; ++ia, ++ib) {
    const int32_t x = *ia, y = *ib;
    if (x != y) return x <=> y;
  }
  return a.size_ <=> b.size_;
}

}  // namespace tracefold
