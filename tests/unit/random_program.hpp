// Seeded generator of random SPMD, MPI-like programs for property tests.
//
// A RandomProgram is one program text (a small AST of calls, loops and
// branches) shared by all P ranks, as in an SPMD code; running it as rank r
// yields that rank's event sequence. Everything is a pure function of the
// seed, the options and the rank (no global state, no std:: distributions,
// whose results differ between standard libraries), so a failing seed
// reproduces anywhere.
//
// What the programs contain:
//   - nested loops (up to GenOptions::max_depth levels) whose trip counts are
//     constants, functions of an enclosing loop index (triangular loops,
//     `b + i % a`), functions of the rank, or pseudo-random per iteration
//     (shared by all ranks or per rank); trips can be 0;
//   - iteration-specific branches (i == 0, i % 3 == 1, last iteration, random)
//     and rank-dependent branches (rank 0 only, even ranks, boundary ranks,
//     lower half, random per rank), with optional else branches;
//   - several call sites and operations: Isend/Irecv (which create requests),
//     Wait/Waitall (whose `links` list points back at the requests they
//     complete, `req` counts them), Send/Recv/Sendrecv, Allreduce/Bcast/
//     Reduce/Barrier/Alltoallv (list field `counts`), `compute` markers;
//   - communicators: the world (comm=0, omitted at some call sites) and two
//     sub-communicators, rows of a near-square grid (members ascending) and
//     ranks of equal parity (members in descending order), optionally set up
//     by an MPI_Comm_split event (color/key/newcomm);
//   - fields: peer (absolute rank in the call's communicator, or kNull at
//     boundaries, or kAny for wildcard receives, which then also carry
//     `src`), tag (sometimes kAny), count, dsize, root, redop, comm, a
//     user-defined scalar field present only on some executions, a
//     user-defined list field with varying length, and compute_ns/comm_ns
//     timings (sometimes unknown);
//   - occasionally two call statements that share one op + call site (as
//     when a function is called from two places and the stack is cut).
//
// GenOptions::time_steps and periodic_only build programs around a time-step
// loop of a given length whose behaviour repeats with a period dividing 12;
// they should fold to the same structure however many steps they run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "tracefold/event.hpp"
#include "tracefold/rawlog.hpp"

namespace tracefold::testing {

// ------------------------------------------------------------------ randomness

/// SplitMix64 step: a good 64-bit mixer with a fixed, portable definition.
inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Order-dependent hash of a sequence of integers.
inline uint64_t hash_combine(uint64_t h, uint64_t v) {
  uint64_t s = h ^ (v * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull);
  return splitmix64(s);
}

/// Small deterministic PRNG (portable, unlike std distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() { return splitmix64(state_); }
  /// Uniform-ish in [0, n); 0 when n == 0.
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  /// Uniform-ish in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  bool percent(unsigned p) { return below(100) < p; }

 private:
  uint64_t state_;
};

// ---------------------------------------------------------------------- options

struct GenOptions {
  /// World size; 0 picks one in [1, max_world] from the seed.
  int32_t world_size = 0;
  int32_t max_world = 12;
  /// Deepest loop nesting (1..4).
  int max_depth = 4;
  /// Statements in the top-level block, and at most in a nested block.
  int max_top_items = 6;
  int max_body_items = 4;
  /// Largest trip count per nesting depth (outermost first); deeper levels
  /// use the last entry.
  std::vector<int64_t> max_trips = {24, 6, 4, 3};
  /// A rank stops emitting after this many events (keeps tests fast).
  std::size_t max_events_per_rank = 2500;
  /// Percent of call statements that reuse an earlier statement's op + site.
  unsigned shared_site_percent = 8;
  /// Percent of communicating calls that use a sub-communicator (comm 1:
  /// rows of a near-square grid, members ascending; comm 2: ranks of equal
  /// parity, members in descending order) instead of the world.
  unsigned sub_comm_percent = 25;
  /// When > 0: the program is built around a time-step loop with exactly
  /// this many iterations.
  int64_t time_steps = 0;
  /// Only behaviour that is periodic in the time step (and any function of
  /// the rank): no pseudo-random values or branches, no trip counts or
  /// values growing with a loop index, no one-time branches on the time-step
  /// index, moduli of at most 4. Such programs should fold to a trace whose
  /// size does not grow with `time_steps`.
  bool periodic_only = false;
};

// ------------------------------------------------------------------------ model

