// `tracefold record --sample`: the period option's parsing and what record
// says about the samples after the run (docs/sampling.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tracefold::cli {

/// The shortest period `--sample` accepts: below it the handler's cost
/// (some microseconds) is no longer a small share of the time.
inline constexpr int64_t kMinSamplePeriodNs = 250000;
inline constexpr int64_t kDefaultSamplePeriodNs = 5000000;

/// "5ms", "250us", "1s", "300000ns" -> nanoseconds; "" gives the default.
/// Throws naming the option for text that is no period or one below 250 us.
int64_t parse_sample_period(const std::string& text);

/// After the run: samples taken and dropped, the handler's cost (the worst
/// rank's median and 99th percentile), and a warning with a period that
/// would keep within 5 % when the median cost is more than 5 % of the
/// period. `world_size` (0: unknown) names ranks that wrote none. True if
/// every rank wrote its samples whole (with the trailer).
bool summarize_samples(const std::filesystem::path& timeline_dir, int64_t period_ns,
                       int world_size);

}  // namespace tracefold::cli
