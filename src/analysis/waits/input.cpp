// The input of the wait-state analysis: each rank's events (a folded
// trace's expansion, or a --sample-only run's event logs) with the times of
// its timeline file (see waits.hpp).
#include <algorithm>
#include <filesystem>

#include "internal.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/timeline_io.hpp"

namespace tracefold {

namespace waits_detail {

namespace {

// What is left of a timeline when its events ran out first.
struct Unlogged {
  uint64_t records = 0;
  int64_t from_ns = 0;  ///< the first one's enter, on rank 0's clock
};

// Events past the timeline's size bound, without times.
struct Untimed {
  uint64_t events = 0;
  /// The earliest the first of them can have begun, on rank 0's clock: the
  /// exit of the last timed call.
  int64_t from_ns = 0;
};

// Rank r's timeline file in `dir`, checked against the trace.
RankTimelineFile read_rank_file(const Trace& trace, const std::string& dir, int32_t r) {
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
  return f;
}

// The events `next` gives (true while it gives one) at the times of
// `records`, of file `f`, for `who` (in messages): the k-th event gets the
// k-th record's. Fewer events than records is an error unless `unlogged`
// takes the rest.
template <class Next>
std::vector<TimedEvent> time_events(const RankTimelineFile& f,
                                    const std::vector<TimelineRecord>& records,
                                    const std::string& who, uint64_t& dropped, Unlogged* unlogged,
                                    Untimed* untimed, Next&& next) {
  const std::string& path = f.source;
  std::vector<TimedEvent> evs;
  evs.reserve(records.size());
  TimedEvent te;
  std::size_t k = 0;
  int64_t prev_end = f.to_global(f.start_local_ns);
  while (next(te.ev)) {
    if (k >= records.size()) {
      // Past the size bound: no times, so not analysed.
      ++dropped;
      if (untimed && !untimed->events++) untimed->from_ns = prev_end;
      continue;
    }
    const TimelineRecord& rec = records[k];
    if (rec.op != te.ev.op)
      throw WaitsError(path + ": event " + std::to_string(k) + " is " + OpTable::name(rec.op) +
                       ", the trace has " + OpTable::name(te.ev.op) + " for " + who +
                       " (not this trace's timeline?)");
    te.start_ns = f.to_global(rec.enter_ns);
    te.end_ns = std::max(te.start_ns, f.to_global(rec.exit_ns));
    te.compute_start_ns = k == 0 ? te.start_ns : std::min(prev_end, te.start_ns);
    te.timed = true;
    prev_end = te.end_ns;
    evs.push_back(te);
    ++k;
  }
  if (k < records.size() && unlogged) {
    unlogged->records = records.size() - k;
    unlogged->from_ns = f.to_global(records[k].enter_ns);
  } else if (k < records.size()) {
    throw WaitsError(path + ": " + std::to_string(records.size()) + " events, the trace has " +
                     std::to_string(k) + " for " + who);
  }
  return evs;
}

// Rank r's events, from `next`, with the times of its timeline file in
// `dir` (time_events).
template <class Next>
std::vector<TimedEvent> time_rank_events(const Trace& trace, const std::string& dir, int32_t r,
                                         uint64_t& dropped, bool* has_end_offset,
                                         Unlogged* unlogged, Untimed* untimed, Next&& next) {
  const RankTimelineFile f = read_rank_file(trace, dir, r);
  if (has_end_offset) *has_end_offset = f.end_measured();
  return time_events(f, f.records, "rank " + std::to_string(r), dropped, unlogged, untimed,
                     std::forward<Next>(next));
}

}  // namespace

std::vector<TimedEvent> load_rank_events(const Trace& trace, const std::string& dir, int32_t r,
                                         uint64_t& dropped, bool* has_end_offset) {
  RankIterator it(trace, r);
  return time_rank_events(trace, dir, r, dropped, has_end_offset, nullptr, nullptr,
                          [&](Event& ev) { return it.next(ev); });
}

std::vector<TimedEvent> load_rank_events(const Trace& tables, std::vector<Event>&& events,
                                         const std::string& dir, int32_t r, uint64_t& dropped,
                                         bool* has_end_offset, RankEnd& end) {
  std::size_t i = 0;
  Unlogged left;
  Untimed past;
  std::vector<TimedEvent> evs =
      time_rank_events(tables, dir, r, dropped, has_end_offset, &left, &past, [&](Event& ev) {
        if (i == events.size()) return false;
        ev = std::move(events[i++]);
        return true;
      });
  // Held once: a long run's events are most of the reader's memory.
  std::vector<Event>().swap(events);
  end = {left.records, left.from_ns, past.events, past.from_ns};
  return evs;
}

}  // namespace waits_detail

namespace {

using waits_detail::RankEnd;

// Every entry's timed events (the ranks', or with threads the
// locations'), entry r's from load(r, dropped, ended, end), into `in`.
// Then, if some rank's timeline or event log ended before its calls did,
// every rank is cut where the earliest such end is: a call that ended
// later may have waited for a call nothing is known of (a receive for its
// send, a collective for its entry). Each rank keeps a prefix of its
// events, so messages still match in order and a collective instance some
// rank lost is left out whole.
template <class Load>
WaitInput load_each_rank(int32_t entries, Load&& load, WaitInput in = {}) {
  const std::size_t n = std::size_t(entries);
  in.ranks.resize(n);
  in.end_offset.assign(n, 1);
  std::vector<RankEnd> ends(n);
  for (int32_t r = 0; r < entries; ++r) {
    bool ended = true;
    in.ranks[std::size_t(r)] = load(r, in.dropped, &ended, ends[std::size_t(r)]);
    in.end_offset[std::size_t(r)] = ended;
  }
  for (std::size_t r = 0; r < n; ++r) {
    const RankEnd& e = ends[r];
    if (e.unlogged) {
      if (in.unlogged.empty()) in.unlogged.assign(n, 0);
      in.unlogged[r] = e.unlogged;
      if (e.unlogged_from_ns < in.cut_ns)
        in.cut_ns = e.unlogged_from_ns, in.cut_rank = int32_t(r), in.cut_by_timeline = false;
    }
    if (e.untimed) {
      if (in.untimed.empty()) in.untimed.assign(n, 0);
      in.untimed[r] = e.untimed;
      if (e.untimed_from_ns < in.cut_ns)
        in.cut_ns = e.untimed_from_ns, in.cut_rank = int32_t(r), in.cut_by_timeline = true;
    }
  }
  if (in.cut_rank < 0) return in;
  in.after_cut.assign(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<TimedEvent>& evs = in.ranks[r];
    const auto past = std::find_if(evs.begin(), evs.end(),
                                   [&](const TimedEvent& te) { return te.end_ns > in.cut_ns; });
    in.after_cut[r] = uint64_t(evs.end() - past);
    evs.erase(past, evs.end());
  }
  return in;
}

}  // namespace

WaitInput load_wait_input(const Trace& tables, std::vector<std::vector<Event>>&& events,
                          const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) throw WaitsError(dir + ": no timeline directory");
  return load_each_rank(
      tables.world_size, [&](int32_t r, uint64_t& dropped, bool* ended, RankEnd& end) {
        return waits_detail::load_rank_events(tables, std::move(events.at(std::size_t(r))), dir, r,
                                              dropped, ended, end);
      });
}

