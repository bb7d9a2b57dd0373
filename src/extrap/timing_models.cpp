#include "tracefold/extrap/timing_models.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace tracefold::extrap {

const std::vector<TimeModel>& all_time_models() {
  static const std::vector<TimeModel> kAll = {TimeModel::kConstant,
                                              TimeModel::kLinear,
                                              TimeModel::kInverse,
                                              TimeModel::kLog,
                                              TimeModel::kInversePlusConstant,
                                              TimeModel::kPowerLaw};
  return kAll;
}

const char* time_model_name(TimeModel m) {
  switch (m) {
    case TimeModel::kConstant:
      return "constant";
    case TimeModel::kLinear:
      return "linear";
    case TimeModel::kInverse:
      return "inverse";
    case TimeModel::kInversePlusConstant:
      return "inverse+constant";
    case TimeModel::kLog:
      return "log";
    case TimeModel::kPowerLaw:
      return "power";
  }
  return "?";
}

double ModelFit::at(double n) const {
  switch (model) {
    case TimeModel::kConstant:
      return b;
    case TimeModel::kLinear:
      return a * n + b;
    case TimeModel::kInverse:
      return a / n;
    case TimeModel::kInversePlusConstant:
      return a / n + b;
    case TimeModel::kLog:
      return a * std::log2(n) + b;
    case TimeModel::kPowerLaw:
      return a * std::pow(n, b);
  }
  return 0;
}

std::string ModelFit::formula() const {
  std::ostringstream s;
  s.precision(6);
  switch (model) {
    case TimeModel::kConstant:
      s << b;
      break;
    case TimeModel::kLinear:
      s << a << "*n + " << b;
      break;
    case TimeModel::kInverse:
      s << a << "/n";
      break;
    case TimeModel::kInversePlusConstant:
      s << a << "/n + " << b;
      break;
    case TimeModel::kLog:
      s << a << "*log2(n) + " << b;
      break;
    case TimeModel::kPowerLaw:
      s << a << "*n^" << b;
      break;
  }
  return s.str();
}

namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// RMS of (y - f) over mean |f|; 0 when both vanish (an exact zero fit).
double deviation(const std::vector<double>& y, const std::vector<double>& f) {
  double ss = 0, mag = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    ss += (y[i] - f[i]) * (y[i] - f[i]);
    mag += std::fabs(f[i]);
  }
  const double n = static_cast<double>(y.size());
  const double rms = std::sqrt(ss / n);
  mag /= n;
  if (mag == 0) return rms == 0 ? 0 : INFINITY;
  return rms / mag;
}

// Least squares y = a*x + b.
void least_squares(const std::vector<double>& x, const std::vector<double>& y, double& a,
                   double& b) {
  const double mx = mean_of(x), my = mean_of(y);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  a = sxx == 0 ? 0 : sxy / sxx;
  b = my - a * mx;
}

// Mean of `v` without the value farthest from the mean, the constant fit
// of the seed; `dropped` gets the index left out. Only when three or more
// remain to judge the fit by: of three inputs, two always agree better
// than all three, so a trend's end point was dropped as an outlier. adi_mp
// at 4, 16, 25 ranks spends 26, 6.2 and 6.3 us before a line solve's
// Sendrecv (its cells shrink as 1/P): the constant without the 4-rank
// point won and put 6.3 us at 9 ranks, where the run spends 12.3.
double mean_without_outlier(const std::vector<double>& v, int& dropped, std::vector<double>& kept) {
  kept = v;
  dropped = -1;
  if (v.size() >= 4) {
    const double m = mean_of(v);
    std::size_t worst = 0;
    for (std::size_t i = 1; i < v.size(); ++i)
      if (std::fabs(v[i] - m) > std::fabs(v[worst] - m)) worst = i;
    dropped = static_cast<int>(worst);
    kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(worst));
  }
  return mean_of(kept);
}

}  // namespace

