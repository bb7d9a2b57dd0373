// Extrapolation plugins: communication patterns that are not row-major
// stencils (seed 000, 3.3).
//
// Some codes lay their ranks out in a way no adjacency scan recovers, and
// talk to partners that are no fixed step on a grid: NPB CG's ranks form
// an nprows x npcols array (a power of two), each exchanges with the
// partners at power-of-two distances within its row and with its
// "transpose" partner. The number of row partners grows with log2 of the
// row length, so the loops over them change length with scale, and a
// value's position in such a loop says which partner it is for. Two or
// three rank counts cannot tell those laws from the linear ones the
// stencil path fits; the user, who knows the code, can.
//
// A plugin says, as functions of (rank, world size, layout sizes):
//   - layout(world): the sizes of the process layout at `world` ranks, or
//     why the pattern does not exist at that count (CG: not a power of
//     two);
//   - sequences(): named per-rank sequences, each the values one pass of
//     a loop gives a field: the partners of a rank (absolute ranks) or
//     plain numbers (tags, counts, trip counts) that follow the layout.
//
// Extrapolation with a plugin reads each rank's values of every field as
// blocks repeated R times, each block a chain of segments; a segment is a
// plugin sequence (peers exactly; numbers as a*Q + b with a and b the same
// in every input) or one constant. The segmentation found in one rank of
// the largest input must explain every rank of every input. The target's
// ranks get the same chain evaluated on the target layout; R (and any
// number that is no plugin sequence) is fitted over the layout sizes like
// any value of the stencil path. See docs/extrapolate.md, "Plugins".
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracefold::extrap {

/// A rank of a run as a plugin sees it.
struct PluginContext {
  int64_t rank = 0;
  int64_t world = 0;
  /// The plugin's layout of `world` ranks (layout(world)).
  std::vector<int64_t> sizes;
};

/// One named per-rank sequence of a plugin.
struct PluginSequence {
  /// Short name, printed by --explain (`row-down`).
  std::string name;
  /// What it is, for --explain and docs (`row*C + (col ^ 2^k), k = L-1..0`).
  std::string formula;
  /// True: the values are ranks (absolute, in [0, world)); they explain
  /// peer fields only. False: plain numbers; they explain other fields.
  bool peers = false;
  std::function<std::vector<int64_t>(const PluginContext&)> values;
};

/// The pattern does not exist at a rank count; what() says why.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ExtrapPlugin {
 public:
  virtual ~ExtrapPlugin() = default;
  /// Name the user selects it by (`--plugin cg`).
  virtual std::string name() const = 0;
  /// One line: the pattern it knows.
  virtual std::string summary() const = 0;
  /// Names of the layout sizes, in the order layout() gives them
  /// (`{"C", "R"}`); used in formulas.
  virtual std::vector<std::string> size_names() const = 0;
  /// The layout at `world` ranks. Throws PluginError when the pattern has
  /// no layout of that many ranks.
  virtual std::vector<int64_t> layout(int64_t world) const = 0;
  /// The sequences it explains values with. Tried in this order: put the
  /// more specific ones first.
  virtual std::vector<PluginSequence> sequences() const = 0;
};

/// Registers `plugin` under its name. Throws std::invalid_argument when the
/// name is taken. The built-in plugins (cg) are always registered.
void register_plugin(std::shared_ptr<const ExtrapPlugin> plugin);
/// The plugin registered as `name`, or nullptr.
const ExtrapPlugin* find_plugin(const std::string& name);
/// Every registered plugin, built-ins first, then in registration order.
std::vector<const ExtrapPlugin*> registered_plugins();

/// NPB CG's pattern (tests/apps/cg.c): P = 2^k ranks in R = 2^floor(k/2)
/// rows of C = P/R columns (C = R or 2R), rank = row*C + col; the row
/// partners row*C + (col XOR 2^i) for i = L-1..0 (recursive halving) and
/// i = 0..L-1 (recursive doubling), L = log2 C; the transpose partner
/// (col mod R)*R + col/R when C = R, else 2*(((r/2) mod R)*R + (r/2)/R) +
/// r mod 2. Numbers: the levels L-1..0 and 0..L-1, the powers 2^(L-1)..1
/// and 1..2^(L-1), and L itself.
std::shared_ptr<const ExtrapPlugin> make_cg_plugin();

}  // namespace tracefold::extrap
