// Test helper for the sampling tests (tests/mpi/sample_*.sh): reads every
// samples-R.tfs in a timeline directory and prints, per rank, the trailer's
// counts, the samples per thread, and the most frequent computation
// context's innermost function, symbolized, the samples kept with their
// innermost frame alone (leaf_only), and how many samples agree with
// the rank's timeline (rank-R.tft): one inside an MPI call lies between
// that call's enter and the next call's (the recorder's work after the
// exit time counts as inside), one outside lies between the exit of
// the previous event and the enter of the event it names; and per thread,
// how many of its samples inside MPI lie within one of that thread's own
// calls on the timeline (the one the sample names, see below), which
// holds only when samples name the thread as the trace does. No subcommand of tracefold:
// `tracefold diagnose` is the user's reader of samples.
//
//   samples_check DIR
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "tracefold/samples.hpp"
#include "tracefold/symbolize.hpp"
#include "tracefold/thread_events.hpp"
#include "tracefold/timeline_io.hpp"

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
      std::map<uint32_t, long long> sampled_ns;  // time the samples stand for
      for (const Sample& x : s.samples) {
        ++per_thread[x.thread];
        sampled_ns[x.thread] += s.period_at(x.thread, x.time_ns);
        in_mpi += x.in_mpi;
        with_lca += x.lca_depth > 0;
        if (!x.in_mpi && x.context != 0) ++per_context[x.context];
      }
      std::printf(
          "rank %d trailer %d taken %llu dropped %llu median_ns %lld p99_ns %lld samples %zu "
          "in_mpi %zu lca %zu contexts %zu clock %s period_ns %lld\n",
          rank, s.has_trailer ? 1 : 0, static_cast<unsigned long long>(s.taken),
          static_cast<unsigned long long>(s.dropped), static_cast<long long>(s.handler_median_ns),
          static_cast<long long>(s.handler_p99_ns), s.samples.size(), in_mpi, with_lca,
          s.contexts.size() - 1, s.clock == SampleClock::kCpu ? "cpu" : "wall",
          static_cast<long long>(s.period_ns));
      std::printf("rank %d trace_threads %u named %d\n", rank, s.trace_threads,
                  s.threads_named ? 1 : 0);
      for (const auto& [thread, n] : per_thread) {
        std::printf("rank %d thread %u samples %zu\n", rank, thread, n);
        long long last = s.period_ns;
        int changes = 0;
        for (const SamplePeriod& p : s.periods)
          if (p.thread == thread) ++changes, last = p.period_ns;
        std::printf("rank %d thread %u sampled_ns %lld period_changes %d last_period_ns %lld\n",
                    rank, thread, sampled_ns[thread], changes, last);
      }
      // The LCA marker on thread 0 (the MPI thread), between consecutive
      // unwound samples in the same call chain but for the leaf: with no
      // MPI call between them (same event index) the whole chain but the
      // leaf is unchanged (depth - 1); after an MPI call the leaf's caller
      // made a new call, so the marker must stop above it (<= depth - 2).
      std::size_t same_ok = 0, same_bad = 0, across_ok = 0, across_bad = 0;
      const Sample* prev = nullptr;
      for (const Sample& x : s.samples) {
        if (x.thread != 0 || x.in_mpi || x.context == 0) continue;
        if (prev && prev->mpi_event != x.mpi_event && std::getenv("SAMPLES_CHECK_VERBOSE"))
          std::printf("event change: %zu -> %zu at %lld..%lld, depth %zu -> %zu, same parent %d\n",
                      prev->mpi_event, x.mpi_event, static_cast<long long>(prev->time_ns),
                      static_cast<long long>(x.time_ns), s.depth(prev->context), s.depth(x.context),
                      s.contexts[prev->context].parent == s.contexts[x.context].parent ? 1 : 0);
        if (prev && s.contexts[prev->context].parent == s.contexts[x.context].parent &&
            s.depth(x.context) >= 2) {
          const std::size_t d = s.depth(x.context);
          if (prev->mpi_event == x.mpi_event)
            (x.lca_depth == d - 1 ? same_ok : same_bad)++;
          else
            (x.lca_depth <= d - 2 ? across_ok : across_bad)++;
        }
        prev = &x;
      }
      std::printf("rank %d lca same %zu bad %zu across %zu bad %zu\n", rank, same_ok, same_bad,
                  across_ok, across_bad);
      const std::string tl = std::string(argv[1]) + "/rank-" + std::to_string(rank) + ".tft";
      if (std::filesystem::exists(tl)) {
        const RankTimelineFile t = read_timeline_file(tl);
        const int64_t slack = 5000000;
        std::size_t agree = 0, off = 0;
        std::map<std::string, std::size_t> ops;
        for (const Sample& x : s.samples) {
          const std::size_t e = x.mpi_event;
          bool fits = false;
          if (x.in_mpi && e == t.records.size()) {
            // A call that never ended (the rank was killed in it).
            fits = e == 0 || t.records[e - 1].exit_ns - slack <= x.time_ns;
          } else if (x.in_mpi) {
            // The recorder's own work after the exit time (the call site,
            // folding, writing samples) counts as inside the call, up to
            // the next call.
            fits = e < t.records.size() && t.records[e].enter_ns - slack <= x.time_ns &&
                   (e + 1 >= t.records.size() || x.time_ns <= t.records[e + 1].enter_ns + slack);
            if (e < t.records.size()) ++ops[OpTable::name(t.records[e].op)];
          } else {
            // Another thread's sample may fall while the MPI thread is
            // inside event e, which is then still the next to be recorded
            // (copies for ticks a thread missed off its core name the
            // event that was next at their due time, docs/sampling.md).
            // Samples in the rest of MPI_Init after the sampler started
            // are not flagged in_mpi and name event 0.
            const int64_t end = e >= t.records.size() ? 0
                                : x.thread == 0       ? t.records[e].enter_ns
                                                      : t.records[e].exit_ns;
            fits =
                e == 0 || ((e >= t.records.size() || x.time_ns <= end + slack) &&
                           (e > t.records.size() || t.records[e - 1].exit_ns - slack <= x.time_ns));
          }
          (fits ? agree : off)++;
          if (!fits && std::getenv("SAMPLES_CHECK_VERBOSE")) {
            std::printf("off: thread %u time %lld event %zu in_mpi %d;", x.thread,
                        static_cast<long long>(x.time_ns), e, x.in_mpi ? 1 : 0);
            // Where the timeline has the calls around it.
            for (std::size_t k = e > 0 ? e - 1 : 0; k <= e + 1 && k < t.records.size(); ++k)
              std::printf(" event %zu %s %lld..%lld", k, OpTable::name(t.records[k].op).c_str(),
                          static_cast<long long>(t.records[k].enter_ns),
                          static_cast<long long>(t.records[k].exit_ns));
            std::printf("\n");
          }
        }
        std::printf("rank %d timeline agree %zu off %zu\n", rank, agree, off);
        // Samples inside MPI against the calls of the thread they name: the
        // call ThreadEvents::thread_event finds, between its enter and the
        // thread's next call (the recorder's work after the exit time
        // counts as inside). With no such call (MPI_Finalize, a call that
        // never ended), after the thread's last call.
        std::map<uint32_t, std::pair<std::size_t, std::size_t>> own;  // in_mpi, in own calls
        const ThreadEvents threads(t.records);
        if (std::getenv("SAMPLES_CHECK_VERBOSE"))
          for (std::size_t i = 0; i < t.records.size(); ++i)
            std::printf("record %zu thread %d %s %lld..%lld\n", i, t.records[i].thread,
                        OpTable::name(t.records[i].op).c_str(),
                        static_cast<long long>(t.records[i].enter_ns),
                        static_cast<long long>(t.records[i].exit_ns));
        for (const Sample& x : s.samples) {
          if (!x.in_mpi) continue;
          auto& [n, inside] = own[x.thread];
          ++n;
          const std::span<const uint64_t> c = threads.calls(x.thread);
          const std::optional<std::size_t> k = threads.thread_event(x.thread, x.mpi_event);
          bool fits = false;
          if (!k) {
            fits = !c.empty() && t.records[c.back()].exit_ns - slack <= x.time_ns;
          } else {
            fits = t.records[c[*k]].enter_ns - slack <= x.time_ns &&
                   (*k + 1 == c.size() || x.time_ns <= t.records[c[*k + 1]].enter_ns + slack);
          }
          inside += fits;
          if (!fits && std::getenv("SAMPLES_CHECK_VERBOSE"))
            std::printf("not in own call: thread %u time %lld event %llu\n", x.thread,
                        static_cast<long long>(x.time_ns),
                        static_cast<unsigned long long>(x.mpi_event));
        }
        for (const auto& [thread, n] : per_thread)
          std::printf("rank %d thread %u location %d calls %zu in_mpi %zu in_own_calls %zu\n", rank,
                      thread, s.location(thread), threads.calls(thread).size(), own[thread].first,
                      own[thread].second);
        for (const auto& [op, n] : ops) std::printf("rank %d in %s %zu\n", rank, op.c_str(), n);
      }
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
      // Samples kept with the interrupted instruction alone (the thread was
      // inside the loader, where it is not unwound): a context of depth 1.
      std::map<uint32_t, std::size_t> leaf_only;
      for (const Sample& x : s.samples)
        if (!x.in_mpi && x.context != 0 && s.depth(x.context) == 1) ++leaf_only[x.context];
      std::size_t n_leaf = 0;
      for (const auto& [ctx, n] : leaf_only) n_leaf += n;
      std::printf("rank %d leaf_only %zu", rank, n_leaf);
      auto top_leaf =
          std::max_element(leaf_only.begin(), leaf_only.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
      if (top_leaf != leaf_only.end()) {
        const SampleContext& c = s.contexts[top_leaf->first];
        const SourceFrames frames = sym.lookup(s.modules.at(c.module), c.offset);
        std::printf(" top %s %s",
                    frames.empty() || frames[0].function.empty() ? "?" : frames[0].function.c_str(),
                    s.modules.at(c.module).name.c_str());
      }
      std::printf("\n");
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "samples_check: %s\n", ex.what());
    return 1;
  }
  return 0;
}