namespace detail {

/// Execution state of one rank.
struct Ctx {
  uint64_t seed = 0;
  int32_t rank = 0;
  int32_t size = 1;
  int64_t comm_me = 0;               // rank in the communicator of the call being emitted
  int64_t comm_size = 1;             // its size
  std::vector<int64_t> idx;          // enclosing loop indices, outermost first
  std::vector<int64_t> trips;        // enclosing loop trip counts
  std::vector<std::size_t> pending;  // positions of request-creating events
  std::vector<Event>* out = nullptr;
  std::size_t limit = 0;
  bool full() const { return out->size() >= limit; }
  uint64_t path_hash(uint64_t uid, bool with_rank) const {
    uint64_t h = hash_combine(seed, uid);
    if (with_rank) h = hash_combine(h, static_cast<uint64_t>(rank) + 0x1000);
    for (int64_t i : idx) h = hash_combine(h, static_cast<uint64_t>(i));
    return h;
  }
};

/// An integer expression over loop indices, rank and pseudo-random values.
struct Expr {
  enum Kind : uint8_t { kConst, kLinear, kMod, kRankMod, kIterRankMod, kRandShared, kRandRank };
  Kind kind = kConst;
  int level = 0;  // enclosing loop whose index is used (0 = outermost)
  int64_t a = 1, b = 0;

  int64_t eval(const Ctx& c, uint64_t uid) const {
    const int64_t i = c.idx.empty() ? 0 : c.idx[static_cast<std::size_t>(level)];
    switch (kind) {
      case kConst:
        return b;
      case kLinear:
        return a * i + b;
      case kMod:
        return b + i % a;
      case kRankMod:
        return b + c.rank % a;
      case kIterRankMod:
        return b + (i + c.rank) % a;
      case kRandShared:
        return b + static_cast<int64_t>(c.path_hash(uid, false) % static_cast<uint64_t>(a));
      case kRandRank:
        return b + static_cast<int64_t>(c.path_hash(uid, true) % static_cast<uint64_t>(a));
    }
    return 0;
  }
  std::string describe() const {
    const std::string i = "i" + std::to_string(level);
    const std::string a_ = std::to_string(a), b_ = std::to_string(b);
    switch (kind) {
      case kConst:
        return b_;
      case kLinear:
        return a_ + "*" + i + "+" + b_;
      case kMod:
        return b_ + "+" + i + "%" + a_;
      case kRankMod:
        return b_ + "+rank%" + a_;
      case kIterRankMod:
        return b_ + "+(" + i + "+rank)%" + a_;
      case kRandShared:
        return b_ + "+rand%" + a_;
      case kRandRank:
        return b_ + "+rand(rank)%" + a_;
    }
    return "?";
  }
};

/// A branch condition.
struct Cond {
  enum Kind : uint8_t {
    kIterEq,
    kIterMod,
    kIterLast,
    kRankEq,
    kRankEven,
    kRankBoundary,
    kRankLowerHalf,
    kRandShared,
    kRandRank
  };
  Kind kind = kRankEq;
  int level = 0;
  int64_t a = 0, b = 0;

  bool eval(const Ctx& c, uint64_t uid) const {
    const auto l = static_cast<std::size_t>(level);
    switch (kind) {
      case kIterEq:
        return c.idx[l] == a;
      case kIterMod:
        return c.idx[l] % a == b;
      case kIterLast:
        return c.idx[l] == c.trips[l] - 1;
      case kRankEq:
        return c.rank == a % c.size;
      case kRankEven:
        return c.rank % 2 == 0;
      case kRankBoundary:
        return c.rank == 0 || c.rank == c.size - 1;
      case kRankLowerHalf:
        return 2 * c.rank < c.size;
      case kRandShared:
        return static_cast<int64_t>(c.path_hash(uid, false) % 100) < a;
      case kRandRank:
        return static_cast<int64_t>(c.path_hash(uid, true) % 100) < a;
    }
    return false;
  }
  std::string describe() const {
    const std::string i = "i" + std::to_string(level);
    switch (kind) {
      case kIterEq:
        return i + "==" + std::to_string(a);
      case kIterMod:
        return i + "%" + std::to_string(a) + "==" + std::to_string(b);
      case kIterLast:
        return i + "==last";
      case kRankEq:
        return "rank==" + std::to_string(a) + "%P";
      case kRankEven:
        return "rank%2==0";
      case kRankBoundary:
        return "rank==0||rank==P-1";
      case kRankLowerHalf:
        return "2*rank<P";
      case kRandShared:
        return "rand<" + std::to_string(a) + "%";
      case kRandRank:
        return "rand(rank)<" + std::to_string(a) + "%";
    }
    return "?";
  }
};

/// How a peer rank is computed (absolute world rank, or a sentinel).
struct Peer {
  enum Kind : uint8_t {
    kRight,
    kLeft,
    kXor,
    kBoundaryRight,
    kBoundaryLeft,
    kWildcard,
    kProcNull,
    kFixed,
    kIterShift,
    kRandom
  };
  Kind kind = kRight;
  int level = 0;
  int64_t k = 1;

