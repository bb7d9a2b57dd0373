// Traces with threads: the thread count stays what the inputs recorded and
// each thread class (thread t of every rank) is extrapolated across the
// rank counts as a trace of one thread per rank is, then the classes are
// put back side by side at the target (docs/extrapolate.md "Threads").
#include <algorithm>
#include <map>

#include "internal.hpp"
#include "tracefold/thread_streams.hpp"

namespace tracefold::extrap::detail {

namespace {

// Thread t's OpenMP number in one input: one value every rank's thread t
// shares, -1 when none was an OpenMP worker; throws when the ranks differ.
int64_t omp_number(const ExtrapInput& x, int32_t t) {
  const int32_t p = x.trace.world_size;
  std::map<int64_t, int32_t> seen;  // value -> ranks that have it
  int32_t named = 0;
  for (const ElasticEntry& en : x.trace.omp.entries()) {
    const Ranklist r = project_locations(en.ranks, t * p, p);
    if (r.empty()) continue;
    for (auto c = en.values.cursor(); !c.done();) seen[c.next()] += static_cast<int32_t>(r.size());
    named += static_cast<int32_t>(r.size());
  }
  if (seen.empty()) return -1;
  const int32_t with_thread = static_cast<int32_t>(thread_stream(x.trace, t).ranks().size());
  if (seen.size() > 1 || named != with_thread)
    throw ExtrapError(x.name + ": thread " + std::to_string(t) +
                      " has different OpenMP thread numbers on different ranks (the omp table): "
                      "extrapolation gives every rank's thread " +
                      std::to_string(t) + " one number; record the threads in one order");
  return seen.begin()->first;
}

}  // namespace

ExtrapResult extrapolate_threads(const std::vector<ExtrapInput>& in, const ExtrapOptions& opts,
                                 const ThreadClassFn& one_class) {
  const int32_t threads = in.front().trace.threads;
  for (const ExtrapInput& x : in)
    if (x.trace.threads != threads)
      throw ExtrapError(x.name + " has " + std::to_string(x.trace.threads) +
                        " threads per rank calling MPI and " + in.front().name + " has " +
                        std::to_string(threads) +
                        ": extrapolation keeps the thread count of its inputs; record every "
                        "input with the same number of threads");
  ExtrapResult res;
  for (int32_t t = 0; t < threads; ++t) {
    std::vector<ExtrapInput> streams;
    for (const ExtrapInput& x : in) {
      streams.push_back(
          {x.name + " (thread " + std::to_string(t) + ")", thread_stream(x.trace, t)});
      if (streams.back().trace.nodes.empty())
        throw ExtrapError(x.name + ": no rank has a thread " + std::to_string(t) +
                          " calling MPI, while the trace counts " + std::to_string(threads) +
                          " threads a rank");
    }
    int64_t omp = omp_number(in.front(), t);
    for (const ExtrapInput& x : in)
      if (omp_number(x, t) != omp)
        throw ExtrapError(x.name + ": thread " + std::to_string(t) + " has OpenMP number " +
                          std::to_string(omp_number(x, t)) + " and " + std::to_string(omp) +
                          " in " + in.front().name + " (-1: no OpenMP worker)" +
                          ": the inputs numbered their threads differently");
    ExtrapResult r;
    try {
      r = one_class(streams, opts);
    } catch (const ExtrapError& e) {
      throw ExtrapError("thread " + std::to_string(t) + " (its node numbers count the nodes of " +
                        "thread " + std::to_string(t) + "'s streams): " + e.what());
    }
    if (t == 0) {
      res.trace.world_size = r.trace.world_size;
      res.target = r.target;
      res.input_grids = r.input_grids;
      res.target_rule = r.target_rule;
    } else if (r.target.sizes != res.target.sizes) {
      res.explanation.push_back("thread " + std::to_string(t) + "'s calls fit the grid " +
                                r.target.to_string() + " where thread 0's fit " +
                                res.target.to_string());
    }
    for (const std::string& line : r.explanation)
      res.explanation.push_back("thread " + std::to_string(t) + ": " + line);
    res.filtered.insert(res.filtered.end(), r.filtered.begin(), r.filtered.end());
    res.modelled_events += r.modelled_events;
    res.events += r.events;
    if (!r.trace.lossy.empty() && res.trace.lossy.find(r.trace.lossy) == std::string::npos)
      res.trace.lossy += (res.trace.lossy.empty() ? "" : "; ") + r.trace.lossy;
    if (omp >= 0) {
      const Ranklist ranks = shift_ranks(r.trace.ranks(), t * res.trace.world_size);
      res.trace.omp.entries().push_back({ValueSeq::repeated(omp, 1), ranks});
    }
    append_thread_stream(res.trace, r.trace, t);
  }
  res.trace.threads = threads;
  return res;
}

}  // namespace tracefold::extrap::detail
