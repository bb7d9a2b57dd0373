// tracefold-diagnose: `mpirun -np K tracefold diagnose TRACE [-o REPORT]`
// (the CLI execs this program when it finds itself under a launcher), with
// K at most the recording's rank count. Each analysis rank reads the
// samples of its share of the recorded ranks (N/K of them) and puts them on
// rank 0's clock; the ranks swap lists of the frames they sampled and each
// names one block of the distinct frames (naming costs per frame, and SPMD
// ranks sample the same frames), then every rank gets every name. Each
// rank reads its share's timelines too and matches the messages its share
// receives (match.hpp); rank 0 reads every rank's timeline and finds what
// needs every rank's events (clock alignment and repair, the wait states:
// the waits module's own parallel analysis needs one analysis rank per
// recorded rank) from the one match, and sends each rank its share's events
// with their waiting, one share at a time. Each rank digests its share's
// samples against them (digest_rank, as the serial diagnosis does) and
// reduces its share's events to what the rules need (reduce_rank); the
// digests travel to rank 0 along a binary tree (mpi_common.hpp), and the
// reductions combine along the same tree: no rank holds the samples of
// more than its share. Rank 0 diagnoses from the
// events and the digests and writes exactly the serial report.
#include <mpi.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "digest.hpp"
#include "match.hpp"
#include "mpi_common.hpp"
#include "tracefold/event_log.hpp"
#include "tracefold/symbolize.hpp"
#include "tracefold/trace_io.hpp"
#include "waits/internal.hpp"

using namespace tracefold;
using namespace tracefold::diagnose_detail;
using tracefold::diagnose_parallel::ShareNames;

namespace {

struct Args {
  std::string trace, output, timeline;
  DiagnoseOptions options;
  bool raw_sites = false;
  std::vector<std::string> debug_dirs;
};

// Another analysis rank failed; it says why.
struct PeerFailed {};

void agree(const std::string& err) {
  const int first = mpi_common::first_failing(MPI_COMM_WORLD, err);
  if (first < 0) return;
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (first == me) throw DiagnoseError(err);
  throw PeerFailed{};
}

// Rank 0 names the trace's call sites as the serial command does, in a
// thread on its own copy of them while the ranks read.
class SiteNames {
 public:
  SiteNames(Trace& trace, const Args& args) : trace_(trace) {
    if (args.raw_sites) {
      trace.symtab.symbols.clear();
      return;
    }
    side_.sites = trace.sites;
    side_.symtab = trace.symtab;
    thread_ = std::jthread([this, dirs = args.debug_dirs] {
      try {
        symbolize::Symbolizer symbolizer({dirs, true});
        symbolize::symbolize_trace(side_, symbolizer, {}, symbolize::FrameScope::kLabels);
      } catch (const std::exception& e) {
        err_ = e.what();
      }
    });
  }
  /// Puts the names into the trace; throws what symbolizing threw.
  void finish() {
    if (!thread_.joinable()) return;
    thread_.join();
    if (!err_.empty()) throw DiagnoseError(err_);
    trace_.symtab = std::move(side_.symtab);
  }