  // Peers are ranks in the call's communicator (c.comm_me of c.comm_size).
  int64_t eval(const Ctx& c, uint64_t uid) const {
    const int64_t p = c.comm_size, r = c.comm_me;
    switch (kind) {
      case kRight:
        return (r + k) % p;
      case kLeft:
        return ((r - k) % p + p) % p;
      case kXor:
        return (r ^ 1) < p ? (r ^ 1) : tracefold::kNull;
      case kBoundaryRight:
        return r + 1 < p ? r + 1 : tracefold::kNull;
      case kBoundaryLeft:
        return r > 0 ? r - 1 : tracefold::kNull;
      case kWildcard:
        return tracefold::kAny;
      case kProcNull:
        return tracefold::kNull;
      case kFixed:
        return k % p;
      case kIterShift:
        return (r + 1 + c.idx[static_cast<std::size_t>(level)]) % p;
      case kRandom:
        return static_cast<int64_t>(c.path_hash(uid, true) % static_cast<uint64_t>(p));
    }
    return tracefold::kNull;
  }
  std::string describe() const {
    switch (kind) {
      case kRight:
        return "(rank+" + std::to_string(k) + ")%P";
      case kLeft:
        return "(rank-" + std::to_string(k) + ")%P";
      case kXor:
        return "rank^1|null";
      case kBoundaryRight:
        return "rank+1|null";
      case kBoundaryLeft:
        return "rank-1|null";
      case kWildcard:
        return "any";
      case kProcNull:
        return "null";
      case kFixed:
        return std::to_string(k) + "%P";
      case kIterShift:
        return "(rank+1+i" + std::to_string(level) + ")%P";
      case kRandom:
        return "rand(rank)%P";
    }
    return "?";
  }
};

/// One field of a call statement.
struct FieldGen {
  enum Kind : uint8_t { kScalar, kPeer, kList };
  Kind kind = kScalar;
  FieldId id = 0;
  Expr value;               // scalar value, or list element base
  Peer peer;                // kPeer
  Expr length;              // kList: number of elements
  int64_t step = 0;         // kList: element j = value + j*step
  bool may_be_any = false;  // scalar: kAny when `any_when` holds
  Cond any_when;
  bool optional = false;  // present only when `present` holds
  Cond present;
};

struct Stmt {
  enum Kind : uint8_t { kCall, kLoop, kIf };
  enum Role : uint8_t { kPlain, kRequest, kWaitAll, kWaitOne };
  Kind kind = kCall;
  uint64_t uid = 0;
  // kCall
  OpId op = 0;
  SiteId site = 0;
  Role role = kPlain;
  bool src_from_peer = false;  // wildcard receive: also record the matched source
  int64_t comm = 0;            // communicator id the call runs on
  std::vector<FieldGen> fields;
  // kLoop
  Expr trips;
  bool time_step_loop = false;  // trips not clamped to GenOptions::max_trips
  // kIf
  Cond cond;
  std::vector<Stmt> body, orelse;
};

}  // namespace detail

// ---------------------------------------------------------------------- program

class RandomProgram {
 public:
  explicit RandomProgram(uint64_t seed, GenOptions options = {})
      : seed_(seed), opt_(std::move(options)) {
    Rng rng(hash_combine(seed, 0x5EED));
    size_ = opt_.world_size > 0 ? opt_.world_size
                                : static_cast<int32_t>(rng.between(1, std::max(1, opt_.max_world)));
    row_width_ = 1;
    while ((row_width_ + 1) * (row_width_ + 1) <= size_) ++row_width_;
    const int top = static_cast<int>(rng.between(1, std::max(1, opt_.max_top_items)));
    // Communicator set-up, as a program would do it before its main loop.
    if (rng.percent(40)) top_.push_back(gen_split());
    // Most programs are built around a time-step loop.
    if (opt_.time_steps > 0 || rng.percent(80)) {
      if (rng.percent(50)) top_.push_back(gen_call(rng, 0));
      top_.push_back(gen_loop(rng, 0, /*force_body*/ true));
      if (opt_.time_steps > 0) {
        top_.back().trips = Expr{};
        top_.back().trips.b = opt_.time_steps;
        top_.back().time_step_loop = true;
      }
      for (int k = 1; k < top; ++k) top_.push_back(gen_stmt(rng, 0));
    } else {
      top_ = gen_block(rng, 0, top);
    }
  }

  uint64_t seed() const { return seed_; }
  int32_t world_size() const { return size_; }
  std::size_t site_count() const { return static_cast<std::size_t>(next_site_); }