ModelFit fit_time_model(TimeModel m, const std::vector<TimePoint>& points) {
  ModelFit fit;
  fit.model = m;
  std::vector<double> n, t;
  for (const auto& p : points) {
    n.push_back(p.ranks);
    t.push_back(p.value);
  }
  const std::size_t need = m == TimeModel::kConstant || m == TimeModel::kInverse ? 1 : 2;
  if (points.size() < need) return fit;
  std::vector<double> y, f;  // the data and the fit, in the model's own space
  switch (m) {
    case TimeModel::kConstant: {
      fit.b = mean_without_outlier(t, fit.dropped, y);
      f.assign(y.size(), fit.b);
      break;
    }
    case TimeModel::kLinear: {
      least_squares(n, t, fit.a, fit.b);
      if (std::fabs(fit.a) < kMinSlope) {
        fit.a = 0;
        fit.b = mean_of(t);
      }
      y = t;
      for (double x : n) f.push_back(fit.at(x));
      break;
    }
    case TimeModel::kInverse: {
      std::vector<double> k;
      for (std::size_t i = 0; i < n.size(); ++i) k.push_back(t[i] * n[i]);
      fit.a = mean_without_outlier(k, fit.dropped, y);
      f.assign(y.size(), fit.a);
      break;
    }
    case TimeModel::kInversePlusConstant: {
      for (std::size_t i = 0; i < n.size(); ++i) y.push_back(t[i] * n[i]);
      least_squares(n, y, fit.b, fit.a);  // t*n = b*n + a
      for (double x : n) f.push_back(fit.b * x + fit.a);
      break;
    }
    case TimeModel::kLog: {
      std::vector<double> l;
      for (double x : n) l.push_back(std::log2(x));
      least_squares(l, t, fit.a, fit.b);
      y = t;
      for (double x : n) f.push_back(fit.at(x));
      break;
    }
    case TimeModel::kPowerLaw: {
      std::vector<double> ln, lt;
      for (std::size_t i = 0; i < n.size(); ++i) {
        if (t[i] <= 0) return fit;
        ln.push_back(std::log(n[i]));
        lt.push_back(std::log(t[i]));
      }
      double la = 0;
      least_squares(ln, lt, fit.b, la);
      fit.a = std::exp(la);
      y = t;
      for (double x : n) f.push_back(fit.at(x));
      break;
    }
  }
  fit.deviation = deviation(y, f);
  fit.ok = std::isfinite(fit.deviation) && std::isfinite(fit.a) && std::isfinite(fit.b);
  return fit;
}

namespace {

// The fit with the lowest deviation; fits within a rounding error of it
// (1 ppm: means of whole nanoseconds that differ in the last digit) count
// as equal, and of those the simplest (earliest) wins.
const ModelFit* lowest(const std::vector<ModelFit>& fits) {
  const ModelFit* best = nullptr;
  for (const auto& f : fits)
    if (f.ok && (!best || f.deviation < best->deviation)) best = &f;
  if (!best) return nullptr;
  for (const auto& f : fits)
    if (f.ok && f.deviation <= best->deviation + 1e-6) return &f;
  return best;
}

}  // namespace

ModelChoice choose_time_model(const std::vector<TimePoint>& points) {
  ModelChoice c;
  for (TimeModel m : all_time_models()) c.fits.push_back(fit_time_model(m, points));
  const ModelFit* best = lowest(c.fits);
  if (!best) {
    c.best = c.fits.front();  // no points: a constant 0
    return c;
  }
  c.best = *best;
  c.decided = true;
  for (const auto& f : c.fits)
    if (&f != best && f.ok && !(best->deviation + kChoiceMargin < f.deviation)) c.decided = false;
  return c;
}

void settle_undecided(std::vector<ModelChoice>& fields) {
  std::map<int, int> votes;  // model -> decided fields choosing it
  for (const auto& f : fields)
    if (f.decided) ++votes[static_cast<int>(f.best.model)];
  int winner = -1, most = 0;
  for (const auto& [model, n] : votes)  // ascending model order: ties go to the simpler
    if (n > most) {
      winner = model;
      most = n;
    }
  for (auto& f : fields) {
    if (f.decided || f.fits.empty()) continue;
    const ModelFit* pick = nullptr;
    if (winner >= 0 && f.fits[static_cast<std::size_t>(winner)].ok)
      pick = &f.fits[static_cast<std::size_t>(winner)];
    // With nothing to follow, a constant that no model beats by the margin
    // is kept: three noisy inputs are fitted closer by any two-parameter
    // model (adi_mp's step at 4, 16, 25 ranks, 1.48, 1.37, 1.34 ms, took a
    // power law and 1.42 ms at 9 ranks, where the run measured 1.35).
    const ModelFit& constant = f.fits[static_cast<std::size_t>(TimeModel::kConstant)];
    if (!pick && constant.ok && constant.deviation <= f.best.deviation + kChoiceMargin)
      pick = &constant;
    if (pick) f.best = *pick;
  }
}

}  // namespace tracefold::extrap
