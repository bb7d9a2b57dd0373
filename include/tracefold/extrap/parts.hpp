// Parts of the grid seen at one size (issues 14 and 15), shared by
// `tracefold extrapolate` and `tracefold bench --parametric`.
//
// A middle part of a dimension exists only where it has 3 or more ranks:
// with inputs at 4 (2x2), 6 (3x2) and 9 (3x3) ranks the middle column is
// seen at 9 only, and the first column's middle rows at 3 rows both times.
// A number of such a part fitted over its own inputs comes out a constant,
// which says nothing about the dimension they leave at one size (strong
// scaling: 120 values at 3 rows, 90 at 4). The same number (node, field,
// position) in the other parts decides: a law that changes with the grid
// there and also gives this part's own values is taken; laws that
// disagree, or a part seen in one input whose number changes elsewhere
// under no law that explains it, are an error.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tracefold/extrap/grid.hpp"
#include "tracefold/extrap/scale_model.hpp"
#include "tracefold/extrap/topology.hpp"
#include "tracefold/value_seq.hpp"

namespace tracefold::extrap {

/// One input's sequence of the part being fitted.
struct SeqObservation {
  const GridInput* grid = nullptr;
  const ValueSeq* seq = nullptr;  ///< nullptr: absent
};

/// One field of one aligned node in every part of every input.
struct PartPool {
  const std::vector<GridInput>* grids = nullptr;
  /// per_input[k][cell]: input k's sequence in each cell (cell_sequences), or nullptr.
  const std::vector<std::vector<const ValueSeq*>>* per_input = nullptr;
};

/// The number being fitted, read from another part's sequence `other` of
/// an input; `ref` is the fitted part's own sequence in that input, which
/// defines the position. nullopt: `other` is shaped differently.
using Locator = std::function<std::optional<int64_t>(const ValueSeq& ref, const ValueSeq& other)>;

/// Number `j` of run `run`'s pattern: the same place where `other` has the
/// same runs (pattern lengths and repeats), else the same index of an
/// equally long short sequence.
Locator pattern_position(std::size_t run, std::size_t j);
/// The repeat count of run `run`, where `other`'s runs have the same pattern lengths.
Locator repeat_position(std::size_t run);
/// Number `i` of an equally long short sequence.
Locator index_position(std::size_t i);

/// Whether the inputs of a part leave some dimension at one size.
bool some_dimension_unvaried(const std::vector<SeqObservation>& obs);

/// Whether some other part, in any input, has a sequence as long as the
/// part's but folded into other runs: the part's values coincide where
/// theirs differ (240 west and north at 3x3 where the corners send 360
/// and 240 at 2x3), so one number of its runs would stand for several
/// roles; such a part is to be compared value by value.
bool folds_coarser(const std::vector<SeqObservation>& obs, const PartPool& pool);

/// For a part seen in one input: the first other part whose sequence of
/// the field differs between the inputs that have it ("" when none), for
/// numbers whose position no other part's sequence shows. `grid` names
/// the parts. With `shapes`, only runs that differ in pattern lengths or
/// repeat counts count (for repeat counts: relative peers differ at every
/// size while their runs repeat alike).
std::string varying_part(const PartPool& pool, const Topology& grid, bool shapes = false);

/// `120 in st-9.tf (3x3), ...`: the values of a number, for messages.
std::string values_listing(const std::vector<SeqObservation>& obs,
                           const std::vector<int64_t>& values);

/// `s`, cut to 80 characters, for messages.
std::string clip(const std::string& s);

struct PartCheck {
  /// The numbers are no peers: another part's law for the number at the
  /// same position may be taken (a peer's position is no same role).
  bool borrow = true;
  /// The laws of other parts must be the same formula, not only agree at
  /// the target (a parametric benchmark runs at every size).
  bool same_law = false;
  /// varying_part's answer, for a part seen in one input (nullptr: none).
  const std::string* varying = nullptr;
};

/// A law taken from another part.
struct BorrowedLaw {
  ValueFit fit;  ///< at the target
  int cell = 0;  ///< the part it comes from
};

/// The check of one number of part `cell`: `values[k]` in `obs[k]`,
/// `own` their fit at `target`. When `own` is a constant and the inputs
/// leave some dimension at one size, the same number in the other parts
/// (found by `at`; nullptr: none is looked at) decides: returns the law
/// to take, or nullopt when the constant stands. Throws ExtrapError
/// naming `what` (node, field, part), the values and the other parts'
/// laws when they disagree, or when the part is seen in one input and the
/// number changes elsewhere under no law that gives its values.
std::optional<BorrowedLaw> law_from_other_parts(const std::vector<SeqObservation>& obs, int cell,
                                                const std::vector<int64_t>& values,
                                                const ValueFit& own, const PartPool& pool,
                                                const Locator* at,
                                                const std::vector<int64_t>& target,
                                                const std::string& what, const PartCheck& check);

}  // namespace tracefold::extrap