  /// Call sites 0..site_count()-1: `app+0x...` under `libsolver.so+0x...`.
  static CallSite site_frames(SiteId id) {
    return CallSite{{Frame{"app", 0x400 + 0x10 * uint64_t{id}},
                     Frame{"libsolver.so", 0x1000 + 0x100 * uint64_t{id % 3}}}};
  }
  SiteTable sites() const {
    SiteTable t;
    for (SiteId i = 0; i < next_site_; ++i) t.intern(site_frames(i));
    return t;
  }
  /// Communicator ids used by the program: 0 (world), 1 and 2.
  static constexpr int64_t kRowComm = 1;
  static constexpr int64_t kParityComm = 2;

  /// The group of communicator `id` that holds world rank `rank`, in
  /// communicator-rank order.
  CommGroup group(int64_t id, int32_t rank) const {
    CommGroup g;
    if (id == kRowComm) {
      const int32_t first = rank / row_width_ * row_width_;
      for (int32_t m = first; m < std::min(size_, first + row_width_); ++m) g.members.push_back(m);
    } else if (id == kParityComm) {
      for (int32_t m = size_ - 1; m >= 0; --m)
        if (m % 2 == rank % 2) g.members.push_back(m);
    } else {
      for (int32_t m = 0; m < size_; ++m) g.members.push_back(m);
    }
    return g;
  }
  /// Every group of every communicator.
  CommTable comms() const {
    CommTable c;
    c.define_world(size_);
    for (int32_t r = 0; r < size_; ++r) {
      c.define(kRowComm, group(kRowComm, r));
      c.define(kParityComm, group(kParityComm, r));
    }
    return c;
  }
  /// What rank `rank` knows: the world and its own groups (as in its raw log).
  CommTable comms_for(int32_t rank) const {
    CommTable c;
    c.define_world(size_);
    c.define(kRowComm, group(kRowComm, rank));
    c.define(kParityComm, group(kParityComm, rank));
    return c;
  }

  /// Rank `rank`'s events, peers as absolute ranks (as a recorder logs them).
  std::vector<Event> events(int32_t rank) const {
    std::vector<Event> out;
    detail::Ctx c;
    c.seed = seed_;
    c.rank = rank;
    c.size = size_;
    c.out = &out;
    c.limit = opt_.max_events_per_rank;
    run(top_, c);
    return out;
  }

  /// Rank `rank`'s raw log in the line format of rawlog.hpp.
  std::string raw_log(int32_t rank, bool with_timing = true) const {
    std::string s = "# random program seed=" + std::to_string(seed_) + "\n";
    s += "rank " + std::to_string(rank) + " size " + std::to_string(size_) + "\n";
    for (SiteId i = 0; i < next_site_; ++i)
      s += "site " + std::to_string(i) + " " + SiteTable::format(site_frames(i)) + "\n";
    s += format_comm_line(kRowComm, group(kRowComm, rank)) + "\n";
    s += format_comm_line(kParityComm, group(kParityComm, rank)) + "\n";
    for (const Event& ev : events(rank)) s += format_event_line(ev, with_timing) + "\n";
    return s;
  }

  /// Pseudo-code of the program, for failure messages.
  std::string describe() const {
    std::string s = "// seed " + std::to_string(seed_) + ", P=" + std::to_string(size_) + "\n";
    describe_block(top_, 0, 0, s);
    return s;
  }

 private:
  using Stmt = detail::Stmt;
  using Expr = detail::Expr;
  using Cond = detail::Cond;
  using Peer = detail::Peer;
  using FieldGen = detail::FieldGen;

  int64_t max_trips(int depth) const {
    if (opt_.max_trips.empty()) return 4;
    return opt_.max_trips[std::min<std::size_t>(static_cast<std::size_t>(depth),
                                                opt_.max_trips.size() - 1)];
  }

  // ------------------------------------------------------------- generation

  std::vector<Stmt> gen_block(Rng& rng, int depth, int n) {
    std::vector<Stmt> out;
    for (int k = 0; k < n; ++k) out.push_back(gen_stmt(rng, depth));
    return out;
  }

  Stmt gen_stmt(Rng& rng, int depth) {
    const uint64_t roll = rng.below(100);
    if (roll < 22 && depth < opt_.max_depth) return gen_loop(rng, depth, false);
    if (roll < 40 && if_nesting_ < 2) return gen_if(rng, depth);
    return gen_call(rng, depth);
  }

