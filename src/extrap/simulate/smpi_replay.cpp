// tracefold-smpi-replay: SMPI's offline replay, plus what `tracefold
// simulate` reports (docs/simulate.md). smpirun starts one instance per rank
// (`smpirun -no-privatize -replay LIST tracefold-smpi-replay`), each with
// its own action file in argv[1]. SMPI's default actions do the
// simulation; this program only wraps the communication ones to add up
// each rank's simulated communication time, tracks every link's load
// (SimGrid's link_load plugin, enabled with --cfg=plugin:link_load), and
// when the last rank ends writes $TRACEFOLD_SMPI_REPORT:
//   time SECONDS
//   rank R COMM_SECONDS END_SECONDS        (one per rank)
//   link NAME BYTES BANDWIDTH             (one per link that carried data)
// Built with smpicxx; it links SimGrid and nothing of tracefold.
#include <simgrid/plugins/load.h>
#include <smpi/smpi.h>
#include <xbt/replay.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <string>
#include <vector>

namespace {

// SMPI's actions that communicate; compute, sleep, init, finalize and the
// communicator no-ops are not communication time.
const char* const kCommActions[] = {
    "send",      "isend",      "recv",          "irecv",   "test",    "wait",
    "waitall",   "sendRecv",   "barrier",       "bcast",   "reduce",  "allreduce",
    "alltoall",  "alltoallv",  "gather",        "gatherv", "scatter", "scatterv",
    "allgather", "allgatherv", "reducescatter", "scan",    "exscan"};

struct RankTimes {
  double comm = 0;
  double end = 0;
};

// All ranks run in this one process (no privatization), so these are shared.
std::vector<RankTimes> g_ranks;
std::map<std::string, action_fun> g_smpi_actions;
int g_running = 0;

double now() {
  return simgrid::s4u::Engine::get_clock();
}

// smpi_replay_init registers SMPI's actions again for every rank; every
// rank then registers the same wrappers around the first rank's copy, so
// wrapping twice is harmless and no action runs unwrapped (all ranks
// initialize at time 0 before any of them replays).
void wrap_communication_actions() {
  if (g_smpi_actions.empty()) {
    for (const char* name : kCommActions) g_smpi_actions[name] = xbt_replay_action_get(name);
    for (simgrid::s4u::Link* link : simgrid::s4u::Engine::get_instance()->get_all_links())
      sg_link_load_track(link);
  }
  for (const auto& [name, smpi_action] : g_smpi_actions) {
    const action_fun inner = smpi_action;
    xbt_replay_action_register(name.c_str(), [inner](simgrid::xbt::ReplayAction& action) {
      const double t0 = now();
      inner(action);
      const int rank = std::atoi(action.at(0).c_str());
      g_ranks.at(static_cast<std::size_t>(rank)).comm += now() - t0;
    });
  }
}

void write_report() {
  const char* path = std::getenv("TRACEFOLD_SMPI_REPORT");
  if (!path) return;
  std::FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "tracefold-smpi-replay: cannot write %s\n", path);
    return;
  }
  std::fprintf(f, "time %.9f\n", now());
  for (std::size_t r = 0; r < g_ranks.size(); ++r)
    std::fprintf(f, "rank %zu %.9f %.9f\n", r, g_ranks[r].comm, g_ranks[r].end);
  for (simgrid::s4u::Link* link : simgrid::s4u::Engine::get_instance()->get_all_links()) {
    const double bytes = sg_link_get_cum_load(link);
    if (bytes > 0)
      std::fprintf(f, "link %s %.0f %.9g\n", link->get_cname(), bytes, link->get_bandwidth());
  }
  std::fclose(f);
}

}  // namespace

int main(int argc, char* argv[]) {
  simgrid::s4u::Actor* self = simgrid::s4u::Actor::self();
  if (!self || !self->get_property("rank")) {
    std::fprintf(
        stderr,
        "tracefold-smpi-replay: run it through smpirun -replay (tracefold simulate does)\n");
    return 1;
  }
  const int rank = std::atoi(self->get_property("rank"));
  const char* instance = self->get_property("instance_id");
  const char* shared_trace = self->get_property("tracefile");  // one rank: a shared file
  const char* own_trace = argc > 1 ? argv[1] : nullptr;

  ++g_running;
  smpi_replay_init(instance, rank, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (g_ranks.empty()) g_ranks.resize(static_cast<std::size_t>(size));
  wrap_communication_actions();
  if (shared_trace) xbt_replay_set_tracefile(shared_trace);
  smpi_replay_main(rank, own_trace);
  g_ranks.at(static_cast<std::size_t>(rank)).end = now();
  if (--g_running == 0) write_report();
  return 0;
}
