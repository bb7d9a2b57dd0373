// Communication-pattern recovery (seed 004; `tracefold patterns`, being
// built in src/analysis/patterns/). This header holds its string layer: a
// rank's events as symbols, and the repeats found in them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tracefold/op_class.hpp"
#include "tracefold/ranklist.hpp"
#include "tracefold/trace.hpp"

namespace tracefold {
class RankIterator;
}

namespace tracefold::patterns {

/// One event as the detection sees it: an index into a table of distinct
/// (operation class, peer, communicator, tag class) tuples, so equal events
/// compare equal as integers.
using Symbol = uint32_t;

/// A maximal repeat of a symbol string S: a substring w that occurs at
/// least twice and has two occurrences at p1 < p2 that can be extended
/// neither to the left nor to the right together, i.e.
/// S[p1 - 1] != S[p2 - 1] (or p1 == 0) and S[p1 + |w|] != S[p2 + |w|] (or
/// one of them ends S). This is the seed's definition (its Section III,
/// step 1); occurrences may overlap.
struct Repeat {
  std::size_t length = 0;
  /// Every start position of w in S, ascending.
  std::vector<std::size_t> positions;
};

/// All maximal repeats of `s`, longest first, then by first position.
/// A suffix array and its LCP array give every right-maximal repeat as an
/// LCP interval; an interval whose suffixes are preceded by at least two
/// different symbols (or one starts S) is also left-maximal, and those are
/// exactly the maximal repeats (Gusfield, Algorithms on Strings, 7.12).
/// O(n log^2 n) time (prefix doubling) and O(n) memory besides the
/// output, which itself can hold O(n^2) positions (a run of one symbol has
/// a maximal repeat of every length).
std::vector<Repeat> maximal_repeats(std::span<const Symbol> s);

/// A per-process pattern (the seed's step 1): a maximal repeat of one
/// rank's events that lies inside one context run each time it occurs.
struct ProcessPattern {
  std::vector<Symbol> symbols;
  /// Start positions (indices into the rank's events) of the occurrences
  /// not inside an occurrence of a longer reported pattern, ascending.
  std::vector<std::size_t> positions;
  /// The folded loop its occurrences run in, where the trace holds one
  /// (loop_of()): the seed counted repeats and lost the trip counts.
  struct Loop {
    /// Iterations of the loop that the occurrences cover, each once.
    std::size_t iterations = 0;
    /// Trip counts of the loop's entries that the occurrences reach, in
    /// order, as (trip count, entries in a row with it): one pair for a
    /// loop entered once or always run alike, more where they vary.
    std::vector<std::pair<int64_t, std::size_t>> trips;
    bool operator==(const Loop&) const = default;
  };
  std::optional<Loop> loop;
};

/// The per-process patterns of one rank's `events`, where `context[i]` is
/// the context of event i (for instance the function that made the call):
/// a maximal span of events with one context is a context run, and no
/// pattern crosses from one run into the next. Two back-to-back calls of
/// one function make one run here (nothing in a call stack tells them
/// apart). Repeats are taken longest first, and a shorter one is kept only
/// where at least two of its occurrences are not inside an occurrence of a
/// longer one kept before it (the nested-pattern rule); single events are
/// not patterns. Throws std::invalid_argument if the spans differ in size
/// or a symbol is 2^31 or more (those mark run boundaries).
std::vector<ProcessPattern> process_patterns(std::span<const Symbol> events,
                                             std::span<const uint32_t> context);

/// Where a rank's events lie in the folded trace's loops, noted event by
/// event during a walk (RankIterator::loop()): per event its innermost
/// loop entry and iteration, per entry its trip count and the entry and
/// iteration around it.
struct LoopPlaces {
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Entry {
    std::size_t head = 0, level = 0;  ///< which loop (RankIterator::Loop)
    int64_t trips = 0;
    uint32_t parent = kNone;  ///< the entry of the loop around it
    int64_t parent_iteration = 0;
  };
  struct Place {
    uint32_t entry = kNone;  ///< innermost loop entry (kNone: in no loop)
    uint32_t iteration = 0;  ///< 32 bits: one Place per event of a class is kept
  };
  std::vector<Entry> entries;  ///< by RankIterator::Loop::entry
  std::vector<Place> events;
  /// Appends the place of the event `it` returned last.
  void note(const RankIterator& it);
};

/// The loop the occurrences of `p` run in (`places` holding its rank's
/// events): for each occurrence, the innermost loop entry around both its
/// first and its last event and the iterations between; nullopt unless
/// every occurrence has one and all are entries of the same loop.
std::optional<ProcessPattern::Loop> loop_of(const ProcessPattern& p, const LoopPlaces& places);

/// `trips` as text: `10`, `10 x3` (three entries of 10), `2, 3, 4`.
std::string trips_text(const std::vector<std::pair<int64_t, std::size_t>>& trips);

/// How many iterations of a loop the occurrences of `p` are: p.loop's
/// where the folded trace holds it, else counted from the occurrences. Occurrences
/// that overlap are one loop whose body is their distance d (w at p and at
/// p + d, d < |w|, makes the span periodic with period d): three steps of
/// a loop make a two-step repeat that occurs twice, overlapping, and are
/// 3 iterations, not 2. Occurrences apart count one each; an overlapping
/// run whose span is not a whole number of periods counts its occurrences.
std::size_t iterations(const ProcessPattern& p);

// ------------------------------------------------------- global patterns

/// One event of a rank as the assembly sees it: a send or receive with its
/// partner's rank in `comm` (a receive's source; kAny for a wildcard whose
/// source is unknown), or anything else (collectives: not matched here).
struct Message {
  /// kSendrecv: a send to `peer` with `tag` and a receive from `rpeer`
  /// with `rtag` in one call.
  enum class Kind : uint8_t { kSend, kRecv, kSendrecv, kOther } kind = Kind::kOther;
  int64_t peer = kAbsent;
  int64_t comm = 0;
  int64_t tag = kAbsent;
  int64_t rpeer = kAbsent;
  int64_t rtag = kAbsent;
  /// Bytes a send carries (its count times its type's size), for the bytes
  /// per direction a shape reports; 0 when unknown.
  uint64_t bytes = 0;
  /// A receive that waits for its message (MPI_Recv): a wavefront's ranks
  /// must wait for upstream data before they send downstream, which a
  /// posted MPI_Irecv or an MPI_Sendrecv does not show.
  bool blocking = false;
  /// A receive posted with MPI_ANY_SOURCE whose source the trace recorded:
  /// a master-worker's returns.
  bool wildcard = false;
};

/// A rank's events and, per event, the index of the per-process pattern
/// an occurrence of which covers it (-1: none).
struct RankEvents {
  int32_t rank = 0;
  std::vector<Message> events;
  std::vector<int32_t> pattern_of;
  /// Iterations of each per-process pattern (by index, as iterations()
  /// counts them; missing: 1), so a shape can tell what one iteration of
  /// the pattern does.
  std::vector<std::size_t> occurrences;
};

/// The messages from one rank to another on one communicator with one tag
/// inside a global pattern: tags and sizes say which messages belong
/// together (a sweep's direction, a multigrid level), which the bare edge
/// set cannot.
struct Channel {
  int32_t from = 0, to = 0;
  int64_t comm = 0, tag = 0;
  std::size_t messages = 0;
  uint64_t bytes = 0;        ///< of all its messages
  std::size_t wildcard = 0;  ///< messages received by an MPI_ANY_SOURCE receive
  auto operator<=>(const Channel&) const = default;
};

/// Channels of a global pattern that differ only in their sender: each
/// rank of `senders` sends `messages` messages (`bytes` in all, `wildcard`
/// of them received by an MPI_ANY_SOURCE receive) on `comm` with `tag` to
/// receiver(rank). Ranks of a class of alike ranks whose partners lie at
/// the same offset share one: halo26's 27-point halo at 16,384 ranks has
/// 874,352 channels in 58 classes.
struct ChannelClass {
  Ranklist senders;
  /// The receiver of sender r is (r + shift) mod modulo, or r + shift when
  /// modulo is 0: a relative peer wraps round its communicator's group, an
  /// absolute one is a fixed distance away.
  int64_t shift = 0, modulo = 0;
  int64_t comm = 0, tag = 0;
  std::size_t messages = 0;  ///< of each sender's channel
  uint64_t bytes = 0;        ///< of each sender's channel
  std::size_t wildcard = 0;  ///< of each sender's channel
  int32_t receiver(int32_t from) const {
    const int64_t to = int64_t{from} + shift;
    return static_cast<int32_t>(modulo > 0 ? to % modulo : to);
  }
  /// Sender `from`'s channel spelled out.
  Channel channel(int32_t from) const {
    return {from, receiver(from), comm, tag, messages, bytes, wildcard};
  }
  auto operator<=>(const ChannelClass&) const = default;
};

/// One matched message of a rank inside a global pattern, in the rank's
/// order: the order, not the edge set, tells a wavefront (receive from
/// upstream, then send downstream) from a halo exchange on the same grid.
struct Hop {
  int32_t peer = 0;
  bool send = false;
  bool blocking = false;  ///< a blocking receive (sends: false)
  /// The message's tag: phases of one pattern on the same edges (lu's
  /// sweeps and its halo) are told apart by their hops' tags.
  int64_t tag = 0;
  auto operator<=>(const Hop&) const = default;
};

/// One hop of a rank's GlobalPattern::Order, its partner given as an index
/// into the order's partners: ranks whose messages go alike (a class of
/// alike ranks) share one list of steps and differ only in whom they meet.
struct HopStep {
  uint32_t partner = 0;
  bool send = false;
  bool blocking = false;
  int64_t tag = 0;  ///< as Hop::tag
  auto operator<=>(const HopStep&) const = default;
};

/// What a global pattern's shape is called (docs/patterns.md, "Shapes").
enum class ShapeKind : uint8_t {
  kUnclassified,
  kRing,            ///< every rank sends `distance` ranks on (a shift when not periodic)
  kHalo,            ///< neighbours on a 1-, 2- or 3-D grid, both ways
  kWavefront,       ///< sweeps from a grid corner, upstream receives before downstream sends
  kButterfly,       ///< rank r with r xor 2^s for two or more stages s
  kTree,            ///< binomial, binary or linear, towards or from a root
  kMasterWorker,    ///< one rank exchanges with every other both ways
  kPairwise,        ///< each rank with one partner, both ways
  kTranspose,       ///< pairwise with the mirror rank of a square grid
  kIrregular,       ///< no regular shape, but symmetric and repeated
  kMultilevel,      ///< one shape repeated over levels with shrinking messages or ranks
  kAlltoall,        ///< every rank of the pattern sends to every other (point-to-point)
  kIncast,          ///< ranks of the pattern send to one, which sends nothing back
  kPipeline,        ///< a chain of stages, each waiting for the one before it to send on
  kRingCollective,  ///< a ring allreduce in point-to-point: reduce-scatter, then allgather
  kCollective,      ///< native collective calls only, the same on every rank of the pattern
  kComposition,     ///< other global patterns, run in one order once an iteration each
};

/// A global pattern named: the shape, its exact parameters and how well it
/// fits. A shape that fits all but a few edges is still named (and marked
/// partial), because a dropped or extra message is what a user wants to
/// find, not a reason to lose the name.
struct Shape {
  ShapeKind kind = ShapeKind::kUnclassified;
  /// `2-D halo`, `ring`, `binomial tree`, ... (`multilevel 2-D halo`).
  std::string name;
  /// Parameters in a fixed order per shape (docs/patterns.md lists them),
  /// as text, so that the listing, JSON and tests read the same values.
  std::vector<std::pair<std::string, std::string>> params;
  /// |observed & expected| / |observed | expected|: a shape that explains
  /// every observed edge but expects many more must not score 1.
  double quality = 0;
  std::size_t matched = 0;  ///< edges both observed and expected
  /// Expected but not observed, and observed but not expected (sorted).
  std::vector<std::pair<int32_t, int32_t>> missing, extra;
  bool partial() const { return !missing.empty() || !extra.empty(); }
  /// `2-D halo, partial (1 edge missing)`, `ring`, `unclassified`.
  std::string title() const;
  /// The value of parameter `key` ("" if none).
  std::string param(const std::string& key) const;
};

/// Lowest quality a shape needs to be named; below it the pattern is
/// irregular or unclassified. A single wrong edge in a pattern of two or
/// more explained ones is always accepted (a 2-edge pairwise exchange with
/// one extra message is still pairwise).
inline constexpr double kMinQuality = 0.75;

/// A communication pattern (the seed's step 2): per-process patterns of
/// several ranks joined because messages of one go to the other, with the
/// events outside any per-process pattern that those messages reach.
struct GlobalPattern {
  /// (rank, per-process pattern index), sorted.
  std::vector<std::pair<int32_t, int32_t>> patterns;
  /// (sender, receiver) ranks of its messages, sorted, each once.
  std::vector<std::pair<int32_t, int32_t>> edges;
  std::size_t messages = 0;
  std::size_t loose_events = 0;  ///< its events outside per-process patterns
  /// Its messages by (from, to, comm, tag), sorted, one entry per channel
  /// (assemble(), or a pattern built by hand) ...
  std::vector<Channel> channels;
  /// ... or by class of channels (find_process_patterns(): a list per
  /// channel would outweigh the rest of the result at 16,384 ranks). A
  /// channel is in one of the two lists; for_each_channel() visits both.
  std::vector<ChannelClass> channel_classes;
  /// Calls f(const Channel&) for every channel: those of `channels` in
  /// order, then those of each class by ascending sender.
  template <class F>
  void for_each_channel(F&& f) const {
    for (const Channel& c : channels) f(c);
    for (const ChannelClass& k : channel_classes)
      k.senders.for_each([&](int32_t from) { f(k.channel(from)); });
  }
  /// Every channel spelled out, sorted (tests, and consumers that need one
  /// list: the compact form has none to hand out).
  std::vector<Channel> spelled_channels() const;
  /// Per rank (ascending) that has a per-process pattern in it: its matched
  /// messages inside those patterns, in order, and how many loop iterations
  /// the occurrences of its first such pattern are (iterations(); one
  /// iteration is hops / occurrences). Tens of
  /// millions of messages at 16,384 ranks: the steps are shared by the
  /// ranks of a class, and each rank keeps only its partners.
  struct Order {
    int32_t rank = 0;
    /// Never null on an order assemble() or find_process_patterns() made.
    std::shared_ptr<const std::vector<HopStep>> steps;
    std::vector<int32_t> partners;  ///< ranks, indexed by HopStep::partner
    std::size_t occurrences = 1;

