// The seed's constant-exit-gap clock alignment as a fallback: a rank whose
// timeline ends without the offset the recorder measures at MPI_Finalize
// (it died, or the run was aborted) has its clock mapped by the start
// offset alone, so its drift since then is uncorrected. The exits of a
// global synchronisation are nearly simultaneous; a drift shows as a gap
// to rank 0's exits that grows with time, and its slope is the drift.
#include <algorithm>
#include <cmath>

#include "internal.hpp"

namespace tracefold::diagnose_detail {

namespace {

// At most this many instances enter the fit (evenly spread over the run):
// Theil-Sen looks at every pair.
constexpr std::size_t kMaxPoints = 201;

double median(std::vector<double> v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(mid), v.end());
  return v[mid];
}

// Theil-Sen fit of gap against time: the slope, and the median absolute
// residual of the gaps about the fitted line and about their median (no
// drift), to tell a drift from the exits' scatter.
struct Fit {
  double slope = 0, residual = 0, flat = 0;
  // The largest distance from the line of a gap within kInlier residuals
  // of it: a slope a little off leaves the gaps at the run's ends that far
  // from the line, more than the median distance says. Gaps farther out are
  // instances that do not synchronise, whose exits are apart by the work
  // between them.
  double inlier_max = 0;
};

constexpr double kInlier = 10;

Fit theil_sen(const std::vector<std::pair<double, double>>& pts) {
  Fit f;
  std::vector<double> v;
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (std::size_t j = i + 1; j < pts.size(); ++j)
      if (pts[j].first > pts[i].first)
        v.push_back((pts[j].second - pts[i].second) / (pts[j].first - pts[i].first));
  if (v.empty()) return f;
  f.slope = median(v);
  v.clear();
  for (const auto& [x, g] : pts) v.push_back(g - f.slope * x);
  const double a = median(v);
  for (double& e : v) e = std::abs(e - a);
  f.residual = median(v);
  for (double e : v)
    if (e <= kInlier * f.residual) f.inlier_max = std::max(f.inlier_max, e);
  v.clear();
  for (const auto& p : pts) v.push_back(p.second);
  const double m = median(v);
  for (double& e : v) e = std::abs(e - m);
  f.flat = median(v);
  return f;
}

}  // namespace

std::vector<ExitGapDrift> align_by_exit_gaps(const Trace& trace, WaitInput& in,
                                             std::vector<int32_t>& unfitted) {
  std::vector<ExitGapDrift> fits;
  const std::size_t P = in.ranks.size();
  if (in.end_offset.size() != P || P < 2) return fits;
  bool any = false;
  for (std::size_t r = 1; r < P; ++r) any = any || !in.end_offset[r];
  if (!any) return fits;
  const std::vector<std::vector<std::size_t>> cand = sync_candidates(trace, in);
  std::size_t n = cand[0].size();
  for (const auto& v : cand) n = std::min(n, v.size());
  // Instances every rank reached as the same operation, spread evenly.
  std::vector<std::size_t> inst;
  const std::size_t step = n > kMaxPoints ? (n + kMaxPoints - 1) / kMaxPoints : 1;
  for (std::size_t k = 0; k < n; k += step) {
    bool same = true;
    for (std::size_t r = 1; r < P && same; ++r)
      same = in.ranks[r][cand[r][k]].ev.op == in.ranks[0][cand[0][k]].ev.op;
    if (!same) break;  // the ranks went different ways: stop matching
    inst.push_back(k);
  }
  // Each rank's exits against the median exit of the instance, not rank
  // 0's alone: one late exit of rank 0 would otherwise move every gap.
  std::vector<double> mid(inst.size());
  for (std::size_t i = 0; i < inst.size(); ++i) {
    std::vector<double> ex;
    for (std::size_t r = 0; r < P; ++r) ex.push_back(double(in.ranks[r][cand[r][inst[i]]].end_ns));
    mid[i] = median(ex);
  }
  auto fit_of = [&](std::size_t r) {
    std::vector<std::pair<double, double>> pts;
    for (std::size_t i = 0; i < inst.size(); ++i)
      pts.emplace_back(mid[i], double(in.ranks[r][cand[r][inst[i]]].end_ns) - mid[i]);
    return theil_sen(pts);
  };
  if (inst.size() < 3) {
    for (std::size_t r = 1; r < P; ++r)
      if (!in.end_offset[r]) unfitted.push_back(int32_t(r));
    return fits;
  }
  // The gap that is left between a rank's exits and rank 0's: its start
  // offset's error (measured at MPI_Init, which a loaded machine can put
  // 100s of microseconds off) together with the exits' own order; this
  // method cannot tell the two apart.
  auto gap_to_0 = [&](std::size_t r) {
    std::vector<double> g;
    for (std::size_t i = 0; i < inst.size(); ++i)
      g.push_back(double(in.ranks[r][cand[r][inst[i]]].end_ns) -
                  double(in.ranks[0][cand[0][inst[i]]].end_ns));
    return std::abs(median(std::move(g)));
  };
  const Fit ref = fit_of(0);
  for (std::size_t r = 1; r < P; ++r) {
    if (in.end_offset[r] || in.ranks[r].empty()) continue;
    const Fit f = fit_of(r);
    ExitGapDrift d;
    d.rank = int32_t(r);
    d.slope = f.slope - ref.slope;
    d.syncs = inst.size();
    d.residual_ns = std::max(f.residual, ref.residual);
    d.inlier_max_ns = std::max(f.inlier_max, ref.inlier_max);
    // A drift, not the scatter of exits: the line must explain the gaps
    // clearly better than a constant (a loaded machine spreads exits by
    // milliseconds, and a few instances then fit any slope).
    if (!(f.residual < 0.5 * f.flat)) {
      d.slope = 0;
      d.applied = false;
      d.residual_ns = std::max(f.flat, ref.flat);
      d.inlier_max_ns = 0;
      d.offset_ns = gap_to_0(r);
      fits.push_back(d);
      continue;
    }
    // The start offset was measured at the end of MPI_Init (the first
    // event): the drift counts from there. (MPI_Init can take long; the
    // drift during it is in the measured offset.)
    d.origin_ns = in.ranks[r].front().end_ns;
    for (TimedEvent& te : in.ranks[r]) {
      te.start_ns = d.correct(te.start_ns);
      te.end_ns = d.correct(te.end_ns);
      te.compute_start_ns = d.correct(te.compute_start_ns);
    }
    d.offset_ns = gap_to_0(r);
    fits.push_back(d);
  }
  return fits;
}

}  // namespace tracefold::diagnose_detail
