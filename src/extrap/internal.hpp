// What the parts of src/extrap share; not installed.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracefold/extrap/extrapolate.hpp"
#include "tracefold/extrap/grid.hpp"
#include "tracefold/extrap/parts.hpp"
#include "tracefold/extrap/plugin.hpp"
#include "tracefold/extrap/topology.hpp"
#include "tracefold/histogram.hpp"
#include "tracefold/trace.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::extrap::detail {

// relative_endpoints, align_nodes, describe_node, GridInput,
// make_grid_input and cell_sequences are public: tracefold/extrap/grid.hpp.
using extrap::align_nodes;
using extrap::cell_sequences;
using extrap::describe_node;
using extrap::GridInput;
using extrap::make_grid_input;
using extrap::relative_endpoints;
// The part check is public too: tracefold/extrap/parts.hpp.
using extrap::Locator;
using extrap::PartPool;
using extrap::SeqObservation;

// ------------------------------------------------------------ adjacency.cpp

/// The grid a program whose peers no grid explains most likely used, for
/// the refusal; `rule` says where its sizes come from, in words.
struct PlausibleGrid {
  Topology topo;
  std::string rule;
};
PlausibleGrid plausible_grid(const std::vector<std::vector<int64_t>>& endpoints);

/// Why no grid explains `endpoints` (relative_endpoints of `trace`), for
/// the refusal: on the grid of plausible_grid, the
/// first two ranks of one part whose partners differ, both partner sets,
/// the node where the first extra partner shows, and the remedy. Empty
/// when every part of that grid holds one pattern.
std::string no_grid_detail(const Trace& trace, const std::vector<std::vector<int64_t>>& endpoints);

// ---------------------------------------------------------------- levels.cpp

/// How often every rank reaches every node: calls[rank][node]. Throws
/// what RankIterator throws on a trace that does not expand.
std::vector<std::vector<uint32_t>> calls_per_node(const Trace& trace);

/// The stride per dimension of `topo` (fastest first) when the ranks
/// marked in `busy` are exactly those whose coordinate along every
/// dimension is a multiple of it (rank 0 among them); nullopt otherwise.
/// A dimension with one busy coordinate has the stride of its side.
std::optional<std::vector<int64_t>> stride_of(const Topology& topo, const std::vector<bool>& busy);

/// A multigrid's coarse level on which only some ranks take part.
struct BusyLevel {
  /// Busy ranks: coordinates multiples of stride[d] (fastest first).
  std::vector<int64_t> stride;
  /// Per dimension: a single busy coordinate, so the stride is only
  /// known to be at least the side.
  std::vector<bool> lone;
  int64_t ranks = 0;   ///< busy ranks
  uint64_t calls = 0;  ///< the calls a busy rank makes beyond the next finer level's
};
/// The coarse levels of `trace` on `topo`, finest first, when its ranks
/// differ only in how many calls they make and the ranks making at least
/// each level's count form a strided set inside the previous one (none
/// when every rank makes as many calls); nullopt otherwise (and above
/// 4,096 ranks: it expands every rank).
std::optional<std::vector<BusyLevel>> busy_levels(const Trace& trace, const Topology& topo);

/// One input's stride along a dimension of side `size`; `lone`: a single
/// busy coordinate (the stride is `size` or more).
struct StrideObservation {
  int64_t size = 0;
  int64_t stride = 0;
  bool lone = false;
};
/// The stride at side `target` by the law the observations follow (a fixed
/// stride, or a fixed number of busy coordinates: S / c), with the law in
/// words; no stride when the observations allow two laws that part at
/// `target`, or none (`law` then says why and which input would decide).
struct StrideFit {
  std::optional<int64_t> stride;
  std::string law;
  /// The law is a fixed number of busy coordinates (the level's points
  /// fixed, as under strong scaling).
  bool fixed_count = false;
};
StrideFit fit_stride(const std::vector<StrideObservation>& obs, int64_t target);

/// The smallest rank count whose MPI_Dims_create grid of need.size()
/// dimensions has at least need[d] ranks along every dimension d (fastest
/// first), with its grid: "64 ranks (4x4x4)"; empty when no count up to
/// 2^24 has. Refusals name it as the input that would decide;
/// `powers_of_two`: only such counts (the inputs' counts were, as for a
/// code that runs on nothing else).
std::string smallest_grid_with(const std::vector<int64_t>& need, bool powers_of_two);

