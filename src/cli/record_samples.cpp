#include "record_samples.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <stdexcept>

#include "tracefold/samples.hpp"

namespace tracefold::cli {

namespace {

std::string format_period(int64_t ns) {
  if (ns % 1000000 == 0) return std::to_string(ns / 1000000) + "ms";
  if (ns % 1000 == 0) return std::to_string(ns / 1000) + "us";
  return std::to_string(ns) + "ns";
}

std::string format_us(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", static_cast<double>(ns) / 1000.0);
  return buf;
}

}  // namespace

int64_t parse_sample_period(const std::string& text) {
  if (text.empty()) return kDefaultSamplePeriodNs;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  if (used == 0 || scale == 0 || !(value > 0) || !std::isfinite(value))
    throw std::runtime_error("record: --sample: '" + text +
                             "' is not a period (write it with a unit: 5ms, 250us, 1s; and "
                             "--sample=PERIOD, or -- before the command)");
  const double ns = value * scale;
  if (ns < static_cast<double>(kMinSamplePeriodNs))
    throw std::runtime_error("record: --sample: a period of " + text +
                             " is below the shortest allowed, 250us: the sampler's own cost would "
                             "then be a large share of the run (nothing was run)");
  if (ns > 3600e9)
    throw std::runtime_error("record: --sample: a period of " + text + " is over an hour");
  return static_cast<int64_t>(std::llround(ns));
}

bool summarize_samples(const std::filesystem::path& dir, int64_t period_ns, int world_size) {
  uint64_t taken = 0, dropped = 0, kept = 0;
  int64_t median = -1, p99 = -1;
  int ranks = 0, cut = 0;
  std::string slowed;  // ranks whose sampler lowered its rate
  int64_t slowest = 0;
  bool raised_back = true;  // every thread that slowed down ends at the period asked for
  bool unreadable = false;
  std::string missing;
  const int last = world_size > 0 ? world_size : 1 << 22;
  for (int rank = 0; rank < last; ++rank) {
    const std::string path = samples_path(dir.string(), rank);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      if (world_size <= 0) break;
      if (missing.size() < 200) missing += (missing.empty() ? "" : " ") + std::to_string(rank);
      continue;
    }
    ++ranks;
    try {
      const RankSamples s = read_samples_file(path);
      kept += s.samples.size();
      if (s.has_trailer) {
        taken += s.taken;
        dropped += s.dropped;
      } else {
        ++cut;
        taken += s.samples.size();
      }
      if (!s.periods.empty() && slowed.size() < 200)
        slowed += (slowed.empty() ? "" : " ") + std::to_string(rank);
      std::map<uint32_t, int64_t> last;  // per thread
      for (const SamplePeriod& p : s.periods) {
        slowest = std::max(slowest, p.period_ns);
        last[p.thread] = p.period_ns;
      }
      for (const auto& [thread, p] : last) raised_back = raised_back && p == s.period_ns;
      median = std::max(median, s.handler_median_ns);
      p99 = std::max(p99, s.handler_p99_ns);
    } catch (const std::exception& ex) {
      unreadable = true;
      std::cerr << "tracefold: " << ex.what() << "\n";
    }
  }
  if (ranks == 0) {
    std::cerr << "tracefold: no samples were written to " << dir.string()
              << "/ (see the messages above)\n";
    return false;
  }
  std::cerr << "tracefold: samples of " << ranks << " ranks every " << format_period(period_ns)
            << " in " << dir.string() << "/: " << kept << " kept of " << taken << " taken ("
            << dropped << " dropped)";
  if (median >= 0)
    std::cerr << "; sampling handler cost median " << format_us(median) << ", 99th percentile "
              << format_us(p99) << " (worst rank)";
  std::cerr << "\n";
  if (!missing.empty())
    std::cerr << "tracefold: no samples from rank(s) " << missing << " (see the messages above)\n";
  if (!slowed.empty())
    std::cerr << "tracefold: warning: the sampling handler cost more than 5 % of the period on "
                 "rank(s) "
              << slowed << ": they lowered their rate during the run, to up to one sample every "
              << format_period(slowest)
              << (raised_back ? ", and raised it back once the handler was cheap again" : "")
              << " (recorded in the samples files; `tracefold diagnose` weighs each sample by "
                 "its period)\n";
  if (cut > 0)
    std::cerr << "tracefold: " << cut << " ranks' samples end without a trailer (the rank died)\n";
  if (median > 0 && static_cast<double>(median) > 0.05 * static_cast<double>(period_ns)) {
    // The smallest period, in steps of 50 us, at which the median costs 5 %.
    const int64_t step = 50000;
    const int64_t suggest =
        std::max<int64_t>(kMinSamplePeriodNs, (median * 20 + step - 1) / step * step);
    std::cerr << "tracefold: warning: the sampling handler's median cost is " << format_us(median)
              << ", "
              << static_cast<int>(std::lround(100.0 * static_cast<double>(median) /
                                              static_cast<double>(period_ns)))
              << " % of the " << format_period(period_ns) << " period (more than 5 %); "
              << "--sample=" << format_period(suggest) << " would stay within 5 %\n";
  }
  return missing.empty() && cut == 0 && !unreadable;
}

}  // namespace tracefold::cli