    /// An order of its own steps: `hops` in order, one partner per peer.
    static Order of(int32_t rank, const std::vector<Hop>& hops, std::size_t occurrences = 1);
    std::size_t size() const { return steps ? steps->size() : 0; }
    Hop hop(std::size_t i) const {
      const HopStep& s = (*steps)[i];
      return {partners[s.partner], s.send, s.blocking, s.tag};
    }
    /// Every hop spelled out (tests; the shape fits read steps and partners).
    std::vector<Hop> hops() const;
  };
  std::vector<Order> order;
  /// The collective operations its per-process patterns make (`allreduce`,
  /// `alltoall`, ...), distinct and sorted; find_process_patterns() fills
  /// it. A pattern of collectives alone (an FFT's transposes by
  /// MPI_Alltoall) has no edges and is named by these.
  std::vector<std::string> collectives;
  Shape shape;  ///< set by classify(); assemble leaves it unclassified
};

/// Matches sends to receives (the k-th send from a to b on one
/// communicator with one tag goes to the k-th such receive of b; receives
/// of an unknown source or tag match nothing) and joins what they connect.
/// Every per-process pattern ends up in exactly one global pattern; groups
/// of loose events that reach no pattern are left out. Ordered by their
/// first (rank, pattern). Collectives join nothing here (each is its own
/// symbol in the per-process step); find_process_patterns() joins the
/// per-process patterns that hold the same collective call of one
/// communicator.
/// When `global_of` is given, it receives per rank (in the order of
/// `ranks`) and per event the index of the global pattern the event lies in
/// (-1: none), which the coverage of a --truth evaluation counts.
std::vector<GlobalPattern> assemble(std::span<const RankEvents> ranks,
                                    std::vector<std::vector<int32_t>>* global_of = nullptr);

/// Names the shape of `g` among `ranks` ranks (numbered 0 .. ranks - 1, as
/// its edges are). Every shape of docs/patterns.md is fitted: its expected
/// edges built from parameters read off the observed ones (a grid from the
/// extrapolation's topology detection, a shift distance, a root, ...) and
/// compared with them; the best fit wins, ties going to the earlier of
/// ring, wavefront, halo, butterfly, tree, master-worker, pairwise (a
/// 2-rank exchange is a ring before it is a halo; sweeps on a grid are a
/// wavefront, though a halo has the same edges: only the ranks' order of
/// messages tells them apart). A halo, ring or other shape whose messages
/// split by size into levels of the same shape is multilevel.
/// Below kMinQuality the pattern is irregular (symmetric, every rank both
/// sends and receives) or unclassified, with its edge count and degrees.
Shape classify(const GlobalPattern& g, int32_t ranks);

/// `g` (classified) split into its phases where they have shapes of their
/// own: the tags whose messages go over the same edges are a phase, and a
/// halo whose phases each hold some of the edges of one grid direction and
/// not the others (a CG's row exchanges and its transpose, in one loop)
/// is that many patterns, each classified, all holding g's per-process
/// patterns and rank orders. A halo sent a direction or an axis at a time,
/// any other shape, and phases that one of them fits no shape, stay
/// whole: `{g}`.
std::vector<GlobalPattern> split_phases(GlobalPattern g, int32_t ranks);

// ---------------------------------------------------------------- traces

/// What an event is to the detection (the alphabet). Nonblocking calls
/// count at their post (an MPI_Isend is a send), completions, probes and
/// bookkeeping are no symbols, collectives are symbols of their own. Call
/// sites are not part of a symbol: two sends to the same peer from two
/// lines are the same symbol (contexts say where they come from).
struct SymbolKey {
  OpFamily family = OpFamily::kMarker;
  /// The partner: relative ((peer - me) mod size in the communicator) or
  /// absolute (rank in the communicator); a wildcard receive's recorded
  /// matched source when there is one, else kAny. kAbsent for collectives.
  int64_t peer = kAbsent;
  int64_t comm = 0;
  int64_t tag = kAbsent;  ///< the tag as the call gave it (kAny for a wildcard)
  auto operator<=>(const SymbolKey&) const = default;
};

enum class PeerMode { kRelative, kAbsolute };

/// Distinct symbol keys, numbered in order of first use.
class Alphabet {
 public:
  Symbol intern(const SymbolKey& key);
  const SymbolKey& at(Symbol s) const { return keys_.at(s); }
  std::size_t size() const { return keys_.size(); }
  /// `send(+1, comm 0, tag 7)`, `allreduce(comm 0)`, ...
  std::string describe(Symbol s, PeerMode mode) const;

