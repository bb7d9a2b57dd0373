// Curve models for extrapolating times (seed 000, 3.2.5).
//
// A time field (a histogram's mean, min, max, a bin's statistics ...) seen
// at several rank counts n is fitted with each model below; the one with
// the smallest deviation wins when it beats every other by more than the
// margin (0.05). Otherwise the field is undecided and follows the models
// chosen for the other fields of its histogram (choose_for_group).
//
// The deviation of every model is the same measure, taken in the space the
// model is fitted in: the root mean square of the residuals divided by the
// mean magnitude of the fitted values (for the constant model: standard
// deviation over mean of the points it keeps).
#pragma once

#include <string>
#include <vector>

namespace tracefold::extrap {

enum class TimeModel {
  kConstant,             ///< t = b, after dropping the point farthest from the mean (4+ points)
  kLinear,               ///< t = a*n + b, least squares; |a| < 0.2 ns per rank counts as 0
  kInverse,              ///< t = a/n, a = mean of t*n after dropping its outlier (4+ points)
  kLog,                  ///< t = a*log2(n) + b, least squares
  kInversePlusConstant,  ///< t = a/n + b: least squares of t*n = b*n + a
  kPowerLaw,             ///< t = a*n^b, least squares of log t on log n (needs t > 0)
};

/// All models, simplest first (the order ties are broken in); a model's
/// position is its enumerator's value.
const std::vector<TimeModel>& all_time_models();
/// `constant`, `linear`, `inverse`, `inverse+constant`, `log`, `power`.
const char* time_model_name(TimeModel m);

/// Slope below which a linear fit is taken as flat (ns per rank; seed's value).
inline constexpr double kMinSlope = 0.2;
/// A model is chosen when its deviation is below every other's by more than this.
inline constexpr double kChoiceMargin = 0.05;

/// One observation: a value seen at `ranks` ranks.
struct TimePoint {
  double ranks = 0;
  double value = 0;
};

struct ModelFit {
  TimeModel model = TimeModel::kConstant;
  /// False when the model cannot be fitted (too few points, or a power law
  /// over non-positive values).
  bool ok = false;
  double a = 0, b = 0;
  /// The deviation (see the file comment); meaningful when ok.
  double deviation = 0;
  /// Index of the point left out as an outlier, or -1.
  int dropped = -1;

  /// The model's value at n ranks.
  double at(double n) const;
  /// `412.5`, `3.1*n + 40`, `1.2e+06/n + 30`, ...
  std::string formula() const;
};

/// Fits one model.
ModelFit fit_time_model(TimeModel m, const std::vector<TimePoint>& points);

struct ModelChoice {
  /// The best fit beat all others by more than the margin.
  bool decided = false;
  /// The fit with the lowest deviation (of fits equal to a rounding error,
  /// the simplest): the winner when decided.
  ModelFit best;
  /// Every model's fit, in all_time_models() order.
  std::vector<ModelFit> fits;
};

/// Fits all models and picks by deviation with the margin.
ModelChoice choose_time_model(const std::vector<TimePoint>& points);

/// Settles the undecided choices of one histogram's fields: each takes the
/// model most often chosen by the decided fields (ties: the simpler model);
/// when no field decided, each keeps the constant if no fit beats it by the
/// margin, else its own best fit (the lowest deviation; the simplest of
/// exact ties). Decided fields are left alone.
void settle_undecided(std::vector<ModelChoice>& fields);

}  // namespace tracefold::extrap