// ---------------------------------------------------------- level_classes.cpp

/// The per-level rank-predicate model (docs/extrapolate.md, "Multigrid"),
/// for inputs whose topology no grid explains: when the largest input's
/// ranks differ only in the coarse levels they are busy on (busy_levels),
/// the target's trace, one class of ranks per number of busy levels, each
/// class's trace read off one of its ranks and its partners as offsets on
/// the periodic grid. nullopt when the largest input shows no such levels
/// (`why` empty) or the model does not explain the inputs (`why` says why,
/// to follow the stencil path's refusal).
std::optional<ExtrapResult> extrapolate_levels(const std::vector<ExtrapInput>& in,
                                               const ExtrapOptions& opts, std::string& why);

// --------------------------------------------------------- level_partners.cpp

/// One call's partner in a class of the per-level model: a sentinel
/// (MPI_ANY_SOURCE, or MPI_PROC_NULL on every rank of the class), or 0 and
/// the partner's coordinate offset, fastest dimension first.
struct PeerSlot {
  int64_t sentinel = 0;
  std::vector<int64_t> offset;
};
/// An offset along a ring of `s` coordinates, in (-s/2, s/2].
int64_t ring_offset(int64_t v, int64_t s);
/// The rank at coordinates c + off on `t` without wrapping; nullopt beyond
/// an edge.
std::optional<int64_t> open_partner(const Topology& t, const std::vector<int64_t>& c,
                                    const std::vector<int64_t>& off);
/// Rank r's calls, flattened, with partners as offsets on `t` (periodic)
/// or, `open`, partners and MPI_PROC_NULL left out: ranks of one class of
/// the per-level model have equal ones.
std::vector<int64_t> class_signature(const Trace& trace, const Topology& t, int32_t r, bool open);
/// The partners of the class `members` (same calls, lowest rank first) of
/// `t` on `topo`, one slot per peer value of a call in node order. Periodic:
/// the first member's offsets on the rings. `open` (a grid with edges,
/// MPI_PROC_NULL beyond them): each call's offset from the members that
/// have a partner there, every member checked to have the rank at that
/// offset or MPI_PROC_NULL where it leaves the grid; ExtrapError naming the
/// ranks otherwise.
std::vector<PeerSlot> class_partners(const Trace& t, const Topology& topo,
                                     const std::vector<int32_t>& members, bool open,
                                     const std::string& name, std::size_t depth);

// ---------------------------------------------------------------- cells.cpp

/// Extrapolates one cell's value sequence to `target` sizes, number by
/// number. `formula` gets the sequence written with the models of its
/// numbers. `cell` is the cell the observations come from; `pool`, when
/// set, holds the same field in every cell of every input: a number that
/// the cell's own inputs leave at a constant is checked against the same
/// number in the other cells (law_from_other_parts, parts.hpp), and with
/// `peer` the numbers are relative peers, which may also be fitted as
/// coordinate offsets pooled over the cells (fit_offsets in cells.cpp).
/// Throws ExtrapError naming `what`.
struct PeerPool : PartPool {
  /// The dimensions the peers' communicator runs along (comms.cpp), or
  /// nullptr for the world: offsets are taken within its groups.
  const std::vector<bool>* keep = nullptr;
  /// The numbers are relative peers that may be read as offsets.
  bool peer = false;
  /// The numbers are no peers: another cell's law for the number at the
  /// same position may be taken (a peer's position is no same role).
  bool borrow = true;
};
ValueSeq extrapolate_sequence(const std::vector<SeqObservation>& obs, int cell,
                              const PeerPool* pool, const std::vector<int64_t>& target,
                              const std::string& what, std::string& formula);

/// Extrapolates an elastic value cell by cell: `per_input[k][cell]` as
/// cell_sequences gives it. Cells of the target that no input has are an
/// error. `explain` gets one line per distinct formula. `peer`: relative
/// peers read as offsets; `peer_field`: peers in any case (no law of
/// another cell is taken for them).
Elastic extrapolate_elastic(const std::vector<GridInput>& grids,
                            const std::vector<std::vector<const ValueSeq*>>& per_input,
                            const Topology& target, const std::string& what, bool peer,
                            std::vector<std::string>* explain,
                            const std::vector<bool>* keep = nullptr, bool peer_field = false);

