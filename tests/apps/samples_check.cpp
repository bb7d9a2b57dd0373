// Test helper for the sampling tests (tests/mpi/sample_*.sh): reads every
// samples-R.tfs in a timeline directory and prints, per rank, the trailer's
// counts, the samples per thread, and the most frequent computation
// context's innermost function, symbolized. No subcommand of tracefold:
// `tracefold diagnose` is the user's reader of samples.
//
//   samples_check DIR
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>

#include "tracefold/samples.hpp"
#include "tracefold/symbolize.hpp"

using namespace tracefold;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: samples_check TIMELINE_DIR\n");
    return 2;
  }
  try {
    symbolize::Symbolizer sym;
    for (int rank = 0;; ++rank) {
      const std::string path = samples_path(argv[1], rank);
      if (!std::filesystem::exists(path)) break;
      const RankSamples s = read_samples_file(path);
      std::size_t in_mpi = 0, with_lca = 0;
      std::map<uint32_t, std::size_t> per_thread, per_context;
      for (const Sample& x : s.samples) {
        ++per_thread[x.thread];
        in_mpi += x.in_mpi;
        with_lca += x.lca_depth > 0;
        if (!x.in_mpi && x.context != 0) ++per_context[x.context];
      }
      std::printf(
          "rank %d trailer %d taken %llu dropped %llu median_ns %lld p99_ns %lld samples %zu "
          "in_mpi %zu lca %zu contexts %zu\n",
          rank, s.has_trailer ? 1 : 0, static_cast<unsigned long long>(s.taken),
          static_cast<unsigned long long>(s.dropped), static_cast<long long>(s.handler_median_ns),
          static_cast<long long>(s.handler_p99_ns), s.samples.size(), in_mpi, with_lca,
          s.contexts.size() - 1);
      for (const auto& [thread, n] : per_thread)
        std::printf("rank %d thread %u samples %zu\n", rank, thread, n);
      auto top = std::max_element(per_context.begin(), per_context.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      if (top != per_context.end()) {
        const SampleContext& c = s.contexts[top->first];
        const SourceFrames frames = sym.lookup(s.modules.at(c.module), c.offset);
        std::printf("rank %d top %s %zu %s+0x%llx\n", rank,
                    frames.empty() || frames[0].function.empty() ? "?" : frames[0].function.c_str(),
                    top->second, s.modules.at(c.module).name.c_str(),
                    static_cast<unsigned long long>(c.offset));
      }
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "samples_check: %s\n", ex.what());
    return 1;
  }
  return 0;
}