 private:
  Trace& trace_;
  Trace side_;
  std::string err_;
  std::jthread thread_;
};

// With TRACEFOLD_DIAGNOSE_PHASES=1, rank 0 says on standard error how long
// each step took it: wall time since the previous step, and the processor
// time it used (on a loaded machine the wall time is mostly waiting for a
// core).
struct Steps {
  bool on = false;
  double last = MPI_Wtime(), last_cpu = mpi_common::cpu_seconds();
  void mark(const char* what) {
    if (!on) return;
    const double now = MPI_Wtime(), cpu = mpi_common::cpu_seconds();
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    std::cerr << "tracefold: step " << what << ": " << now - last << " s (processor "
              << cpu - last_cpu << " s), peak resident " << u.ru_maxrss / 1024 << " MB\n";
    last = now, last_cpu = cpu;
  }
};

// Ranks [first, last)'s events of a folded trace, the other entries empty
// (the cut, if any, is rank 0's to tell: match_events).
WaitInput load_share_events(const Trace& trace, const std::string& dir, int32_t first,
                            int32_t last) {
  WaitInput in;
  in.ranks.resize(std::size_t(trace.world_size));
  for (int32_t r = first; r < last; ++r) {
    try {
      in.ranks[std::size_t(r)] = waits_detail::load_rank_events(trace, dir, r, in.dropped);
    } catch (const WaitsError& e) {
      throw DiagnoseError(e.what());
    }
  }
  return in;
}

// Sets in.matched on rank 0: split across the analysis ranks (`share`:
// the events of ranks other than 0's share), or rank 0's own matching.
void match_events(const Trace& trace, DiagnoseInput& in, WaitInput& share, bool split, int me,
                  int np) {
  if (!split) {
    if (me == 0) in.matched = match_wait_input(trace, in.events);
    return;
  }
  // Every rank is analysed up to where rank 0's reading cut them all.
  int64_t cut[2] = {in.events.cut_rank, in.events.cut_ns};
  MPI_Bcast(cut, 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  if (me != 0 && cut[0] >= 0)
    for (std::vector<TimedEvent>& evs : share.ranks)
      evs.erase(std::find_if(evs.begin(), evs.end(),
                             [&](const TimedEvent& te) { return te.end_ns > cut[1]; }),
                evs.end());
  const auto [first, last] = mpi_common::rank_share(trace.world_size, me, np);
  std::string err;
  waits_detail::BlockMessages mine;
  try {
    mine = waits_detail::block_messages(trace, me == 0 ? in.events : share, first, last);
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(err);
  MatchResult all = diagnose_parallel::exchange_and_match(trace, std::move(mine), me, np);
  if (me == 0) in.matched = std::move(all);
}

void run(const Args& args, int me, int np) {
  const double t0 = MPI_Wtime();
  Steps steps;
  const char* env = std::getenv("TRACEFOLD_DIAGNOSE_PHASES");
  steps.on = me == 0 && env && *env == '1';
  Trace trace;
  std::string err;
  const std::string dir = args.timeline.empty() ? default_timeline_dir(args.trace) : args.timeline;
  UnfoldedRun unfolded;  // a --sample-only run's events (rank 0's alone reads them)
  try {
    check_diagnose_output(args.output);
    trace = load_diagnose_recording(args.trace, dir, unfolded, me != 0);
    if (np > trace.world_size)
      err = "analysis started with " + std::to_string(np) + " ranks, the recording has " +
            std::to_string(trace.world_size) + ": run it with mpirun -np K for K of at most " +
            std::to_string(trace.world_size) + ", or without mpirun";
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(err);
  steps.mark("trace");
  std::optional<SiteNames> sites;
  if (me == 0) sites.emplace(trace, args);
  DiagnoseInput in;
  std::vector<std::string> notes;
  std::vector<ExitGapDrift> drifts;
  std::vector<RankSampleDigest> share;  // this rank's share of the samples
  int32_t first_rank = 0;
  std::vector<FrameQuery> mine_frames;
  // A folded trace's events are read where they are matched: each analysis
  // rank reads its share's (rank 0 every rank's, which the rules read) and
  // matches the messages its share receives. A --sample-only run's event
  // logs are read by rank 0 alone, which matches them all.
  std::error_code ec;
  const bool split = np > 1 && (std::filesystem::exists(args.trace, ec) || !is_unfolded_run(dir));
  WaitInput share_in;  // ranks other than 0: their share's events
  try {
    const auto [first, last] = mpi_common::rank_share(trace.world_size, me, np);
    first_rank = first;
    // The serial reader's order: a timeline's error comes before any
    // samples file's, then the lowest rank's (the shares are in rank order).
    if (me == 0)
      in =
          load_diagnose_timelines(trace, dir, notes, unfolded.events.empty() ? nullptr : &unfolded);
    else if (split)
      share_in = load_share_events(trace, dir, first, last);
    steps.mark("timelines");
    std::set<FrameKey> seen;
    for (int32_t r = first; r < last; ++r) {
      RankSampleDigest d = read_rank_samples(trace, dir, r);
      if (d.present) frame_queries(d.samples, seen, mine_frames);
      share.push_back(std::move(d));
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  steps.mark("own share of samples");
  agree(err);
  steps.mark("waiting for the others");
  match_events(trace, in, share_in, split, me, np);
  share_in = {};
  try {
    if (me == 0) align_diagnose_events(trace, in, notes, drifts);
  } catch (const std::exception& e) {
    err = e.what();
  }
  agree(err);
  steps.mark("messages matched, clocks aligned");
  // Naming costs per distinct frame, not per sample, and the ranks of an
  // SPMD run sample nearly the same frames: a rank naming its share's
  // frames would name nearly all of them. So every rank learns the frames
  // of all shares (kept in the order the serial reader meets them: the
  // first module seen names a frame) and names one block of them sorted by
  // module and offset: opening a module's debug information is much of
  // the cost, and blocks open each module on as few ranks as they can.
  std::vector<FrameQuery> frames;
  {
    std::set<FrameKey> seen;
    for (const std::string& piece :
         mpi_common::all_gather(MPI_COMM_WORLD, diagnose_parallel::encode(mine_frames)))
      for (FrameQuery& q : diagnose_parallel::decode_frames(piece))
        if (seen.insert(q.key).second) frames.push_back(std::move(q));
  }
  mine_frames = {};
  steps.mark("frame lists");
  if (steps.on) {
    std::map<std::string, std::size_t> per_module;
    for (const FrameQuery& q : frames) ++per_module[q.module.name];
    std::cerr << "tracefold: " << frames.size() << " distinct frames to name:";
    for (const auto& [module, n] : per_module) std::cerr << " " << module << " " << n;
    std::cerr << "\n";
  }
  ShareNames mine_names;
  try {
    std::vector<std::size_t> order(frames.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return frames[a].key < frames[b].key; });
    const auto [lo, hi] = mpi_common::rank_share(int32_t(frames.size()), me, np);
    symbolize::Symbolizer sym;
    for (int32_t i = lo; i < hi; ++i) {
      const FrameQuery& q = frames[order[std::size_t(i)]];
      bool none = false;
      mine_names.named.emplace(q.key, name_frame(q, sym, none));
      if (none) mine_names.unnamed.insert(q.key);
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  steps.mark("own share of frame names");
  agree(err);
  // Every rank names the contexts of its own share, so every rank needs
  // every name (a few per distinct frame: small).
  std::set<FrameKey> unnamed;
  {
    FrameMemo names;
    for (const std::string& piece :
         mpi_common::all_gather(MPI_COMM_WORLD, diagnose_parallel::encode(mine_names))) {
      diagnose_parallel::ShareNames d = diagnose_parallel::decode_names(piece);
      unnamed.merge(d.unnamed);
      names.merge(d.named);
    }
    mine_names = {};
    for (RankSampleDigest& d : share)
      if (d.present) d.names = names_from_memo(d.samples, names);
  }
  steps.mark("frame names");
  // The run's sampling period (the last sampled rank's), which every
  // digest is made against.
  int64_t period = 0;
  {
    std::string periods;
    for (const RankSampleDigest& d : share) {
      const int64_t p = d.present ? d.samples.period_ns : 0;
      periods.append(reinterpret_cast<const char*>(&p), sizeof p);
    }
    std::vector<int64_t> all;
    for (const std::string& piece : mpi_common::all_gather(MPI_COMM_WORLD, periods))
      for (std::size_t at = 0; at + sizeof(int64_t) <= piece.size(); at += sizeof(int64_t)) {
        int64_t p = 0;
        std::memcpy(&p, piece.data() + at, sizeof p);
        all.push_back(p);
      }
    period = run_period(all);
  }
  // Rank 0 finds what the events alone tell (the wait states need every
  // rank's events) and sends each analysis rank its share's events with
  // their waiting, the drifts to correct its samples by and the digests'
  // parameters.
  EventFacts facts;
  DigestParams params;
  if (me == 0) {
    try {
      facts = event_facts(trace, in.events, in.matched ? &*in.matched : nullptr);
      in.matched.reset();  // the facts hold what the diagnosis needs of it
      params = digest_params(facts, period);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  steps.mark("wait states");
  agree(err);
  // Each share's events are made as they are sent (a share's are an N/K
  // part of every event's spans, held at rank 0's busiest moment).
  auto share_events = [&](int q) {
    diagnose_parallel::ShareEvents se;
    se.params = params;
    se.drifts = drifts;
    const auto [first, last] = mpi_common::rank_share(trace.world_size, q, np);
    for (int32_t r = first; r < last; ++r) se.ranks.push_back(event_spans(in.events, facts, r));
    return diagnose_parallel::encode(se);
  };
  diagnose_parallel::ShareDigest out;
  Reduction reduced;  // this share's events, reduced for the rules
  try {
    // Rank 0 makes its own share's events one rank at a time, as it
    // digests them: not encoded and decoded as a whole share.
    const std::string mine = mpi_common::scatter(
        MPI_COMM_WORLD, [&](int q) { return q == 0 ? std::string() : share_events(q); });
    diagnose_parallel::ShareEvents se;
    if (me != 0) {
      se = diagnose_parallel::decode_events(mine);
      if (se.ranks.size() != share.size())
        throw DiagnoseError("tracefold-diagnose: events of " + std::to_string(se.ranks.size()) +
                            " ranks for a share of " + std::to_string(share.size()));
    } else {
      se.params = params;
      se.drifts = drifts;
    }
    out.first = first_rank;
    for (std::size_t i = 0; i < share.size(); ++i) {
      const int32_t r = first_rank + int32_t(i);
      const std::vector<EventSpan> spans =
          me == 0 ? event_spans(in.events, facts, r) : std::move(se.ranks[i]);
      RankSampleDigest& d = share[i];
      out.facts.push_back(sample_facts(d));
      if (d.present) correct_drift(d.samples, r, se.drifts);
      out.digests.push_back(digest_rank(d.samples, d.names, spans, se.params));
      d = {};  // its samples are digested: free them
      merge(reduced, reduce_rank(r, spans));
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  steps.mark("own share of digests");
  agree(err);
  const std::string gathered =
      mpi_common::tree_gather(MPI_COMM_WORLD, diagnose_parallel::encode(out));
  out = {};
  steps.mark("gather");
  // The reductions combine on the way to rank 0: it receives sums, not
  // every rank's events.
  std::string reduced_bytes = mpi_common::tree_reduce(MPI_COMM_WORLD, encode(reduced),
                                                      [&](std::string& held, std::string&& later) {
                                                        if (!err.empty()) return;
                                                        try {
                                                          Reduction r = decode_reduction(held);
                                                          merge(r, decode_reduction(later));
                                                          held = encode(r);
                                                        } catch (const std::exception& e) {
                                                          err = e.what();
                                                        }
                                                      });
  reduced = {};
  agree(err);
  steps.mark("reduce");
  if (me == 0) {
    try {
      std::vector<RankDigest> digests;
      std::vector<SampleFacts> sample_facts_all;
      for (const std::string& piece : mpi_common::split_gathered(gathered)) {
        diagnose_parallel::ShareDigest d = diagnose_parallel::decode(piece);
        if (d.first != int32_t(digests.size()) || d.facts.size() != d.digests.size())
          throw DiagnoseError("tracefold-diagnose: digests out of rank order");
        for (auto& g : d.digests) digests.push_back(std::move(g));
        for (const SampleFacts& f : d.facts) sample_facts_all.push_back(f);
      }
      const bool have = sample_notes(sample_facts_all, unnamed.size(), dir, notes);
      if (!have) digests.clear();
      steps.mark("decode");
      sites->finish();
      steps.mark("call site names");
      DiagnoseReport report =
          diagnose_digests(trace, in, std::move(facts), decode_reduction(reduced_bytes),
                           std::move(digests), have, args.options);
      steps.mark("diagnosis");
      report.notes.insert(report.notes.begin(), notes.begin(), notes.end());
      write_diagnose_report(report, args.output);
      if (!args.output.empty()) {
        const std::size_t n = report.diagnoses.size();
        // The time past MPI_Init (the launcher's start-up is not the analysis's).
        std::cerr << "tracefold: " << n << (n == 1 ? " diagnosis" : " diagnoses") << " of "
                  << trace.world_size << " ranks on " << np << " analysis ranks written to "
                  << args.output << " (" << MPI_Wtime() - t0 << " s after MPI_Init)\n";
      }
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  agree(err);
}

}  // namespace

int main(int argc, char** argv) {
  // Funneled: rank 0 names the call sites in a thread that makes no MPI call.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int me = 0, np = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CLI::App app{"tracefold diagnose under mpirun: the parallel diagnosis"};
  Args args;
  // No existence check: a --sample-only run has no trace file.
  app.add_option("trace", args.trace, "Trace file (its timeline is TRACE.timeline/)")->required();
  app.add_option("-o,--output", args.output, "Report: .txt or .json (default: text)");
  app.add_option("--timeline", args.timeline, "Timeline directory (default TRACE.timeline)");
  app.add_option("--significant", args.options.significant,
                 "Report diagnoses of at least this share of the run time")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--top", args.options.top, "Causes listed per diagnosis");
  app.add_option("--large-bytes", args.options.large_bytes,
                 "Messages of at least this many bytes are large");
  app.add_flag("--raw-sites", args.raw_sites, "Call sites as recorded (no symbol names)");
  app.add_option("--debug-dir", args.debug_dirs, "Where to look for separate debug info")
      ->check(CLI::ExistingDirectory);
  int rc = 0;
  try {
    app.parse(argc, argv);
    run(args, me, np);
  } catch (const CLI::ParseError& e) {
    rc = me == 0 ? app.exit(e) : e.get_exit_code();
  } catch (const PeerFailed&) {
    rc = 2;
  } catch (const std::exception& e) {
    std::cerr << "tracefold: error: rank " << me << ": " << e.what() << "\n";
    rc = 2;
  }
  MPI_Finalize();
  return rc;
}