  Expr gen_expr(Rng& rng, int depth, int64_t lo, int64_t hi) {
    if (opt_.periodic_only) return gen_periodic_expr(rng, depth, lo, hi);
    Expr e;
    const int64_t span = std::max<int64_t>(1, hi - lo + 1);
    const uint64_t roll = rng.below(100);
    e.b = lo;
    e.a = std::max<int64_t>(1, rng.between(1, span));
    if (depth > 0) e.level = static_cast<int>(rng.below(static_cast<uint64_t>(depth)));
    if (roll < 35 || (depth == 0 && roll < 60)) {
      e.kind = Expr::kConst;
      e.b = rng.between(lo, hi);
    } else if (roll < 50 && depth > 0) {
      e.kind = Expr::kLinear;  // triangular shapes
      e.a = rng.between(1, 2);
      e.b = lo;
    } else if (roll < 65 && depth > 0) {
      e.kind = Expr::kMod;
      e.a = rng.between(2, std::max<int64_t>(2, span));
    } else if (roll < 75) {
      e.kind = Expr::kRankMod;
    } else if (roll < 82 && depth > 0) {
      e.kind = Expr::kIterRankMod;
    } else if (roll < 92) {
      e.kind = Expr::kRandShared;
    } else {
      e.kind = Expr::kRandRank;
    }
    return e;
  }

  Expr gen_periodic_expr(Rng& rng, int depth, int64_t lo, int64_t hi) {
    Expr e;
    e.b = lo;
    e.a = rng.between(1, std::min<int64_t>(4, std::max<int64_t>(1, hi - lo + 1)));
    if (depth > 0) e.level = static_cast<int>(rng.below(static_cast<uint64_t>(depth)));
    const uint64_t roll = rng.below(100);
    if (roll < 50 || e.a < 2) {
      e.kind = Expr::kConst;
      e.b = rng.between(lo, hi);
    } else if (roll < 75 && depth > 0) {
      e.kind = Expr::kMod;
    } else if (roll < 90 || depth == 0) {
      e.kind = Expr::kRankMod;
    } else {
      e.kind = Expr::kIterRankMod;
    }
    return e;
  }

  Cond gen_cond(Rng& rng, int depth) {
    Cond c;
    if (opt_.periodic_only) {
      if (depth > 0 && rng.percent(60)) {
        c.level = static_cast<int>(rng.below(static_cast<uint64_t>(depth)));
        const bool inner = c.level > 0;
        switch (rng.below(inner ? 3 : 1)) {
          case 0:
            c.kind = Cond::kIterMod;
            c.a = rng.between(2, 4);
            c.b = rng.between(0, c.a - 1);
            break;
          case 1:
            c.kind = Cond::kIterEq;
            c.a = 0;
            break;
          default:
            c.kind = Cond::kIterLast;
            break;
        }
        return c;
      }
      switch (rng.below(4)) {
        case 0:
          c.kind = Cond::kRankEq;
          c.a = 0;
          break;
        case 1:
          c.kind = Cond::kRankEven;
          break;
        case 2:
          c.kind = Cond::kRankBoundary;
          break;
        default:
          c.kind = Cond::kRankLowerHalf;
          break;
      }
      return c;
    }
    const bool iter = depth > 0 && rng.percent(60);
    if (iter) {
      c.level = static_cast<int>(rng.below(static_cast<uint64_t>(depth)));
      switch (rng.below(4)) {
        case 0:
          c.kind = Cond::kIterEq;
          c.a = rng.percent(70) ? 0 : rng.between(1, 3);
          break;
        case 1:
          c.kind = Cond::kIterMod;
          c.a = rng.between(2, 4);
          c.b = rng.between(0, c.a - 1);
          break;
        case 2:
          c.kind = Cond::kIterLast;
          break;
        default:
          c.kind = Cond::kRandShared;
          c.a = rng.between(20, 80);
          break;
      }
      return c;
    }
    switch (rng.below(6)) {
      case 0:
        c.kind = Cond::kRankEq;
        c.a = rng.percent(70) ? 0 : rng.between(1, 5);
        break;
      case 1:
        c.kind = Cond::kRankEven;
        break;
      case 2:
        c.kind = Cond::kRankBoundary;
        break;
      case 3:
        c.kind = Cond::kRankLowerHalf;
        break;
      case 4:
        c.kind = Cond::kRandRank;
        c.a = rng.between(20, 80);
        break;
      default:
        c.kind = Cond::kRandShared;
        c.a = rng.between(20, 80);
        break;
    }
    return c;
  }

  Peer gen_peer(Rng& rng, int depth, bool receive) {
    Peer p;
    const uint64_t roll = rng.below(100);
    if (receive && roll < 15) {
      p.kind = Peer::kWildcard;
    } else if (roll < 35) {
      p.kind = Peer::kRight;
      p.k = rng.between(1, 3);
    } else if (roll < 50) {
      p.kind = Peer::kLeft;
      p.k = rng.between(1, 3);
    } else if (roll < 58) {
      p.kind = Peer::kXor;
    } else if (roll < 68) {
      p.kind = Peer::kBoundaryRight;
    } else if (roll < 76) {
      p.kind = Peer::kBoundaryLeft;
    } else if (roll < 80) {
      p.kind = Peer::kProcNull;
    } else if (roll < 86) {
      p.kind = Peer::kFixed;
      p.k = rng.between(0, 7);
    } else if (roll < 94 && depth > 0 && !opt_.periodic_only) {
      p.kind = Peer::kIterShift;
      p.level = static_cast<int>(rng.below(static_cast<uint64_t>(depth)));
    } else if (opt_.periodic_only) {
      p.kind = Peer::kFixed;
      p.k = rng.between(0, 7);
    } else {
      p.kind = Peer::kRandom;
    }
    return p;
  }

