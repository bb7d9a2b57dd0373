// Extrapolation through a plugin (plugin.hpp).
//
// Every rank's values of one field (count, loop trip count, peer, tag ...)
// are read as a block repeated R times: the block is the sequence's
// shortest period. The block is cut into segments, found on one rank of
// the input with the longest block and then checked on every rank of
// every input:
//   - a plugin peer sequence, equal value for value (peers are absolute);
//   - a plugin number sequence Q shifted (Q + b), a constant run as long
//     as Q (c, c, ...), or Q scaled (a*Q), b, c and a fitted over the
//     layout sizes;
//   - one number, fitted over the sizes (for a peer: an MPI constant, one
//     absolute rank or one relative distance).
// A loop's trip counts and the repeat counts R are structure: they are
// first read as a constant, then as a constant multiple of one of the
// plugin's one-number sequences (CG: L = log2 C, so a loop over the row
// partners has L or 2L iterations), then fitted over the sizes. Two or
// three inputs cannot tell L from C/2 (they agree at C = 2 and 4): the
// plugin's numbers come first because the user chose the plugin for the
// code; the diff against a real run is what confirms it.
#include <algorithm>
#include <map>
#include <optional>

#include "plugin_fit.hpp"

namespace tracefold::extrap::detail {

namespace {

constexpr uint64_t kMaxExpand = uint64_t{1} << 20;
constexpr int kSearchBudget = 20000;

std::size_t min_period(const std::vector<int64_t>& v) {
  const std::size_t n = v.size();
  if (n == 0) return 0;
  std::vector<std::size_t> fail(n, 0);
  for (std::size_t i = 1, k = 0; i < n; ++i) {
    while (k > 0 && v[i] != v[k]) k = fail[k - 1];
    if (v[i] == v[k]) ++k;
    fail[i] = k;
  }
  const std::size_t p = n - fail[n - 1];
  return n % p == 0 ? p : n;
}

enum class Kind { kPeerSeq, kShift, kRun, kScale, kConst };

struct Segment {
  Kind kind = Kind::kConst;
  int seq = -1;  // plugin sequence, for all kinds but kConst
};

// One rank's values: `block` repeated `reps` times (peers absolute).
struct RankBlock {
  std::size_t input = 0;
  int64_t rank = 0;
  std::vector<int64_t> block;
  int64_t reps = 0;
};

// What a segment evaluates to at the target.
struct SegResult {
  Segment seg;
  int64_t param = 0;
  enum class PeerMode { kNone, kSentinel, kAbsolute, kRelative } mode = PeerMode::kNone;
  std::string formula;
};

// The segment kinds that may start at `pos` of the reference block.
bool matches_at(const PluginFitter& f, const RankBlock& ref, std::size_t pos, const Segment& seg) {
  const std::vector<int64_t>& b = ref.block;
  if (seg.kind == Kind::kConst) return pos < b.size();
  const auto q = f.eval(seg.seq, ref.input, ref.rank);
  if (q.empty() || pos + q.size() > b.size()) return false;
  for (std::size_t j = 0; j < q.size(); ++j) {
    const int64_t v = b[pos + j];
    switch (seg.kind) {
      case Kind::kPeerSeq:
        if (v != q[j]) return false;
        break;
      case Kind::kShift:
        if (v - q[j] != b[pos] - q[0]) return false;
        break;
      case Kind::kRun:
        if (v != b[pos]) return false;
        break;
      case Kind::kScale:
        if (q[j] == 0 || v % q[j] != 0 || v / q[j] != b[pos] / q[0]) return false;
        break;
      case Kind::kConst:
        break;
    }
  }
  return true;
}

struct FieldFit {
  std::vector<SegResult> segs;
  int64_t reps = 0;
  std::string reps_formula;
};

// Checks `segs` on every rank of every input and fits their numbers.
std::optional<FieldFit> verify(const PluginFitter& f, const std::vector<RankBlock>& blocks,
                               const std::vector<Segment>& segs, bool peer, bool structure) {
  const std::size_t n = f.in.size();
  std::vector<PerInput> param(segs.size(), PerInput{std::vector<std::optional<int64_t>>(n)});
  std::vector<PerInput> rel = param;
  std::vector<bool> sentinel(segs.size(), false);
  PerInput reps{std::vector<std::optional<int64_t>>(n)};
  for (const RankBlock& rb : blocks) {
    std::size_t pos = 0;
    const int64_t world = f.in[rb.input].trace.world_size;
    for (std::size_t i = 0; i < segs.size(); ++i) {
      const Segment& s = segs[i];
      if (s.kind == Kind::kConst) {
        if (pos >= rb.block.size()) return std::nullopt;
        const int64_t v = rb.block[pos++];
        if (peer && is_sentinel(v)) {
          sentinel[i] = true;
          param[i].set(rb.input, v);
        } else if (peer) {
          param[i].set(rb.input, v);
          rel[i].set(rb.input, ((v - rb.rank) % world + world) % world);
        } else {
          param[i].set(rb.input, v);
        }
        continue;
      }
      const auto q = f.eval(s.seq, rb.input, rb.rank);
      if (pos + q.size() > rb.block.size()) return std::nullopt;
      for (std::size_t j = 0; j < q.size(); ++j) {
        const int64_t v = rb.block[pos + j];
        switch (s.kind) {
          case Kind::kPeerSeq:
            if (v != q[j]) return std::nullopt;
            break;
          case Kind::kShift:
            param[i].set(rb.input, v - q[j]);
            break;
          case Kind::kRun:
            param[i].set(rb.input, v);
            break;
          case Kind::kScale:
            if (q[j] == 0 || v % q[j] != 0) return std::nullopt;
            param[i].set(rb.input, v / q[j]);
            break;
          case Kind::kConst:
            break;
        }
      }
      pos += q.size();
    }
    if (pos != rb.block.size()) return std::nullopt;
    reps.set(rb.input, rb.reps);
  }
  FieldFit out;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    SegResult r{segs[i], 0, SegResult::PeerMode::kNone, ""};
    if (segs[i].kind == Kind::kPeerSeq) {
      out.segs.push_back(r);
      continue;
    }
    std::optional<int64_t> v;
    if (segs[i].kind == Kind::kConst && peer) {
      if (sentinel[i]) {
        // An MPI constant must be the same everywhere.
        std::optional<int64_t> one;
        for (const auto& x : param[i].v)
          if (x) {
            if (one && *one != *x) return std::nullopt;
            one = x;
          }
        if (param[i].conflict || !one || !is_sentinel(*one)) return std::nullopt;
        r.mode = SegResult::PeerMode::kSentinel;
        r.formula = format_value(*one);
        v = one;
      } else if ((v = f.fit(param[i], r.formula))) {
        r.mode = SegResult::PeerMode::kAbsolute;
        r.formula = "rank " + r.formula;
      } else if ((v = f.fit(rel[i], r.formula))) {
        r.mode = SegResult::PeerMode::kRelative;
        r.formula = "me + " + r.formula;
      }
      if (v && r.mode == SegResult::PeerMode::kAbsolute && (*v < 0 || *v >= f.world_target))
        return std::nullopt;
    } else if (segs[i].kind == Kind::kConst && structure) {
      v = f.fit_structure(param[i], r.formula);
    } else {
      v = f.fit(param[i], r.formula);
    }
    if (!v) return std::nullopt;
    r.param = *v;
    out.segs.push_back(r);
  }
  const auto rp = f.fit_structure(reps, out.reps_formula);
  if (!rp || *rp < 1) return std::nullopt;
  out.reps = *rp;
  return out;
}

// Depth-first search for a segmentation of the reference block that
// verify() accepts; candidates in the order the file comment gives.
bool search(const PluginFitter& f, const std::vector<RankBlock>& blocks, const RankBlock& ref,
            std::size_t pos, std::vector<Segment>& segs, bool peer, bool structure, int& budget,
            std::optional<FieldFit>& found) {
  if (--budget < 0) return false;
  if (pos == ref.block.size()) {
    found = verify(f, blocks, segs, peer, structure);
    return found.has_value();
  }
  std::vector<Segment> cands;
  if (peer) {
    for (std::size_t s = 0; s < f.seqs.size(); ++s)
      if (f.seqs[s].peers) cands.push_back({Kind::kPeerSeq, static_cast<int>(s)});
  } else if (!structure) {
    for (Kind k : {Kind::kShift, Kind::kRun, Kind::kScale})
      for (std::size_t s = 0; s < f.seqs.size(); ++s)
        if (!f.seqs[s].peers && f.eval(static_cast<int>(s), ref.input, ref.rank).size() >= 2)
          cands.push_back({k, static_cast<int>(s)});
  }
  cands.push_back({Kind::kConst, -1});
  for (const Segment& c : cands) {
    if (!matches_at(f, ref, pos, c)) continue;
    const std::size_t len = c.kind == Kind::kConst ? 1 : f.eval(c.seq, ref.input, ref.rank).size();
    segs.push_back(c);
    if (search(f, blocks, ref, pos + len, segs, peer, structure, budget, found)) return true;
    segs.pop_back();
  }
  return false;
}

std::string describe(const PluginFitter& f, const FieldFit& fit) {
  std::string s;
  for (const SegResult& r : fit.segs) {
    if (!s.empty()) s += ' ';
    const std::string name =
        r.seg.seq >= 0 ? f.seqs[static_cast<std::size_t>(r.seg.seq)].name : std::string();
    switch (r.seg.kind) {
      case Kind::kPeerSeq:
        s += "<" + name + ">";
        break;
      case Kind::kShift:
        s += "<" + name + (r.formula == "0" ? "" : " + [" + r.formula + "]") + ">";
        break;
      case Kind::kRun:
        s += "<[" + r.formula + "] x len " + name + ">";
        break;
      case Kind::kScale:
        s += "<[" + r.formula + "] * " + name + ">";
        break;
      case Kind::kConst:
        s += "[" + r.formula + "]";
        break;
    }
  }
  return "(" + s + ")*[" + fit.reps_formula + "]";
}

// The rank's values of `e` in input k (nullopt: the rank has none).
std::optional<RankBlock> block_of(const Elastic& e, std::size_t k, int32_t rank, int32_t world,
                                  bool peer, const std::string& what) {
  const ValueSeq* v = e.for_rank(rank);
  if (!v) return std::nullopt;
  if (v->is_histogram()) throw ExtrapError(what + ": lossy value histograms are not extrapolated");
  if (v->size() > kMaxExpand)
    throw ExtrapError(what + ": rank " + std::to_string(rank) + " has " +
                      std::to_string(v->size()) +
                      " values; the plugin path reads at most 2^20 per rank");
  std::vector<int64_t> all = v->to_vector();
  if (peer)
    for (int64_t& x : all)
      if (!is_sentinel(x)) x = (x + rank) % world;
  RankBlock rb;
  rb.input = k;
  rb.rank = rank;
  const std::size_t p = min_period(all);
  rb.block.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(p));
  rb.reps = p ? static_cast<int64_t>(all.size() / p) : 0;
  return rb;
}

}  // namespace

