// `tracefold diff`: whether two traces (or raw-log directories) expand to
// the same events, rank by rank (diff_events in analysis_basic.hpp); with
// --resolved, wildcard receives compare by what they matched
// (resolved_stream in bench_passes.hpp).
#include "cmd_diff.hpp"

#include <filesystem>
#include <iostream>
#include <memory>

#include "tracefold/bench_passes.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/rawlog.hpp"
#include "tracefold/trace_io.hpp"

namespace fs = std::filesystem;
using namespace tracefold;

namespace {

// Either a trace file or a raw-log directory, as one thing diff can walk.
struct EventInput {
  bool is_raw = false;
  Trace trace;
  fs::path dir;
  std::vector<std::shared_ptr<RawLog>> logs;  // per rank, of a raw-log directory
  int32_t world_size = 0;
  int32_t threads = 1;
  std::string location_name(int32_t l) const {
    if (threads <= 1) return "rank " + std::to_string(l);
    return "rank " + std::to_string(l % world_size) + " thread " + std::to_string(l / world_size);
  }
};

EventInput open_input(const std::string& path) {
  EventInput in;
  if (fs::is_directory(path)) {
    in.is_raw = true;
    in.dir = path;
    int32_t n = 0;
    while (fs::exists(in.dir / ("rank-" + std::to_string(n) + ".txt"))) ++n;
    if (n == 0) throw RawLogError(path + ": no rank-0.txt (expected a raw-log directory)");
    in.world_size = n;
    for (int32_t r = 0; r < n; ++r) {
      in.logs.push_back(
          std::make_shared<RawLog>(read_raw_log(in.dir / ("rank-" + std::to_string(r) + ".txt"))));
      in.threads = std::max(in.threads, in.logs.back()->threads);
    }
    return in;
  }
  in.trace = load_trace(path);
  in.world_size = in.trace.world_size;
  in.threads = in.trace.threads;
  return in;
}

// One rank of an input: its site table and a way to (re)open its events.
struct RankInput {
  std::shared_ptr<RawLog> log;
  const SiteTable* sites = nullptr;
  std::function<EventSource()> open;
};

// Location r: thread r / world_size of rank r % world_size.
RankInput rank_input(const EventInput& in, int32_t r) {
  RankInput out;
  if (in.is_raw) {
    out.log = in.logs[static_cast<std::size_t>(r % in.world_size)];
    out.sites = &out.log->sites;
    auto events = std::make_shared<std::vector<Event>>(out.log->thread_events(r / in.world_size));
    out.open = [events] {
      auto pos = std::make_shared<std::size_t>(0);
      return EventSource([events, pos](Event& e) {
        if (*pos >= events->size()) return false;
        e = (*events)[(*pos)++];
        return true;
      });
    };
  } else {
    out.sites = &in.trace.sites;
    out.open = [&in, r] {
      auto it = std::make_shared<RankIterator>(in.trace, r);
      return EventSource([it](Event& e) { return it->next(e); });
    };
  }
  return out;
}

}  // namespace

CLI::App* add_diff_command(CLI::App& app, DiffArgs& args) {
  auto* diff = app.add_subcommand(
      "diff", "Exit 0 iff two traces (or raw-log dirs) expand to the same events");
  diff->add_option("a", args.a, "Trace file or raw-log directory")
      ->required()
      ->check(CLI::ExistingPath);
  diff->add_option("b", args.b, "Trace file or raw-log directory")
      ->required()
      ->check(CLI::ExistingPath);
  diff->add_flag("--ignore-callsites", args.options.ignore_callsites,
                 "Compare without call-site signatures");
  diff->add_flag(
      "--ignore-polls", args.options.ignore_polls,
      "Compare polls (MPI_Test*, MPI_Iprobe) by operation only: their outcomes depend on timing");
  diff->add_flag(
      "--ignore-matched", args.options.ignore_matched,
      "Do not compare which source/tag a wildcard receive matched (src, mtag, srcs, mtags)");
  diff->add_flag("--ignore-outcomes", args.options.ignore_outcomes,
                 "Do not compare which requests completion calls found complete (index, "
                 "indices, outcount) nor request links: they depend on timing");
  diff->add_flag("--resolved", args.resolved,
                 "A wildcard receive or probe that matched source s and tag t equals one "
                 "naming s and t (as after wildcard resolution or replay --deterministic)");
  return diff;
}

int run_diff(const DiffArgs& args) {
  EventInput a = open_input(args.a), b = open_input(args.b);
  if (a.world_size != b.world_size) {
    std::cout << "different: " << args.a << " has " << a.world_size << " ranks, " << args.b
              << " has " << b.world_size << "\n";
    return 1;
  }
  if (a.threads != b.threads) {
    std::cout << "different: " << args.a << " has " << a.threads << " threads per rank, " << args.b
              << " has " << b.threads << "\n";
    return 1;
  }
  // Location by location (thread t of rank r is t * world_size + r).
  for (int32_t r = 0; r < a.world_size * a.threads; ++r) {
    RankInput ra = rank_input(a, r), rb = rank_input(b, r);
    EventSource sa = args.resolved ? resolved_stream(ra.open) : ra.open();
    EventSource sb = args.resolved ? resolved_stream(rb.open) : rb.open();
    auto d = diff_events(r, sa, *ra.sites, sb, *rb.sites, args.options);
    if (d) {
      if (a.threads > 1) d->where = a.location_name(r);
      std::cout << "different: " << d->describe() << "\n";
      return 1;
    }
  }
  std::cout << "same: " << a.world_size << " ranks";
  if (a.threads > 1) std::cout << " x " << a.threads << " threads";
  std::cout << "\n";
  return 0;
}