// ------------------------------------------------------------- per_cell.cpp

/// The trace as the ranks of one cell of `g` recorded it: the sub-list of
/// the cell's lowest rank, its values given to every rank of the cell
/// (timing blocks stay whole). Throws ExtrapError naming `name` when a rank
/// of the cell has other calls or values.
Trace restrict_to_cell(const Trace& trace, const GridInput& g, int cell, const std::string& name);
/// `rank`'s sub-list of `trace` (its own fold, which a merge keeps), its
/// values given to the ranks `as`.
std::vector<Node> rank_nodes(const Trace& trace, int32_t rank, const Ranklist& as);
/// Every timing histogram of `node` with f times its samples, each bin
/// keeping its mean (a rank's share of a block several ranks recorded).
void scale_timings(Node& node, double f);
/// The calls all ranks make at a node with execution counts `count`.
int64_t executions(const Elastic& count);

// ------------------------------------------------------- histogram_fit.cpp

struct HistogramObservation {
  int64_t ranks = 0;
  std::vector<int64_t> sizes;
  const Histogram* histogram = nullptr;
};

/// Extrapolates a time histogram: the number of samples exactly when the
/// sizes determine it (curve models otherwise), every bin's share, mean,
/// min and max by the curve models. `rank_hint` is recorded as the rank
/// of the minimum and maximum. `explain` gets a one-line summary;
/// `exact_count`, when given, whether the sample count came from a law of
/// the sizes rather than a curve through the observed counts.
Histogram extrapolate_histogram(const std::vector<HistogramObservation>& obs,
                                const Topology& target, int32_t rank_hint, std::string* explain,
                                bool* exact_count = nullptr);

// ---------------------------------------------------------------- timings.cpp

/// The timing blocks of one aligned node: `nodes[k]` in input k, whose
/// sizes are `sizes[k]`. Call sites are interned in `out`. `exact[i]`
/// tells whether block i's sample count is a law of the sizes fitted to
/// every input (a block some inputs lack, or whose counts no law fits,
/// has a count read off a curve, which can be far off: see share_calls).
std::vector<Timing> extrapolate_timings(const std::vector<ExtrapInput>& in,
                                        const std::vector<const Node*>& nodes,
                                        const std::vector<std::vector<int64_t>>& sizes,
                                        const Topology& target, int32_t rank_hint, Trace& out,
                                        std::vector<std::string>& explanation,
                                        std::vector<bool>& exact);
/// The samples each block gets when a node makes `calls` calls in all:
/// blocks whose count is `exact` keep theirs and the others share what is
/// left in proportion to their fitted counts. A block absent from the
/// smallest input has its count extrapolated backwards from two points
/// (adi_mp 4, 16, 25 -> 9 ranks: 2 samples where the run makes 450), while
/// its node's calls and the other blocks' counts are exact. When the exact
/// blocks alone exceed `calls`, or all or none are exact, every block's
/// share is in proportion to its fitted count.
std::vector<uint64_t> share_calls(const std::vector<uint64_t>& fitted,
                                  const std::vector<bool>& exact, uint64_t calls);
/// Gives the blocks of `timings` as many samples in all as the node has
/// `calls` at the target (shared by share_calls), each bin keeping its
/// mean: the counts are fitted block by block and can miss the calls the
/// events say (adi_mp 4, 16, 25 -> 9 ranks: 3,200 samples for 3,600
/// calls). Only where every input's blocks (of `nodes`) hold one sample
/// per call.
void match_calls(std::vector<Timing>& timings, const std::vector<bool>& exact,
                 const std::vector<const Node*>& nodes, int64_t calls);

// --------------------------------------------------------------- comms.cpp

/// Communicator id -> the dimensions its groups run along (keep[d]: the
/// members of a group differ in coordinate d and share the others). All
/// true: the whole grid in rank order.
using CommShapes = std::map<int64_t, std::vector<bool>>;

