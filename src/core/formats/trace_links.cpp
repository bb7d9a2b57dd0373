// Derived completion links in trace files (docs/format.md, "Derived links").
#include "trace_links.hpp"

#include <stdexcept>
#include <string>

#include "tracefold/event.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::links_form {
namespace {

// A derived list longer than this is refused on reading: one stored value
// must not make a reader allocate without bound.
constexpr int64_t kMaxDerived = int64_t{1} << 24;

// Rewrites a list field's values, list by list (a length L, then L values;
// `_` is no list), between the trace's form and the file's.
class Rewriter {
 public:
  explicit Rewriter(bool encode) : encode_(encode) {}
  bool at_boundary() const { return need_ == 0; }

  void feed(int64_t v, ValueSeq& out) {
    if (encode_) return encode(v, out);
    if (need_ > 0) {
      --need_;
      out.push_back(v);
    } else if (!is_sentinel(v) && v < 0) {
      if (-v > kMaxDerived)
        throw std::invalid_argument("a derived links list of " + std::to_string(-v) +
                                    " requests is above the limit of " +
                                    std::to_string(kMaxDerived));
      out.push_back(-v);
      for (int64_t k = -v; k >= 1; --k) out.push_back(k);
    } else {
      if (!is_sentinel(v)) need_ = static_cast<uint64_t>(v);
      out.push_back(v);
    }
  }

  // Encoding: what a list cut short at the end of the sequence held.
  void flush(ValueSeq& out) {
    for (int64_t v : cur_) out.push_back(v);
    cur_.clear();
    need_ = 0;
  }

 private:
  void encode(int64_t v, ValueSeq& out) {
    if (need_ == 0) {
      if (is_sentinel(v) || v <= 0) {
        out.push_back(v);
      } else {
        need_ = static_cast<uint64_t>(v);
        cur_.assign(1, v);
      }
      return;
    }
    cur_.push_back(v);
    if (--need_ > 0) return;
    const auto len = static_cast<int64_t>(cur_.size()) - 1;
    bool derived = true;
    for (int64_t k = 1; k <= len && derived; ++k) derived = cur_[k] == len - k + 1;
    if (derived) {
      out.push_back(-len);
      cur_.clear();
    } else {
      flush(out);
    }
  }

  bool encode_;
  uint64_t need_ = 0;         // values still to come in the current list
  std::vector<int64_t> cur_;  // encoding: the current list, its length first
};

// The rewritten sequence, folded by ValueSeq's own rules, so that reading
// back gives the folding the folder made. A repeated run of whole lists is
// rewritten once and repeated; one value repeated (MPI_Wait's `1 1` lists,
// folded as `1*2N`) after grouping a few of its repetitions.
ValueSeq rewrite(const ValueSeq& seq, bool encode) {
  Rewriter rw(encode);
  ValueSeq out;
  for (const ValueSeq::Run& run : seq.runs()) {
    uint64_t done = 0;
    if (run.reps >= 2 && rw.at_boundary()) {
      for (uint64_t k = 1; k <= 8 && 2 * k <= run.reps; ++k) {
        Rewriter probe = rw;
        ValueSeq once;
        for (uint64_t r = 0; r < k; ++r)
          for (int64_t v : run.pattern) probe.feed(v, once);
        if (!probe.at_boundary()) continue;
        out.append_n(once, run.reps / k);
        done = run.reps / k * k;
        break;
      }
    }
    for (uint64_t r = done; r < run.reps; ++r)
      for (int64_t v : run.pattern) rw.feed(v, out);
  }
  if (!rw.at_boundary()) {
    if (!encode) throw std::invalid_argument("a list ends before the values its length counts");
    rw.flush(out);
  }
  return out;
}

bool has_stored_derived(const ValueSeq& seq) {
  for (const ValueSeq::Run& run : seq.runs())
    for (int64_t v : run.pattern)
      if (v < 0 && !is_sentinel(v)) return true;
  return false;
}

bool is_links(FieldId f) {
  return f == FieldTable::links();
}

bool shortens(const ValueSeq& seq) {
  if (seq.is_histogram()) return false;
  const ValueSeq r = rewrite(seq, true);
  return r.size() < seq.size() && rewrite(r, false).same_representation(seq);
}

}  // namespace

bool has_derivable(const Trace& t) {
  for (const Node& n : t.nodes)
    for (const auto& [f, e] : n.fields)
      if (is_links(f))
        for (const ElasticEntry& entry : e.entries())
          if (shortens(entry.values)) return true;
  return false;
}

std::vector<std::optional<std::pair<FieldId, Elastic>>> stored(const Trace& t) {
  std::vector<std::optional<std::pair<FieldId, Elastic>>> out(t.nodes.size());
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    for (const auto& [f, e] : t.nodes[i].fields) {
      if (!is_links(f)) continue;
      Elastic s = e;
      bool changed = false;
      for (ElasticEntry& entry : s.entries()) {
        if (entry.values.is_histogram()) continue;
        ValueSeq r = rewrite(entry.values, true);
        // Only where reading gives back the very runs: the text form of a
        // trace read from a file is then the text form it was written from.
        if (r.size() < entry.values.size() && rewrite(r, false).same_representation(entry.values)) {
          entry.values = std::move(r);
          changed = true;
        }
      }
      if (changed) out[i].emplace(f, std::move(s));
    }
  }
  return out;
}

void derive(Node& n) {
  for (auto& [f, e] : n.fields) {
    if (!is_links(f)) continue;
    for (ElasticEntry& entry : e.entries()) {
      // An entry the writer stored as it is keeps its runs as they are.
      if (entry.values.is_histogram() || !has_stored_derived(entry.values)) continue;
      try {
        entry.values = rewrite(entry.values, false);
      } catch (const std::invalid_argument& err) {
        throw std::invalid_argument(std::string("field links: ") + err.what());
      }
    }
  }
}

}  // namespace tracefold::links_form