  static FieldId scalar(const char* name) { return FieldTable::intern(name, FieldKind::kScalar); }
  static FieldId list(const char* name) { return FieldTable::intern(name, FieldKind::kList); }

  FieldGen scalar_field(FieldId id, Expr e) {
    FieldGen f;
    f.kind = FieldGen::kScalar;
    f.id = id;
    f.value = e;
    return f;
  }

  Stmt gen_call(Rng& rng, int depth) {
    Stmt s;
    s.kind = Stmt::kCall;
    s.uid = next_uid_++;
    if (!calls_.empty() && rng.percent(opt_.shared_site_percent)) {
      // Same op and call site as an earlier statement, own parameters.
      const auto& [op, site, role] = calls_[rng.below(calls_.size())];
      s.op = op;
      s.site = site;
      s.role = role;
    } else {
      s.site = next_site_++;
      static const char* const kOps[] = {"MPI_Isend", "MPI_Irecv",  "MPI_Waitall",  "MPI_Wait",
                                         "MPI_Send",  "MPI_Recv",   "MPI_Sendrecv", "MPI_Allreduce",
                                         "MPI_Bcast", "MPI_Reduce", "MPI_Barrier",  "MPI_Alltoallv",
                                         "compute",   "MPI_Isend",  "MPI_Irecv",    "MPI_Waitall"};
      const std::string name = kOps[rng.below(std::size(kOps))];
      s.op = *OpTable::find(name);
      if (name == "MPI_Isend" || name == "MPI_Irecv") s.role = Stmt::kRequest;
      if (name == "MPI_Waitall") s.role = Stmt::kWaitAll;
      if (name == "MPI_Wait") s.role = Stmt::kWaitOne;
    }
    calls_.emplace_back(s.op, s.site, s.role);
    const std::string name = OpTable::name(s.op);
    if (name == "compute") return s;

    const bool p2p = name == "MPI_Isend" || name == "MPI_Irecv" || name == "MPI_Send" ||
                     name == "MPI_Recv" || name == "MPI_Sendrecv";
    if (rng.percent(opt_.sub_comm_percent) && name != "MPI_Waitall" && name != "MPI_Wait")
      s.comm = rng.percent(50) ? kRowComm : kParityComm;
    const bool receive = name == "MPI_Irecv" || name == "MPI_Recv";
    if (p2p) {
      FieldGen peer;
      peer.kind = FieldGen::kPeer;
      peer.id = FieldTable::peer();
      peer.peer = gen_peer(rng, depth, receive);
      s.src_from_peer = peer.peer.kind == Peer::kWildcard;
      s.fields.push_back(peer);
      FieldGen tag = scalar_field(scalar("tag"), gen_expr(rng, depth, 0, 9));
      if (receive && rng.percent(20)) {
        tag.may_be_any = true;
        tag.any_when = gen_cond(rng, depth);
      }
      s.fields.push_back(tag);
      s.fields.push_back(scalar_field(scalar("count"), gen_expr(rng, depth, 1, 64)));
      Expr ds;
      ds.b = rng.percent(50) ? 8 : 4;
      s.fields.push_back(scalar_field(scalar("dsize"), ds));
    } else if (name == "MPI_Allreduce" || name == "MPI_Reduce" || name == "MPI_Bcast") {
      s.fields.push_back(scalar_field(scalar("count"), gen_expr(rng, depth, 1, 16)));
      Expr ds;
      ds.b = 8;
      s.fields.push_back(scalar_field(scalar("dsize"), ds));
      if (name != "MPI_Bcast") {
        Expr op;
        op.b = rng.between(0, 3);
        s.fields.push_back(scalar_field(scalar("redop"), op));
      }
      if (name != "MPI_Allreduce") {
        Expr root;
        root.kind = rng.percent(70) ? Expr::kConst : Expr::kRankMod;
        root.a = 1;  // rank % 1 == 0: still root 0, but through another path
        root.b = 0;
        s.fields.push_back(scalar_field(scalar("root"), root));
      }
    } else if (name == "MPI_Alltoallv") {
      FieldGen counts;
      counts.kind = FieldGen::kList;
      counts.id = list("counts");
      counts.length.b = size_;
      counts.value = gen_expr(rng, depth, 0, 5);
      counts.step = rng.between(0, 2);
      s.fields.push_back(counts);
      Expr ds;
      ds.b = 4;
      s.fields.push_back(scalar_field(scalar("dsize"), ds));
    }
    // Communicator: every MPI call but a few call sites that rely on the
    // default (no comm field = world).
    if (s.comm != 0 || rng.percent(85)) {
      Expr id;
      id.b = s.comm;
      s.fields.push_back(scalar_field(FieldTable::comm(), id));
    }
    // A user-defined scalar present only on some executions.
    if (rng.percent(15)) {
      FieldGen u = scalar_field(scalar("user_phase"), gen_expr(rng, depth, -3, 3));
      u.optional = true;
      u.present = gen_cond(rng, depth);
      s.fields.push_back(u);
    }
    // A user-defined list whose length varies.
    if (rng.percent(10)) {
      FieldGen l;
      l.kind = FieldGen::kList;
      l.id = list("user_dims");
      l.length = gen_expr(rng, depth, 0, 3);
      l.value = gen_expr(rng, depth, -2, 40);
      l.step = rng.between(-1, 3);
      s.fields.push_back(l);
    }
    return s;
  }