/// The shape of every communicator of `g`'s trace but the world. Throws
/// ExtrapError naming the input and the communicator when one does not
/// follow the grid (reordered, partial, or not rows/columns/planes).
CommShapes comm_shapes(const GridInput& g);
/// A grid read from a communicator's groups, for a trace whose peers say
/// nothing (every rank alike: collectives only, like a pencil FFT's
/// transposes on row and column communicators).
struct CommGrid {
  Topology topology;
  int64_t comm = 0;  ///< the communicator whose groups are the rows
};
/// The first communicator but the world whose groups are the rows of a
/// 2-D row-major grid (runs of L consecutive ranks, 1 < L < P); nullopt
/// when none is.
std::optional<CommGrid> grid_from_comms(const Trace& t);
/// comm_shapes of every input, checked to agree.
CommShapes common_comm_shapes(const std::vector<GridInput>& grids);
/// `x`, `x,y (the whole grid)`, for messages.
std::string shape_name(const std::vector<bool>& keep);
/// Defines the communicators of `shapes` on the target grid in `out`.
void define_target_comms(const CommShapes& shapes, const Topology& target, CommTable& out);

/// A value that differs from rank to rank inside a cell (MPI_Comm_split's
/// color and key), read per input as b + a1*x + a2*y + a3*z in the rank's
/// coordinates, position by position, each coefficient fitted over the
/// sizes. `per_input[k]`: the field in input k (nullptr: absent). Every
/// rank of every input must have it. One entry per distinct target value.
Elastic extrapolate_by_coordinates(const std::vector<GridInput>& grids,
                                   const std::vector<const Elastic*>& per_input,
                                   const Topology& target, const std::string& what,
                                   std::vector<std::string>* explain);

/// The `dims` of an MPI_Cart_create node (`nodes[k]` in input k) when every
/// input's call holds that input's grid (recorded_cart): the target grid in
/// MPI order, for `ranks`. nullopt otherwise (the field is then fitted like
/// any value; per cell, the inputs may not pin it down).
std::optional<Elastic> cart_dims_for_target(const std::vector<GridInput>& grids,
                                            const std::vector<const Node*>& nodes,
                                            const Ranklist& ranks, const Topology& target);

// ------------------------------------------------------------- target.cpp

/// The target grid for opts.ranks: opts.grid (checked against the inputs'
/// dimensions and the count), or the grid of the first rule of
/// grid_rules() that gives every input's grid, when the rules that do
/// agree there. `rule` gets its name. Throws ExtrapError naming the
/// inputs' grids, the rules' grids and the remedy (--grid).
Topology choose_target(const std::vector<GridInput>& grids, const ExtrapOptions& opts,
                       std::string& rule);

// -------------------------------------------------------- count_model.cpp

/// A refusal about data-dependent count vectors (count_model.cpp): no
/// plugin explains values drawn from the data, so none is tried after it.
class CountModelError : public ExtrapError {
 public:
  using ExtrapError::ExtrapError;
};
/// The model's longest period: rank i sends what rank i + g sends, shifted
/// by g (g: the largest divisor of the rank count up to this), so the output
/// holds g vectors a call however many ranks the target has.
inline constexpr int64_t kCountModelPeriod = 64;
/// The shortest period taken from a divisor: below it (a prime rank count
/// above 64) the period is chosen from this to kCountModelPeriod and the
/// few ranks left over get vectors of their own.
inline constexpr int64_t kCountModelMinPeriod = 16;
/// Whether calls of `op` carry per-peer count vectors the model draws
/// (MPI_Alltoallv, MPI_Ialltoallv).
bool has_count_vectors(OpId op);
/// `counts`, `displs`, `rcounts`, `rdispls`.
bool is_count_vector(FieldId f);
/// The refusal for a count vector `f` whose values follow the data: what
/// the inputs hold (least, most, per rank), why no law gives them at
/// `target` ranks, and the option that models them.
std::string count_vector_refusal(const std::vector<ExtrapInput>& in,
                                 const std::vector<const Node*>& nodes, const std::string& label,
                                 FieldId f, int64_t target);
/// The count vectors of an all-to-all at `p` ranks drawn from the model
/// (docs/extrapolate.md, "Lossy extrapolation: data-dependent counts"):
/// each rank's total a call and the spread of its per-peer counts fitted
/// over the inputs (`nodes[k]` in input k) as curves in the rank count; a
/// circulant of seeded draws (plus one over the ranks a period leaves
/// over), so what i sends j is what j receives from i and every rank sends
/// and receives the same total. `target_node` has its ranks and execution
/// counts. Returns `counts` and, when the inputs have it, `rcounts`;
/// displacements are left out (checked to be running sums in the inputs).
/// Throws ExtrapError when the inputs do not fit the model.
std::vector<std::pair<FieldId, Elastic>> model_count_vectors(const std::vector<ExtrapInput>& in,
                                                             const std::vector<const Node*>& nodes,
                                                             const std::string& label,
                                                             const Node& target_node, int64_t p,
                                                             uint64_t seed,
                                                             std::vector<std::string>& explain);