// One elastic of one node: the segmentation, checked on every rank of
// every input, evaluated on every rank of the target.
Elastic fit_plugin_elastic(const PluginFitter& f, const std::vector<const Elastic*>& per_input,
                           const std::string& what, bool peer, bool structure,
                           std::vector<std::string>& explain) {
  std::vector<RankBlock> blocks;
  const RankBlock* ref = nullptr;
  std::size_t present = 0;
  for (std::size_t k = 0; k < per_input.size(); ++k) present += per_input[k] != nullptr;
  if (present == 0) return {};
  if (present != per_input.size()) {
    std::string have, lack;
    for (std::size_t k = 0; k < per_input.size(); ++k)
      (per_input[k] ? have : lack) += " " + f.in[k].name;
    throw ExtrapError(what + ": present in" + have + " but not in" + lack);
  }
  for (std::size_t k = 0; k < per_input.size(); ++k) {
    const int32_t world = f.in[k].trace.world_size;
    for (int32_t r = 0; r < world; ++r) {
      auto rb = block_of(*per_input[k], k, r, world, peer, f.in[k].name + ": " + what);
      if (!rb)
        throw ExtrapError(f.in[k].name + ": " + what + ": rank " + std::to_string(r) +
                          " has no values; the plugin path needs every rank in every node");
      if (rb->block.empty()) continue;
      blocks.push_back(std::move(*rb));
    }
  }
  for (const auto& b : blocks)
    if (!ref || b.block.size() > ref->block.size() ||
        (b.block.size() == ref->block.size() && b.input > ref->input))
      ref = &b;
  if (!ref) return {};
  std::vector<Segment> segs;
  std::optional<FieldFit> fit;
  int budget = kSearchBudget;
  if (!search(f, blocks, *ref, 0, segs, peer, structure, budget, fit)) {
    std::string seen;
    for (std::size_t k = 0; k < per_input.size(); ++k) {
      const ValueSeq* v = per_input[k]->for_rank(0);
      seen += "\n  " + f.in[k].name + " rank 0: " + (v ? v->to_string() : std::string("-"));
    }
    throw ExtrapError(what + ": plugin " + f.plugin.name() +
                      " does not explain the values on every rank of every input (no chain of "
                      "its sequences and fitted numbers fits them)" +
                      (budget < 0 ? std::string(" within the search budget") : std::string()) +
                      ":" + seen);
  }
  explain.push_back("    " + what.substr(what.rfind(", ") + 2) + ": plugin " + f.plugin.name() +
                    ": " + describe(f, *fit));
  // The target's ranks, grouped by equal sequences.
  std::map<std::vector<int64_t>, std::vector<int32_t>> groups;
  for (int64_t r = 0; r < f.world_target; ++r) {
    std::vector<int64_t> block;
    for (const SegResult& s : fit->segs) {
      if (s.seg.kind == Kind::kConst) {
        int64_t v = s.param;
        if (s.mode == SegResult::PeerMode::kAbsolute)
          v = ((v - r) % f.world_target + f.world_target) % f.world_target;
        if (s.mode == SegResult::PeerMode::kRelative)
          v = ((v % f.world_target) + f.world_target) % f.world_target;
        block.push_back(v);
        continue;
      }
      for (int64_t q : f.eval_target(s.seg.seq, r)) {
        switch (s.seg.kind) {
          case Kind::kPeerSeq:
            if (q < 0 || q >= f.world_target)
              throw ExtrapError(what + ": plugin " + f.plugin.name() + " sequence " +
                                f.seqs[static_cast<std::size_t>(s.seg.seq)].name + " gives rank " +
                                std::to_string(q) + " for rank " + std::to_string(r) + " of " +
                                std::to_string(f.world_target));
            block.push_back(((q - r) % f.world_target + f.world_target) % f.world_target);
            break;
          case Kind::kShift:
            block.push_back(q + s.param);
            break;
          case Kind::kRun:
            block.push_back(s.param);
            break;
          case Kind::kScale:
            block.push_back(q * s.param);
            break;
          case Kind::kConst:
            break;
        }
      }
    }
    groups[block].push_back(static_cast<int32_t>(r));
  }
  Elastic out;
  for (auto& [block, ranks] : groups) {
    if (block.empty()) continue;
    ValueSeq one;
    for (int64_t v : block) one.push_back(v);
    ValueSeq all;
    all.append_n(one, static_cast<uint64_t>(fit->reps));
    out.entries().push_back({std::move(all), Ranklist::from_ranks(std::move(ranks))});
  }
  out.sort_entries();
  return out;
}

}  // namespace tracefold::extrap::detail