  // MPI_Comm_split of the world by parity (communicator 2).
  Stmt gen_split() {
    Stmt s;
    s.kind = Stmt::kCall;
    s.uid = next_uid_++;
    s.site = next_site_++;
    s.op = *OpTable::find("MPI_Comm_split");
    calls_.emplace_back(s.op, s.site, s.role);
    Expr color;
    color.kind = Expr::kRankMod;
    color.a = 2;
    Expr zero, newcomm;
    newcomm.b = kParityComm;
    s.fields.push_back(scalar_field(scalar("color"), color));
    s.fields.push_back(scalar_field(scalar("key"), zero));
    s.fields.push_back(scalar_field(scalar("newcomm"), newcomm));
    s.fields.push_back(scalar_field(FieldTable::comm(), zero));
    return s;
  }

  Stmt gen_loop(Rng& rng, int depth, bool force_body) {
    Stmt s;
    s.kind = Stmt::kLoop;
    s.uid = next_uid_++;
    const int saved_ifs = if_nesting_;
    if_nesting_ = 0;
    const int64_t hi = max_trips(depth);
    s.trips = gen_expr(rng, depth, rng.percent(85) ? 1 : 0, hi);
    if (s.trips.kind == Expr::kConst && force_body)
      s.trips.b = std::max<int64_t>(s.trips.b, hi / 2);
    const int n = static_cast<int>(rng.between(1, std::max(1, opt_.max_body_items)));
    s.body = gen_block(rng, depth + 1, n);
    if (force_body && s.body.size() < 2) s.body.push_back(gen_call(rng, depth + 1));
    if_nesting_ = saved_ifs;
    return s;
  }

  Stmt gen_if(Rng& rng, int depth) {
    Stmt s;
    s.kind = Stmt::kIf;
    s.uid = next_uid_++;
    s.cond = gen_cond(rng, depth);
    ++if_nesting_;
    s.body = gen_block(rng, depth, static_cast<int>(rng.between(1, 2)));
    if (rng.percent(35)) s.orelse = gen_block(rng, depth, 1);
    --if_nesting_;
    return s;
  }

  // -------------------------------------------------------------- execution

  void run(const std::vector<Stmt>& block, detail::Ctx& c) const {
    for (const Stmt& s : block) {
      if (c.full()) return;
      switch (s.kind) {
        case Stmt::kCall:
          emit(s, c);
          break;
        case Stmt::kIf:
          run(s.cond.eval(c, s.uid) ? s.body : s.orelse, c);
          break;
        case Stmt::kLoop: {
          const int64_t trips =
              s.time_step_loop ? s.trips.eval(c, s.uid)
                               : std::clamp<int64_t>(s.trips.eval(c, s.uid), 0,
                                                     max_trips(static_cast<int>(c.idx.size())) + 2);
          c.idx.push_back(0);
          c.trips.push_back(trips);
          for (int64_t i = 0; i < trips && !c.full(); ++i) {
            c.idx.back() = i;
            run(s.body, c);
          }
          c.idx.pop_back();
          c.trips.pop_back();
          break;
        }
      }
    }
  }

