// Dropping a request with its completion's link to it (request_cut.hpp).
#include "tracefold/extrap/request_cut.hpp"

#include <algorithm>
#include <cstddef>

#include "tracefold/op_class.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::extrap {

namespace {

struct Fields {
  FieldId srcs, mtags, index, indices, outcount, req;
};

const Fields& fields() {
  static const Fields f = [] {
    auto scalar = [](const char* n) { return FieldTable::intern(n, FieldKind::kScalar); };
    auto list = [](const char* n) { return FieldTable::intern(n, FieldKind::kList); };
    return Fields{list("srcs"),    list("mtags"),      scalar("index"),
                  list("indices"), scalar("outcount"), scalar("req")};
  }();
  return f;
}

FieldValue* find_mut(Event& e, FieldId f) {
  return const_cast<FieldValue*>(e.find(f));
}

// Removes the positions `gone` marks from a list that runs along the links
// (one value per request); a list of another length is left alone.
void cut_list(Event& e, FieldId f, const std::vector<bool>& gone) {
  FieldValue* fv = find_mut(e, f);
  if (!fv || fv->list.size() != gone.size()) return;
  std::vector<int64_t> kept;
  for (std::size_t k = 0; k < gone.size(); ++k)
    if (!gone[k]) kept.push_back(fv->list[k]);
  fv->list = std::move(kept);
}

}  // namespace

bool RequestCut::pass(Event& e, bool keep) {
  const bool creates = OpTable::makes_request(e.op);
  FieldValue* links = keep && any_dropped_ ? find_mut(e, FieldTable::links()) : nullptr;
  if (links && !links->list.empty()) {
    const auto created = static_cast<int64_t>(kept_at_.size());
    const std::size_t n = links->list.size();
    std::vector<bool> gone(n, false);
    std::size_t named = 0, cut = 0;
    for (std::size_t k = 0; k < n; ++k) {
      int64_t& d = links->list[k];
      if (is_sentinel(d) || d <= 0 || d > created) continue;  // no call of this rank
      ++named;
      const int64_t at = kept_at_[static_cast<std::size_t>(created - d)];
      if (at < 0) {
        gone[k] = true;
        ++cut;
      } else {
        d = kept_ - at;
      }
    }
    if (cut > 0) {
      // Position k of the request array -> its position once the dropped
      // ones are gone (-1: dropped).
      std::vector<int64_t> moved(n, -1);
      for (std::size_t k = 0, m = 0; k < n; ++k)
        if (!gone[k]) moved[k] = static_cast<int64_t>(m++);
      bool empty = cut == named;
      const Fields& f = fields();
      const int64_t index = e.get(f.index);
      if (index != kAbsent && !is_sentinel(index) && index >= 0 &&
          static_cast<std::size_t>(index) < n) {
        // Waitany/Testany: the request it completed went with its call.
        if (gone[static_cast<std::size_t>(index)])
          empty = true;
        else
          e.set(f.index, moved[static_cast<std::size_t>(index)]);
      }
      if (FieldValue* idx = find_mut(e, f.indices)) {
        std::vector<int64_t> left;
        for (int64_t i : idx->list)
          if (i < 0 || static_cast<std::size_t>(i) >= n)
            left.push_back(i);
          else if (!gone[static_cast<std::size_t>(i)])
            left.push_back(moved[static_cast<std::size_t>(i)]);
        // Waitsome/Testsome whose completed requests were all dropped.
        if (!idx->list.empty() && left.empty()) empty = true;
        idx->list = std::move(left);
        if (e.get(f.outcount) != kAbsent && !is_sentinel(e.get(f.outcount)))
          e.set(f.outcount, static_cast<int64_t>(idx->list.size()));
      }
      if (empty) {
        keep = false;
        ++completions_dropped_;
      } else {
        cut_list(e, f.srcs, gone);
        cut_list(e, f.mtags, gone);
        if (e.get(f.req) == static_cast<int64_t>(n)) e.set(f.req, static_cast<int64_t>(n - cut));
        // (found again: the fields above may have moved)
        FieldValue* l = find_mut(e, FieldTable::links());
        std::vector<int64_t> left;
        for (std::size_t k = 0; k < n; ++k)
          if (!gone[k]) left.push_back(l->list[k]);
        l->list = std::move(left);
        links_cut_ += cut;
      }
    }
  }
  if (creates) {
    kept_at_.push_back(keep ? kept_++ : -1);
    if (!keep) any_dropped_ = true;
  }
  return keep;
}

}  // namespace tracefold::extrap
