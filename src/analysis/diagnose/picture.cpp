// The ranks x time picture of the report (DiagnosePicture): which label
// took most of each time bin of each rank (or block of ranks), and where
// each diagnosis's symptom and cause lie, so the report can show one
// diagnosis in colour and everything else in grey (seed 002, Figure 10).
#include <algorithm>
#include <array>

#include "internal.hpp"

namespace tracefold::diagnose_detail {

namespace {

constexpr int32_t kMaxRows = 64;
constexpr std::size_t kMaxPhaseMarks = 200;
constexpr int kLabels = static_cast<int>(TimeLabel::kCount);

struct Canvas {
  const Context& c;
  DiagnosePicture& pic;
  std::vector<std::array<int64_t, kLabels>> ns;  // per cell and label

  int32_t row(int32_t rank) const { return rank / pic.ranks_per_row; }
  // Calls f(cell) for every bin [from, to) overlaps in `row`.
  template <class F>
  void cells(int32_t r, int64_t from, int64_t to, F&& f) const {
    from = std::max(from, c.run_start) - c.run_start;
    to = std::min(to, c.run_end) - c.run_start;
    if (to <= from) return;
    const int64_t b0 = from / pic.bin_ns,
                  b1 = std::min<int64_t>((to - 1) / pic.bin_ns, pic.bins - 1);
    for (int64_t b = b0; b <= b1; ++b)
      f(std::size_t(row(r)) * std::size_t(pic.bins) + std::size_t(b), b);
  }
  void add(int32_t r, int64_t from, int64_t to, TimeLabel l) {
    cells(r, from, to, [&](std::size_t cell, int64_t b) {
      const int64_t lo = std::max(from - c.run_start, b * pic.bin_ns);
      const int64_t hi = std::min(to - c.run_start, (b + 1) * pic.bin_ns);
      ns[cell][static_cast<int>(l)] += std::max<int64_t>(hi - lo, 0);
    });
  }
  void mark(std::size_t d, int32_t r, int64_t from, int64_t to, uint8_t what) {
    cells(r, from, to, [&](std::size_t cell, int64_t) {
      pic.marks[d][cell] = std::max(pic.marks[d][cell], what);
    });
  }
};

bool within(const std::string& key, const std::string& place) {
  return key == place || key.rfind(place + " > ", 0) == 0;
}

}  // namespace

void draw_picture(Context& c) {
  DiagnosePicture& pic = c.rep.picture;
  const int64_t run = c.run_end - c.run_start;
  if (c.size <= 0 || run <= 0) return;
  pic.ranks_per_row = (c.size + kMaxRows - 1) / kMaxRows;
  pic.rows = (c.size + pic.ranks_per_row - 1) / pic.ranks_per_row;
  pic.bins = kPictureBins;
  pic.bin_ns = picture_bin_ns(run);
  for (int32_t row = 0; row < pic.rows; ++row) pic.row_first.push_back(row * pic.ranks_per_row);
  const std::size_t cells = std::size_t(pic.rows) * std::size_t(pic.bins);
  const std::size_t marked = std::min(c.rep.diagnoses.size(), DiagnosePicture::kMarked);
  pic.marks.assign(marked, std::vector<uint8_t>(cells, 0));
  Canvas cv{c, pic,
            std::vector<std::array<int64_t, kLabels>>(cells, std::array<int64_t, kLabels>{})};
  std::map<std::pair<OpId, SiteId>, std::string> labels;
  auto label_of = [&](const Event& ev) -> const std::string& {
    auto [it, fresh] = labels.try_emplace({ev.op, ev.site});
    if (fresh) it->second = c.call_label(ev);
    return it->second;
  };
  for (int32_t r = 0; r < c.size; ++r) {
    const auto& evs = c.events(r);
    for (std::size_t k = 0; k < evs.size(); ++k) {
      const TimedEvent& te = evs[k];
      const int64_t gap_from =
          k == 0 && is_environment(te.ev.op) ? te.start_ns : te.compute_start_ns;
      cv.add(r, gap_from, te.start_ns, TimeLabel::kComputation);
      if (is_environment(te.ev.op)) continue;
      int64_t part[kLabels] = {};
      event_labels(c, r, k, part);
      // Inside a call the waiting comes first, then the transfer.
      int64_t at = te.start_ns;
      for (TimeLabel l : {TimeLabel::kCollectiveSync, TimeLabel::kWait, TimeLabel::kTransfer}) {
        cv.add(r, at, at + part[static_cast<int>(l)], l);
        at += part[static_cast<int>(l)];
      }
      const std::string& call = label_of(te.ev);
      for (std::size_t d = 0; d < marked; ++d) {
        const Diagnosis& dg = c.rep.diagnoses[d];
        if (dg.symptom.label == call) cv.mark(d, r, te.start_ns, te.end_ns, 1);
        for (const CodePlace& cause : dg.causes) {
          if (cause.key == call && (cause.rank < 0 || cause.rank == r))
            cv.mark(d, r, te.start_ns, te.end_ns, 2);
          if (!c.sampled(r) && cause.key == "computation before " + call)
            cv.mark(d, r, gap_from, te.start_ns, 2);
        }
      }
    }
    // With samples, a cause is a calling context: mark where it ran (the
    // rank's digest has the bins each context key's samples cover).
    if (c.sampled(r)) {
      const RankDigest& dg = c.digests[std::size_t(r)];
      std::vector<std::vector<bool>> hit(marked, std::vector<bool>(dg.keys.size(), false));
      for (std::size_t d = 0; d < marked; ++d)
        for (const CodePlace& cause : c.rep.diagnoses[d].causes)
          if (!cause.key.empty())
            for (std::size_t k = 0; k < dg.keys.size(); ++k)
              if (within(dg.keys[k], cause.key)) hit[d][k] = true;
      for (const auto& [k, bin] : dg.bins)
        for (std::size_t d = 0; d < marked; ++d)
          if (k < dg.keys.size() && hit[d][k] && int64_t(bin) < pic.bins) {
            uint8_t& m = pic.marks[d][std::size_t(cv.row(r)) * std::size_t(pic.bins) + bin];
            m = std::max<uint8_t>(m, 2);
          }
    }
  }
  pic.label.assign(cells, DiagnosePicture::kNone);
  for (std::size_t cell = 0; cell < cells; ++cell) {
    const auto& v = cv.ns[cell];
    const auto best = std::max_element(v.begin(), v.end());
    if (*best > 0) pic.label[cell] = uint8_t(best - v.begin());
  }
  const std::size_t step = c.syncs.size() / kMaxPhaseMarks + 1;
  for (std::size_t i = 0; i < c.syncs.size(); i += step)
    pic.phase_ends.push_back(c.events(0)[c.syncs[i].ev[0]].end_ns - c.run_start);
}

}  // namespace tracefold::diagnose_detail