  void emit(const Stmt& s, detail::Ctx& c) const {
    Event ev;
    ev.op = s.op;
    ev.site = s.site;
    const std::size_t pos = c.out->size();
    const CommGroup g = group(s.comm, c.rank);
    c.comm_size = static_cast<int64_t>(g.members.size());
    c.comm_me = std::find(g.members.begin(), g.members.end(), c.rank) - g.members.begin();
    for (const FieldGen& f : s.fields) {
      if (f.optional && !f.present.eval(c, s.uid)) continue;
      switch (f.kind) {
        case FieldGen::kScalar:
          ev.set(f.id, f.may_be_any && f.any_when.eval(c, s.uid) ? kAny : f.value.eval(c, s.uid));
          break;
        case FieldGen::kPeer: {
          const int64_t p = f.peer.eval(c, s.uid);
          ev.set(f.id, p);
          if (s.src_from_peer) {
            // The source the wildcard receive actually matched.
            const uint64_t h = opt_.periodic_only ? static_cast<uint64_t>(c.comm_me + 1)
                                                  : c.path_hash(s.uid ^ 0xABCD, true);
            ev.set(FieldTable::src(), static_cast<int64_t>(h % static_cast<uint64_t>(c.comm_size)));
          }
          break;
        }
        case FieldGen::kList: {
          const int64_t n = std::max<int64_t>(0, f.length.eval(c, s.uid));
          const int64_t base = f.value.eval(c, s.uid);
          std::vector<int64_t> v;
          for (int64_t j = 0; j < n; ++j) v.push_back(base + j * f.step);
          ev.set_list(f.id, std::move(v));
          break;
        }
      }
    }
    if (s.role == Stmt::kWaitAll || s.role == Stmt::kWaitOne) {
      std::vector<int64_t> links;
      if (s.role == Stmt::kWaitAll) {
        for (std::size_t p : c.pending) links.push_back(static_cast<int64_t>(pos - p));
        c.pending.clear();
      } else if (!c.pending.empty()) {
        links.push_back(static_cast<int64_t>(pos - c.pending.front()));
        c.pending.erase(c.pending.begin());
      }
      // A Wait with nothing to wait for carries no links at all; a Waitall
      // with nothing to wait for carries an empty list.
      if (s.role == Stmt::kWaitAll || !links.empty()) {
        ev.set(scalar("req"), static_cast<int64_t>(links.size()));
        ev.set_list(FieldTable::links(), std::move(links));
      }
    }
    if (s.role == Stmt::kRequest) {
      // Requests nobody waits for are taken as completed elsewhere (by a
      // test call the program does not record), so completion lists stay
      // bounded: at most the 16 most recent requests are pending.
      c.pending.push_back(pos);
      if (c.pending.size() > 16) c.pending.erase(c.pending.begin());
    }
    // Timings: mostly known, sometimes not.
    uint64_t th = hash_combine(hash_combine(c.seed, static_cast<uint64_t>(c.rank)), pos);
    Rng t(th);
    ev.compute_ns = t.percent(90) ? static_cast<int64_t>(t.below(2'000'000)) : -1;
    ev.comm_ns = t.percent(90) ? static_cast<int64_t>(t.below(50'000)) : -1;
    c.out->push_back(std::move(ev));
  }

  // ------------------------------------------------------------ description

  void describe_block(const std::vector<Stmt>& block, int indent, int depth, std::string& s) const {
    const std::string pad(static_cast<std::size_t>(2 * indent), ' ');
    for (const Stmt& st : block) {
      switch (st.kind) {
        case Stmt::kCall: {
          s += pad + OpTable::name(st.op) + "@" + std::to_string(st.site) + "(";
          bool first = true;
          for (const FieldGen& f : st.fields) {
            if (!first) s += ", ";
            first = false;
            s += FieldTable::name(f.id) + "=";
            if (f.kind == FieldGen::kPeer)
              s += f.peer.describe();
            else if (f.kind == FieldGen::kList)
              s += "[" + f.length.describe() + " x " + f.value.describe() + "+j*" +
                   std::to_string(f.step) + "]";
            else
              s += f.value.describe();
            if (f.may_be_any) s += "|any if " + f.any_when.describe();
            if (f.optional) s += " if " + f.present.describe();
          }
          if (st.role == Stmt::kWaitAll) s += first ? "links=pending" : ", links=pending";
          if (st.role == Stmt::kWaitOne) s += first ? "links=oldest" : ", links=oldest";
          s += ")\n";
          break;
        }
        case Stmt::kLoop:
          s += pad + "for i" + std::to_string(depth) + " < " + st.trips.describe() + ":\n";
          describe_block(st.body, indent + 1, depth + 1, s);
          break;
        case Stmt::kIf:
          s += pad + "if " + st.cond.describe() + ":\n";
          describe_block(st.body, indent + 1, depth, s);
          if (!st.orelse.empty()) {
            s += pad + "else:\n";
            describe_block(st.orelse, indent + 1, depth, s);
          }
          break;
      }
    }
  }

  uint64_t seed_;
  GenOptions opt_;
  int32_t size_ = 1;
  int32_t row_width_ = 1;
  std::vector<Stmt> top_;
  uint64_t next_uid_ = 1;
  int if_nesting_ = 0;
  SiteId next_site_ = 0;
  std::vector<std::tuple<OpId, SiteId, Stmt::Role>> calls_;
};

}  // namespace tracefold::testing
