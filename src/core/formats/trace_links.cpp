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
// `_` is no list), between the trace's form and the file's. With sweeps,
// n one-request lists [n], [n-1], ..., [1] in a row -- a loop that tests
// its outstanding requests one by one, oldest first -- are the two values
// `1 -n`: a request entry is never negative otherwise.
class Rewriter {
 public:
  Rewriter(bool encode, bool sweeps) : encode_(encode), sweeps_(sweeps) {}
  bool at_boundary() const { return need_ == 0 && sweep_n_ == 0; }
  uint64_t sweeps_written() const { return sweeps_written_; }

  void feed(int64_t v, ValueSeq& out) {
    if (encode_) return encode(v, out);
    if (need_ > 0) {
      if (sweeps_ && single_ && !is_sentinel(v) && v < 0) {
        check_limit(-v, "sweep of");
        // The list length 1 is already out: the first list's entry, then
        // the n-1 lists after it.
        out.push_back(-v);
        for (int64_t k = -v - 1; k >= 1; --k) {
          out.push_back(1);
          out.push_back(k);
        }
      } else {
        out.push_back(v);
      }
      --need_;
      single_ = false;
    } else if (!is_sentinel(v) && v < 0) {
      check_limit(-v, "links list of");
      out.push_back(-v);
      for (int64_t k = -v; k >= 1; --k) out.push_back(k);
    } else {
      if (!is_sentinel(v)) need_ = static_cast<uint64_t>(v);
      single_ = v == 1;
      out.push_back(v);
    }
  }

  // Encoding: what a sweep or a list cut short at the end of the sequence
  // held.
  void flush(ValueSeq& out) {
    flush_sweep(out);
    for (int64_t v : cur_) out.push_back(v);
    cur_.clear();
    need_ = 0;
  }

 private:
  static void check_limit(int64_t n, const char* what) {
    if (n > kMaxDerived)
      throw std::invalid_argument(std::string("a derived ") + what + " " + std::to_string(n) +
                                  " requests is above the limit of " + std::to_string(kMaxDerived));
  }

  void encode(int64_t v, ValueSeq& out) {
    if (need_ == 0) {
      if (is_sentinel(v) || v <= 0) {
        flush_sweep(out);
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
    if (sweeps_ && len == 1 && !is_sentinel(cur_[1]) && cur_[1] >= 1) {
      const int64_t k = cur_[1];
      cur_.clear();
      if (sweep_n_ > 0 && k == sweep_next_) {
        if (k == 1) {
          out.push_back(1);
          out.push_back(-sweep_n_);
          sweep_n_ = 0;
          ++sweeps_written_;
        } else {
          --sweep_next_;
        }
        return;
      }
      flush_sweep(out);
      if (k == 1) {
        out.push_back(-1);
      } else {
        sweep_n_ = k;
        sweep_next_ = k - 1;
      }
      return;
    }
    flush_sweep(out);
    bool derived = true;
    for (int64_t k = 1; k <= len && derived; ++k) derived = cur_[k] == len - k + 1;
    if (derived) {
      out.push_back(-len);
      cur_.clear();
    } else {
      for (int64_t x : cur_) out.push_back(x);
      cur_.clear();
    }
  }

  // A sweep cut short: its lists as they are.
  void flush_sweep(ValueSeq& out) {
    for (int64_t k = sweep_n_; sweep_n_ > 0 && k > sweep_next_; --k) {
      out.push_back(1);
      out.push_back(k);
    }
    sweep_n_ = 0;
  }

  bool encode_;
  bool sweeps_;
  bool single_ = false;       // decoding: the current list has length 1
  uint64_t need_ = 0;         // values still to come in the current list
  std::vector<int64_t> cur_;  // encoding: the current list, its length first
  int64_t sweep_n_ = 0;       // encoding: the first list of a sweep, 0 if none
  int64_t sweep_next_ = 0;    // encoding: the entry the sweep's next list needs
  uint64_t sweeps_written_ = 0;
};

// The rewritten sequence, folded by ValueSeq's own rules, so that reading
// back gives the folding the folder made. A repeated run of whole lists is
// rewritten once and repeated; one value repeated (MPI_Wait's `1 1` lists,
// folded as `1*2N`) after grouping a few of its repetitions.
ValueSeq rewrite(const ValueSeq& seq, bool encode, bool sweeps,
                 uint64_t* sweeps_written = nullptr) {
  Rewriter rw(encode, sweeps);
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
  if (sweeps_written) *sweeps_written = rw.sweeps_written();
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

// The file form of one links entry: the shortest of the forms with sweeps
// and without that reads back as the very runs it was written from (the
// text form of a trace read from a file is then the text form it was
// written from); nullopt where the entry is stored as it is.
struct Form {
  ValueSeq values;
  bool sweeps = false;
};

std::optional<Form> file_form(const ValueSeq& seq) {
  if (seq.is_histogram()) return std::nullopt;
  std::optional<Form> best;
  for (const bool sweeps : {true, false}) {
    uint64_t used = 0;
    ValueSeq r = rewrite(seq, true, sweeps, &used);
    // Without a sweep, the form without sweeps is this very one.
    const bool last = sweeps && used == 0;
    if (r.size() < (best ? best->values.size() : seq.size()) &&
        rewrite(r, false, sweeps).same_representation(seq))
      best = Form{std::move(r), used > 0};
    if (last) break;
  }
  return best;
}

}  // namespace

bool has_derivable(const Trace& t) {
  for (const Node& n : t.nodes)
    for (const auto& [f, e] : n.fields)
      if (is_links(f))
        for (const ElasticEntry& entry : e.entries())
          if (file_form(entry.values)) return true;
  return false;
}

std::vector<std::optional<std::pair<FieldId, Elastic>>> stored(const Trace& t, bool* sweeps) {
  std::vector<std::optional<std::pair<FieldId, Elastic>>> out(t.nodes.size());
  if (sweeps) *sweeps = false;
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    for (const auto& [f, e] : t.nodes[i].fields) {
      if (!is_links(f)) continue;
      Elastic s = e;
      bool changed = false;
      for (ElasticEntry& entry : s.entries()) {
        if (auto form = file_form(entry.values)) {
          if (sweeps && form->sweeps) *sweeps = true;
          entry.values = std::move(form->values);
          changed = true;
        }
      }
      if (changed) out[i].emplace(f, std::move(s));
    }
  }
  return out;
}

void derive(Node& n, bool sweeps) {
  for (auto& [f, e] : n.fields) {
    if (!is_links(f)) continue;
    for (ElasticEntry& entry : e.entries()) {
      // An entry the writer stored as it is keeps its runs as they are.
      if (entry.values.is_histogram() || !has_stored_derived(entry.values)) continue;
      try {
        entry.values = rewrite(entry.values, false, sweeps);
      } catch (const std::invalid_argument& err) {
        throw std::invalid_argument(std::string("field links: ") + err.what());
      }
    }
  }
}

}  // namespace tracefold::links_form