 private:
  std::vector<SymbolKey> keys_;
  std::map<SymbolKey, Symbol> index_;
};

/// The symbol of rank `rank`'s event `ev` (peers as RankIterator gives
/// them: ranks in the event's communicator), or nullopt if it is none. A
/// posted wildcard receive's source is on its completion, not on `ev`:
/// alone, this names it `any` (find_process_patterns reads the completion).
std::optional<SymbolKey> symbol_of(const Event& ev, int32_t rank, const CommTable& comms,
                                   PeerMode mode);

/// A (communicator, peer, tag) that two threads of one rank both send or
/// receive on. Messages are paired per channel in call order, and the order
/// of two threads' calls is the run's timing: such a trace cannot be split
/// into threads without guessing which thread's message is which.
struct SharedChannel {
  int32_t rank = 0;
  int32_t threads[2] = {0, 0};  ///< thread indices of the rank, ascending
  int64_t comm = 0;
  int64_t peer = kAbsent;  ///< rank in `comm`; kAny for a wildcard source
  int64_t tag = kAbsent;   ///< kAny for a wildcard tag
  /// `rank 1 threads 0 and 1 both use communicator 0, peer 2, tag 1`.
  std::string describe() const;
};

/// The first channel two threads of a rank share, ranks and threads in
/// order (a wildcard peer or tag shares with every peer or tag of its
/// communicator); nullopt when every rank's threads keep to their own.
std::optional<SharedChannel> shared_channel(const Trace& trace);

/// The thread classes of `trace` (threads of one index across ranks: the
/// main threads, the second threads, ...) as traces of one thread per rank
/// (thread_stream()), class k at index k, to be analysed one by one. A
/// trace without threads is its one class. Throws std::runtime_error
/// naming the channel when two threads of a rank share one.
std::vector<Trace> thread_classes(const Trace& trace);

/// How a rank's events are split into contexts.
enum class ContextMode {
  kFunction,  ///< the function that made the call (default)
  kNone,      ///< the whole rank is one context (the seed's baseline)
};

struct Options {
  PeerMode peers = PeerMode::kRelative;
  ContextMode context = ContextMode::kFunction;
};

/// One per-process pattern of a group of ranks that found the same ones.
struct RankPatterns {
  Ranklist ranks;
  std::size_t events = 0;  ///< symbols of each rank of the group
  /// Per pattern: its symbols, occurrences (event positions in the rank's
  /// symbol string) and the context it lies in.
  struct Entry {
    ProcessPattern pattern;
    std::string context;
  };
  std::vector<Entry> patterns;
};

struct Result {
  Alphabet alphabet;
  std::vector<RankPatterns> groups;  ///< ranks with equal results share one
  /// Step 2: the groups' patterns joined across ranks by their messages;
  /// (rank, index) pairs index the patterns of that rank's group.
  std::vector<GlobalPattern> global;
  /// Where the events went, for the coverage of a --truth evaluation.
  struct Cover {
    std::size_t events = 0;      ///< symbols of all ranks
    std::size_t in_one = 0;      ///< in exactly one global pattern
    std::size_t in_several = 0;  ///< covered by patterns of two global patterns
    /// Events in no global pattern (the seed's single events), grouped by
    /// context and symbol, one entry per count a rank has of them.
    struct Single {
      Ranklist ranks;
      std::string context;
      Symbol symbol = 0;
      std::size_t count = 0;  ///< per rank of `ranks`
    };
    std::vector<Single> singles;
  };
  Cover cover;
};

/// Step 1 of the seed on a folded trace: each rank's events as symbols,
/// split into context runs (`context_of` names the context of a call site;
/// unused with ContextMode::kNone), and its per-process patterns. Ranks
/// whose symbols and contexts come out equal share one group; then the
/// ranks' patterns are assembled (as assemble() does, and joined further
/// where they make the same collective call: the k-th collective of each
/// member of a communicator) and named (classify). A pattern whose
/// per-process patterns make neighbourhood collectives on one communicator
/// with a topology the trace recorded (Cartesian, graph, distributed
/// graph) first gets an edge and a channel from each rank to each of its
/// topology's destinations, so it is fitted as the halo or neighbourhood
/// it is, with a `topology` parameter. Two per-process
/// patterns of a rank in one context that hold, or are held in, or overlap
/// each other, or send or receive on the same channel (the same message
/// symbol: a V-cycle's halo on the way down and on the way up), are one
/// communication. With relative peers, ranks the folded trace cannot tell
/// apart (same nodes, same value sequences, communicator groups of the
/// same sizes) are walked and searched once, through the first of them,
/// and their messages matched once per pair of such classes; per rank
/// remain the union of its patterns, its channels and the partners of its
/// hops inside patterns (the hops' steps shared by ranks whose messages go
/// alike). With absolute peers, and for ranks
/// whose peers lie outside their communicator's group, every rank is
/// walked.
Result find_process_patterns(const Trace& trace, const Options& options,
                             const std::function<std::string(SiteId)>& context_of);

/// Appends to `result.global` a `composition` per sequence of two or more
/// global patterns that a rank's per-process patterns run in one order,
/// each once an iteration (a run of one pattern's occurrences counts
/// once), the sequence repeated at least twice: one function per sweep
/// direction makes a wavefront each, and the time step their order. Its
/// parameters: `children` (the shapes, in order), `order` (`G1, G2`: the
/// children as the listing numbers them) and `iterations`; its per-process
/// patterns and edges are the children's. Call after the patterns are
/// named and split into phases (phases of one repeat are no sequence).
void find_compositions(Result& result);

}  // namespace tracefold::patterns
