// The input of the wait-state analysis: each rank's events (a folded
// trace's expansion, or a --sample-only run's event logs) with the times of
// its timeline file (see waits.hpp).
#include <filesystem>

#include "internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/timeline_io.hpp"

namespace tracefold {

namespace waits_detail {

namespace {

// Rank r's events, from `next` (true while it gives one), with the times of
// its timeline file in `dir`: the k-th event gets the k-th record's.
template <class Next>
std::vector<TimedEvent> time_rank_events(const Trace& trace, const std::string& dir, int32_t r,
                                         uint64_t& dropped, bool* has_end_offset, Next&& next) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(dir) / ("rank-" + std::to_string(r) + ".tft")).string();
  if (!fs::exists(path))
    throw WaitsError(path + ": missing; the trace has " + std::to_string(trace.world_size) +
                     " ranks and every rank needs its timeline (record with --timeline)");
  RankTimelineFile f;
  try {
    f = read_timeline_file(path);
  } catch (const TimelineError& e) {
    throw WaitsError(e.what());
  }
  if (f.rank != r || f.world_size != trace.world_size)
    throw WaitsError(path + ": timeline of rank " + std::to_string(f.rank) + " of " +
                     std::to_string(f.world_size) + " ranks, the trace has " +
                     std::to_string(trace.world_size) + " ranks");
  if (has_end_offset) *has_end_offset = f.end_measured();
  std::vector<TimedEvent> evs;
  evs.reserve(f.records.size());
  TimedEvent te;
  std::size_t k = 0;
  int64_t prev_end = 0;
  while (next(te.ev)) {
    if (k >= f.records.size()) {
      // Past the size bound: no times, so not analysed.
      ++dropped;
      continue;
    }
    const TimelineRecord& rec = f.records[k];
    if (rec.op != te.ev.op)
      throw WaitsError(path + ": event " + std::to_string(k) + " is " + OpTable::name(rec.op) +
                       ", the trace has " + OpTable::name(te.ev.op) + " for rank " +
                       std::to_string(r) + " (not this trace's timeline?)");
    te.start_ns = f.to_global(rec.enter_ns);
    te.end_ns = std::max(te.start_ns, f.to_global(rec.exit_ns));
    te.compute_start_ns = k == 0 ? te.start_ns : std::min(prev_end, te.start_ns);
    te.timed = true;
    prev_end = te.end_ns;
    evs.push_back(te);
    ++k;
  }
  if (k < f.records.size())
    throw WaitsError(path + ": " + std::to_string(f.records.size()) + " events, the trace has " +
                     std::to_string(k) + " for rank " + std::to_string(r));
  return evs;
}

}  // namespace

std::vector<TimedEvent> load_rank_events(const Trace& trace, const std::string& dir, int32_t r,
                                         uint64_t& dropped, bool* has_end_offset) {
  RankIterator it(trace, r);
  return time_rank_events(trace, dir, r, dropped, has_end_offset,
                          [&](Event& ev) { return it.next(ev); });
}

std::vector<TimedEvent> load_rank_events(const Trace& tables, const std::vector<Event>& events,
                                         const std::string& dir, int32_t r, uint64_t& dropped,
                                         bool* has_end_offset) {
  std::size_t i = 0;
  return time_rank_events(tables, dir, r, dropped, has_end_offset, [&](Event& ev) {
    if (i == events.size()) return false;
    ev = events[i++];
    return true;
  });
}

}  // namespace waits_detail

namespace {

// Every rank's timed events, rank r's from load(r, dropped, ended).
template <class Load>
WaitInput load_each_rank(int32_t world_size, Load&& load) {
  WaitInput in;
  in.ranks.resize(std::size_t(world_size));
  in.end_offset.assign(std::size_t(world_size), 1);
  for (int32_t r = 0; r < world_size; ++r) {
    bool ended = true;
    in.ranks[std::size_t(r)] = load(r, in.dropped, &ended);
    in.end_offset[std::size_t(r)] = ended;
  }
  return in;
}

}  // namespace

WaitInput load_wait_input(const Trace& tables, const std::vector<std::vector<Event>>& events,
                          const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw WaitsError(dir + ": no timeline directory");
  return load_each_rank(tables.world_size, [&](int32_t r, uint64_t& dropped, bool* ended) {
    return waits_detail::load_rank_events(tables, events.at(std::size_t(r)), dir, r, dropped,
                                          ended);
  });
}

WaitInput load_wait_input(const Trace& trace, const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    throw WaitsError(dir +
                     ": no timeline directory; wait-state analysis needs event times: record "
                     "the run with `tracefold record --timeline`");
  return load_each_rank(trace.world_size, [&](int32_t r, uint64_t& dropped, bool* ended) {
    return waits_detail::load_rank_events(trace, dir, r, dropped, ended);
  });
}

}  // namespace tracefold