// ---------------------------------------------------------- remainder.cpp

/// A field whose numbers differ inside parts of the grid because they
/// follow an uneven division over one dimension: unit * (G div S_d) on
/// every rank plus unit on the first G mod S_d coordinates along d (the
/// remainder spread over the first ranks), G and unit the same in every
/// input. `per_input[k]`: the field in input k; every rank of every input
/// must have it, in sequences of one shape, and `ranks` (the node's ranks
/// at the target) must be the whole target. nullopt when the values do not
/// follow such a law (numbers that are the same on every rank of each
/// input are fitted as usual).
std::optional<Elastic> extrapolate_by_remainder(const std::vector<GridInput>& grids,
                                                const std::vector<const Elastic*>& per_input,
                                                const Topology& target, const Ranklist& ranks,
                                                std::vector<std::string>* explain);

// --------------------------------------------------------- plugin_path.cpp

/// A loop level that an input lacks because the loop ran once per entry
/// there (a pipeline of q - 1 stages at q = 2, CG's halving loop at one row
/// partner): one iteration at every execution of `node`, with `members`
/// nodes in the body, as the inputs that have the loop show.
LoopLevel single_iteration_level(const Node& node, int32_t world, int64_t members);

/// Extrapolation through `plugin` (plugin.hpp): fills res.trace, res.target
/// and the explanation. Throws ExtrapError.
void extrapolate_with_plugin(const std::vector<ExtrapInput>& in, const ExtrapPlugin& plugin,
                             const ExtrapOptions& opts, ExtrapResult& res);

// ------------------------------------------------------------ symbols.cpp

/// The module tables and embedded symbols of all inputs in one: an
/// extrapolated trace keeps naming its call sites the way its inputs do.
/// The inputs must agree: a module they share is the same binary (equal
/// build-ids, or without build-ids equal paths and bases), and a frame
/// that several inputs name has the same source frames in each. Throws
/// ExtrapError naming both inputs, the module or frame and the remedy.
SymbolTables common_symbols(const std::vector<ExtrapInput>& in);

// ------------------------------------------------- nodes.cpp and per_cell.cpp

/// The cell-by-cell path (per_cell.cpp), for inputs whose merged node
/// lists differ: each cell of `res.target` extrapolated from the inputs
/// restricted to that cell (extrapolate_nodes), the cells merged into
/// `res.trace`.
void extrapolate_by_cell(const std::vector<ExtrapInput>& in, const std::vector<GridInput>& grids,
                         const CommShapes& shapes, ExtrapResult& res, const ExtrapOptions& opts);

/// Extrapolates the aligned nodes of `in` (`order` as align_nodes gives
/// it) into `out`, whose world and tables are set up by the caller; the
/// explanation and the modelled events go to `res`. With `model_counts`,
/// count vectors that follow the data are drawn from the count model
/// instead of refused.
void extrapolate_nodes(const std::vector<ExtrapInput>& in, const std::vector<GridInput>& grids,
                       const std::vector<std::vector<std::size_t>>& order, const Topology& target,
                       const CommShapes& shapes, Trace& out, ExtrapResult& res,
                       const ProgressFn& progress, bool model_counts);

// ------------------------------------------------------------ threads.cpp

/// Extrapolates one trace of one thread per rank (extrapolate() without
/// the symbol tables).
using ThreadClassFn =
    std::function<ExtrapResult(const std::vector<ExtrapInput>&, const ExtrapOptions&)>;

/// Inputs with threads (Trace::threads > 1, the same in every input): each
/// thread class projected onto the ranks (thread_stream) and extrapolated
/// by `one_class`, the results put back as the target's threads. The
/// OpenMP numbers must be one per thread class. Throws ExtrapError.
ExtrapResult extrapolate_threads(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts,
                                 const ThreadClassFn& one_class);

}  // namespace tracefold::extrap::detail
