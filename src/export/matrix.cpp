// Communication matrix (CSV, SVG heatmap, PNG) and the per-rank time chart.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <tuple>

#include "export_util.hpp"
#include "tracefold/export.hpp"

namespace tracefold {

namespace {

struct Rgb {
  int r, g, b;
};

// Light yellow -> orange -> dark red (a sequential scale readable in print).
Rgb heat_rgb(double t) {
  static const Rgb stops[] = {
      {255, 255, 204}, {254, 217, 118}, {253, 141, 60}, {227, 26, 28}, {128, 0, 38}};
  t = std::clamp(t, 0.0, 1.0) * 4.0;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  const Rgb a = stops[i], b = stops[i + 1];
  return {static_cast<int>(std::lround(a.r + (b.r - a.r) * f)),
          static_cast<int>(std::lround(a.g + (b.g - a.g) * f)),
          static_cast<int>(std::lround(a.b + (b.b - a.b) * f))};
}

// Position of a non-zero byte count on the log colour scale.
double scale(uint64_t v, uint64_t max) {
  if (max <= 1) return 1.0;
  return std::log1p(double(v)) / std::log1p(double(max));
}

uint64_t max_of(const std::vector<uint64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

// Every how many ranks an axis gets a label.
int label_step(int n) {
  int step = 1;
  while (n / step > 32) step *= 2;
  return step;
}

}  // namespace

std::string heat_colour(double t) {
  const Rgb c = heat_rgb(t);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

void write_matrix_csv(std::ostream& out, const CommMatrix& m) {
  out << "sender,receiver,messages,bytes\n";
  for (int32_t s = 0; s < m.size; ++s)
    for (int32_t r = 0; r < m.size; ++r)
      if (m.msgs(s, r) || m.byte(s, r))
        out << s << "," << r << "," << m.msgs(s, r) << "," << m.byte(s, r) << "\n";
}

// The opening of a chart: <svg> element, title, white background, heading.
static void svg_open(std::ostream& out, const char* id, const char* cls, int width, int height,
                     int left, const std::string& title) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" << id << "\" class=\"" << cls
      << "\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
      << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out << "<title>" << xml_escape(title) << "</title>\n";
  out << "<rect width=\"" << width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>\n";
  out << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">"
      << xml_escape(title) << "</text>\n";
}

void write_matrix_svg(std::ostream& out, const CommMatrix& m, const std::string& title) {
  const int n = std::max(1, m.size);
  const int cell = std::clamp(480 / n, 3, 28);
  const int left = 64, top = 56, grid = cell * n, legend_w = 16;
  const int width = left + grid + 100, height = top + grid + 56;
  const uint64_t max = max_of(m.bytes);
  const int step = label_step(n);
  svg_open(out, "comm-matrix", "heatmap", width, height, left, title);
  out << "<text x=\"" << left + grid / 2 << "\" y=\"" << top - 26
      << "\" text-anchor=\"middle\">receiver rank</text>\n";
  out << "<text transform=\"translate(14," << top + grid / 2
      << ") rotate(-90)\" text-anchor=\"middle\">sender rank</text>\n";
  out << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << grid << "\" height=\"" << grid
      << "\" fill=\"#ffffff\" stroke=\"#999999\"/>\n";
  for (int i = 0; i < n; i += step) {
    out << "<text x=\"" << left + i * cell + cell / 2.0 << "\" y=\"" << top - 6
        << "\" text-anchor=\"middle\" class=\"xlabel\">" << i << "</text>\n";
    out << "<text x=\"" << left - 6 << "\" y=\"" << top + i * cell + cell / 2.0 + 4
        << "\" text-anchor=\"end\" class=\"ylabel\">" << i << "</text>\n";
  }
  for (int32_t s = 0; s < m.size; ++s)
    for (int32_t r = 0; r < m.size; ++r) {
      const uint64_t msgs = m.msgs(s, r), bytes = m.byte(s, r);
      if (!msgs && !bytes) continue;
      out << "<rect class=\"cell\" data-sender=\"" << s << "\" data-receiver=\"" << r
          << "\" data-messages=\"" << msgs << "\" data-bytes=\"" << bytes << "\" x=\""
          << left + r * cell << "\" y=\"" << top + s * cell << "\" width=\"" << cell
          << "\" height=\"" << cell << "\" fill=\"" << heat_colour(scale(bytes, max))
          << "\"><title>" << s << " \u2192 " << r << ": " << msgs << " messages, " << bytes
          << " bytes</title></rect>\n";
    }
  // Colour scale: a vertical gradient, bytes on a log scale.
  const int lx = left + grid + 24;
  out << "<defs><linearGradient id=\"heat\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int k = 0; k <= 4; ++k)
    out << "<stop offset=\"" << k * 25 << "%\" stop-color=\"" << heat_colour(k / 4.0) << "\"/>";
  out << "</linearGradient></defs>\n";
  out << "<g class=\"legend\"><rect x=\"" << lx << "\" y=\"" << top << "\" width=\"" << legend_w
      << "\" height=\"" << grid << "\" fill=\"url(#heat)\" stroke=\"#999999\"/>\n";
  out << "<text x=\"" << lx + legend_w + 4 << "\" y=\"" << top + 8 << "\">"
      << xml_escape(bytes_text(max)) << "</text>\n";
  out << "<text x=\"" << lx + legend_w + 4 << "\" y=\"" << top + grid << "\">1 B</text>\n";
  out << "<text x=\"" << lx << "\" y=\"" << top + grid + 18 << "\">bytes (log)</text></g>\n";
  out << "<text x=\"" << left << "\" y=\"" << top + grid + 36
      << "\" fill=\"#555555\">point-to-point sends, counted at the sender; white: no "
         "messages</text>\n";
  out << "</svg>\n";
}

void write_matrix_png(const std::filesystem::path& path, const CommMatrix& m, int cell) {
  const int n = std::max(1, m.size);
  if (cell <= 0) cell = std::clamp(512 / n, 2, 32);
  const int border = cell >= 4 ? 1 : 0;
  const uint32_t w = static_cast<uint32_t>(n * cell + border), h = w;
  const uint64_t max = max_of(m.bytes);
  // Raw scanlines: filter byte 0, then RGB.
  std::vector<unsigned char> raw;
  raw.reserve(std::size_t(h) * (1 + 3 * w));
  for (uint32_t y = 0; y < h; ++y) {
    raw.push_back(0);
    for (uint32_t x = 0; x < w; ++x) {
      Rgb c{255, 255, 255};
      if (border && (x % cell == 0 || y % cell == 0)) {
        c = {200, 200, 200};
      } else {
        const int32_t s = std::min<int32_t>(int32_t(y / cell), n - 1),
                      r = std::min<int32_t>(int32_t(x / cell), n - 1);
        if (s < m.size && r < m.size && (m.byte(s, r) || m.msgs(s, r)))
          c = heat_rgb(scale(m.byte(s, r), max));
      }
      raw.push_back(static_cast<unsigned char>(c.r));
      raw.push_back(static_cast<unsigned char>(c.g));
      raw.push_back(static_cast<unsigned char>(c.b));
    }
  }
  uLongf zlen = compressBound(raw.size());
  std::vector<unsigned char> z(zlen);
  if (compress2(z.data(), &zlen, raw.data(), raw.size(), 9) != Z_OK)
    throw std::runtime_error("PNG: zlib compress failed");
  z.resize(zlen);

  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path.string() + ": cannot write");
  auto be32 = [](std::string& s, uint32_t v) {
    for (int k = 3; k >= 0; --k) s += static_cast<char>((v >> (8 * k)) & 0xff);
  };
  auto chunk = [&](const char* type, const std::string& data) {
    std::string c;
    be32(c, static_cast<uint32_t>(data.size()));
    std::string body = std::string(type, 4) + data;
    c += body;
    be32(c, static_cast<uint32_t>(crc32(crc32(0, nullptr, 0),
                                        reinterpret_cast<const Bytef*>(body.data()),
                                        static_cast<uInt>(body.size()))));
    f.write(c.data(), static_cast<std::streamsize>(c.size()));
  };
  f.write("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  be32(ihdr, w);
  be32(ihdr, h);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter, no interlace
  chunk("IHDR", ihdr);
  chunk("IDAT", std::string(z.begin(), z.end()));
  chunk("IEND", "");
  if (!f) throw std::runtime_error(path.string() + ": write failed");
}

void write_ranks_svg(std::ostream& out, const std::vector<RankTimeline>& timeline,
                     const std::string& title) {
  // With threads, one bar per (rank, thread) location, a rank's threads
  // side by side; the timeline lists every rank's first thread first.
  const bool threads = std::any_of(timeline.begin(), timeline.end(),
                                   [](const RankTimeline& tl) { return tl.thread != 0; });
  std::vector<const RankTimeline*> bars;
  for (const RankTimeline& tl : timeline) bars.push_back(&tl);
  if (threads)
    std::stable_sort(bars.begin(), bars.end(), [](const RankTimeline* a, const RankTimeline* b) {
      return std::tie(a->rank, a->thread) < std::tie(b->rank, b->thread);
    });
  const int n = std::max<int>(1, static_cast<int>(timeline.size()));
  const int bar = std::clamp(640 / n, 2, 40), gap = bar >= 6 ? bar / 5 : 0;
  const int left = 80, top = 48, plot_h = 240, plot_w = n * bar;
  const int width = left + plot_w + 170, height = top + plot_h + 60;
  int64_t max = 1;
  for (const auto& tl : timeline) max = std::max(max, tl.compute_ns + tl.comm_ns);
  // A round axis maximum: 1, 2 or 5 times a power of ten.
  double axis = 1;
  while (axis < double(max)) axis *= 10;
  if (axis / 5 >= double(max))
    axis /= 5;
  else if (axis / 2 >= double(max))
    axis /= 2;
  const double k = plot_h / axis;
  svg_open(out, "rank-times", "barchart", width, height, left, title);
  for (int t = 0; t <= 4; ++t) {
    const double y = top + plot_h - t * plot_h / 4.0;
    out << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << y << "\" y2=\""
        << y << "\" stroke=\"#dddddd\"/>\n";
    out << "<text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
        << xml_escape(time_text(axis * t / 4)) << "</text>\n";
  }
  // The axis says where its times come from: a recorded timeline's own
  // (save events past the recorder's budget, laid out from means), or the
  // trace's means.
  std::size_t measured = 0, calls = 0;
  for (const RankTimeline& tl : timeline)
    for (const TimedEvent& te : tl.events) {
      ++calls;
      measured += te.measured;
    }
  std::string axis_label = "time (sum of means)";
  if (measured > 0 && measured == calls)
    axis_label = "time (recorded)";
  else if (measured > 0)
    axis_label = "time (recorded; " + std::to_string(calls - measured) + " calls from means)";
  out << "<text transform=\"translate(14," << top + plot_h / 2
      << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis-time\">" << axis_label << "</text>\n";
  out << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 36
      << "\" text-anchor=\"middle\">" << (threads ? "rank.thread" : "rank") << "</text>\n";
  const int step = label_step(n);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const RankTimeline& tl = *bars[i];
    // Without threads a rank's bar stays at its rank, as it always was.
    const int slot = threads ? static_cast<int>(i) : tl.rank;
    const int x = left + slot * bar;
    const double hc = tl.compute_ns * k, hm = tl.comm_ns * k;
    const double base = top + plot_h;
    // The names export gives its locations: `rank R thread T`.
    const std::string who = "rank " + std::to_string(tl.rank) +
                            (threads ? " thread " + std::to_string(tl.thread) : std::string());
    const std::string attrs =
        "data-rank=\"" + std::to_string(tl.rank) + "\"" +
        (threads ? " data-thread=\"" + std::to_string(tl.thread) + "\" data-calls=\"" +
                       std::to_string(tl.events.size()) + "\""
                 : std::string());
    out << "<rect class=\"bar-compute\" " << attrs << " data-ns=\"" << tl.compute_ns << "\" x=\""
        << x + gap / 2 << "\" y=\"" << base - hc << "\" width=\"" << bar - gap << "\" height=\""
        << hc << "\" fill=\"#4e79a7\"><title>" << who << ": computation "
        << xml_escape(time_text(double(tl.compute_ns))) << "</title></rect>\n";
    out << "<rect class=\"bar-comm\" " << attrs << " data-ns=\"" << tl.comm_ns << "\" x=\""
        << x + gap / 2 << "\" y=\"" << base - hc - hm << "\" width=\"" << bar - gap
        << "\" height=\"" << hm << "\" fill=\"#e15759\"><title>" << who << ": in MPI calls "
        << xml_escape(time_text(double(tl.comm_ns)))
        << (threads ? ", " + std::to_string(tl.events.size()) + " calls" : std::string())
        << "</title></rect>\n";
    if (slot % step == 0)
      out << "<text x=\"" << x + bar / 2.0 << "\" y=\"" << base + 14 << "\" text-anchor=\"middle\">"
          << tl.rank << (threads ? "." + std::to_string(tl.thread) : std::string()) << "</text>\n";
  }
  out << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\""
      << top + plot_h << "\" stroke=\"#333333\"/>\n<line x1=\"" << left << "\" x2=\""
      << left + plot_w << "\" y1=\"" << top + plot_h << "\" y2=\"" << top + plot_h
      << "\" stroke=\"#333333\"/>\n";
  const int lx = left + plot_w + 16;
  out << "<g class=\"legend\"><rect x=\"" << lx << "\" y=\"" << top
      << "\" width=\"12\" height=\"12\" fill=\"#e15759\"/>"
      << "<text x=\"" << lx + 18 << "\" y=\"" << top + 10 << "\">in MPI calls</text>"
      << "<rect x=\"" << lx << "\" y=\"" << top + 20
      << "\" width=\"12\" height=\"12\" fill=\"#4e79a7\"/>"
      << "<text x=\"" << lx + 18 << "\" y=\"" << top + 30 << "\">computation</text></g>\n";
  out << "</svg>\n";
}

}  // namespace tracefold