namespace {

// Names each location rank.thread where its rank has more than one.
void name_locations(WaitInput& in, int32_t world_size) {
  std::vector<int32_t> per_rank(std::size_t(world_size), 0);
  for (const WaitLocation& l : in.locations) ++per_rank[std::size_t(l.rank)];
  for (WaitLocation& l : in.locations)
    l.name = std::to_string(l.rank) +
             (per_rank[std::size_t(l.rank)] > 1 ? "." + std::to_string(l.thread) : std::string());
}

// A timeline recorded before its records named their threads mixes a
// rank's threads' calls: splitting it by operation would guess wherever
// two threads make the same call. Each location is laid out from the
// trace's own per-thread mean times instead, as export does.
WaitInput thread_layout(const Trace& trace, const std::string& why) {
  WaitInput in;
  std::vector<RankTimeline> tl = synthesize_timeline(trace);
  for (RankTimeline& t : tl) {
    in.locations.push_back({t.rank, t.thread, ""});
    in.ranks.push_back(std::move(t.events));
  }
  name_locations(in, trace.world_size);
  in.end_offset.assign(in.ranks.size(), 1);
  in.note = "the trace has " + std::to_string(trace.threads) +
            " threads a rank; each (rank, thread) location's calls are laid out from the "
            "trace's mean times (computation, then the call), every location from time 0, "
            "since " +
            why + ": the wait states are those of that layout, not measured ones";
  return in;
}

// Each (rank, thread) location's events at the times of its rank's
// timeline records that name its thread, in synthesize_timeline's order
// (the ranks' first threads, then the later threads that called MPI).
WaitInput thread_input(const Trace& trace, const std::string& dir) {
  std::vector<RankTimelineFile> files;
  for (int32_t r = 0; r < trace.world_size; ++r) {
    files.push_back(waits_detail::read_rank_file(trace, dir, r));
    if (!files.back().has_threads())
      return thread_layout(trace, files.back().source + " (timeline version " +
                                      std::to_string(files.back().version) +
                                      ") does not say which thread made each call");
  }
  WaitInput in;
  std::vector<int32_t> locs;
  for (int32_t loc = 0; loc < trace.locations(); ++loc) {
    Event ev;
    if (trace.thread_of(loc) > 0 && !RankIterator(trace, loc).next(ev)) continue;
    locs.push_back(loc);
    in.locations.push_back({trace.rank_of(loc), trace.thread_of(loc), ""});
  }
  name_locations(in, trace.world_size);
  std::vector<std::string> names;
  for (const WaitLocation& l : in.locations) names.push_back("location " + l.name);
  return load_each_rank(
      int32_t(locs.size()),
      [&](int32_t e, uint64_t& dropped, bool* ended, RankEnd& end) {
        const int32_t loc = locs[std::size_t(e)];
        const RankTimelineFile& f = files[std::size_t(trace.rank_of(loc))];
        *ended = f.end_measured();
        RankIterator it(trace, loc);
        waits_detail::Untimed past;
        auto evs = waits_detail::time_events(f, f.thread_records(trace.thread_of(loc)),
                                             names[std::size_t(e)], dropped, nullptr, &past,
                                             [&](Event& ev) { return it.next(ev); });
        end.untimed = past.events;
        end.untimed_from_ns = past.from_ns;
        return evs;
      },
      std::move(in));
}

}  // namespace

WaitInput load_wait_input(const Trace& trace, const std::string& dir) {
  const bool timeline = std::filesystem::is_directory(dir);
  if (trace.threads > 1)
    return timeline ? thread_input(trace, dir)
                    : thread_layout(trace, "no timeline was recorded (" + dir + " is missing)");
  if (!timeline)
    throw WaitsError(dir +
                     ": no timeline directory; wait-state analysis needs event times: record "
                     "the run with `tracefold record --timeline`");
  return load_each_rank(
      trace.world_size, [&](int32_t r, uint64_t& dropped, bool* ended, RankEnd& end) {
        RankIterator it(trace, r);
        waits_detail::Untimed past;
        auto evs = waits_detail::time_rank_events(trace, dir, r, dropped, ended, nullptr, &past,
                                                  [&](Event& ev) { return it.next(ev); });
        end.untimed = past.events;
        end.untimed_from_ns = past.from_ns;
        return evs;
      });
}

}  // namespace tracefold
