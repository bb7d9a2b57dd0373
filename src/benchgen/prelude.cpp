// The fixed part of every generated program (gen.hpp): the C helpers the
// statements call, main's frame, and writing the file.
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "gen.hpp"
#include "tracefold/bench_passes.hpp"
#include "tracefold/trace_query.hpp"
#include "tracefold/validate.hpp"

namespace tracefold::benchgen {

std::string prelude() {
  return R"(#define _XOPEN_SOURCE 700
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Not every program uses every helper below. */
#if defined(__GNUC__)
#define HELPER static __attribute__((unused))
#else
#define HELPER static
#endif

/* Sentinels in the tables below: wildcard, null process, undefined, absent. */
#define TF_ANY (-2000000001L)
#define TF_NULL (-2000000002L)
#define TF_UNDEF (-2000000003L)
#define TF_ABSENT (-2000000004L)

HELPER int rank, size;
HELPER int flag, which, outcount;
HELPER MPI_Message message = MPI_MESSAGE_NULL;
HELPER MPI_Comm scratch_comm = MPI_COMM_NULL;
/* MPI_STATUSES_IGNORE through a variable the compiler cannot see into:
   MPICH declares the status arrays of MPI_Waitall and friends with a size
   that GCC's -Wstringop-overflow checks against MPICH's (MPI_Status *)1. */
HELPER MPI_Status *volatile statuses_ignore;
HELPER const int zeros_list[2] = {0, 0};
HELPER const int *const zeros = zeros_list + 1;

HELPER double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computation is replaced by spinning on the clock; the cost of reading
   the clock, measured once at start, is taken off each wait. */
static double clock_cost;
HELPER void calibrate(void) {
  const int n = 1000;
  double t0 = now();
  for (int k = 0; k < n; ++k) (void)now();
  clock_cost = (now() - t0) / n;
}
HELPER void spin_ns(double ns) {
  double end = now() + 1e-9 * ns - clock_cost;
  while (now() < end) {
  }
}
/* tracefold bench --compute-clock cpu: spin until this thread has used ns
   of processor time, so that time spent waiting for a core (more ranks
   than cores) does not count, as it did not for the program. Reading the
   processor clock is a system call: short spins use the wall clock (a rank
   is rarely descheduled within one), longer ones spin on the wall clock
   for what is left, which takes at most that much processor time, and
   read the processor clock only then. */
HELPER double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
HELPER void spin_cpu_ns(double ns) {
  if (ns < 50e3) {
    spin_ns(ns);
    return;
  }
  const double until = cpu_now() + 1e-9 * ns;
  for (double rest = 1e-9 * ns; rest > 1e-6; rest = until - cpu_now()) spin_ns(1e9 * rest);
}

/* A recorded time histogram bin: count, min, max, sum (ns). A draw picks a
   bin by its count, then its min or max with the odds that keep its mean. */
struct bin {
  long count, min, max, sum;
};
HELPER double draw_ns(const struct bin *bins, int n) {
  long total = 0;
  for (int k = 0; k < n; ++k) total += bins[k].count;
  long pick = (long)(drand48() * (double)total);
  int k = 0;
  while (k + 1 < n && pick >= bins[k].count) pick -= bins[k++].count;
  const struct bin *b = &bins[k];
  double mean = (double)b->sum / (double)b->count;
  if (b->max <= b->min) return (double)b->min;
  return drand48() < (mean - (double)b->min) / (double)(b->max - b->min) ? (double)b->max : (double)b->min;
}

HELPER char *alloc_buffer(long bytes) {
  char *p = calloc((size_t)bytes + 64, 1);
  if (!p) {
    fprintf(stderr, "bench: out of memory (%ld bytes)\n", bytes);
    exit(1);
  }
  return p;
}

HELPER int rank_in(MPI_Comm c) {
  int r = 0;
  if (c != MPI_COMM_NULL) PMPI_Comm_rank(c, &r);
  return r;
}
HELPER int size_of(MPI_Comm c) {
  int s = 1;
  if (c != MPI_COMM_NULL) PMPI_Comm_size(c, &s);
  return s;
}
HELPER int val(long v) {
  if (v == TF_ANY) return MPI_ANY_SOURCE;
  if (v == TF_NULL) return MPI_PROC_NULL;
  if (v == TF_UNDEF) return MPI_UNDEFINED;
  return (int)v;
}
HELPER int tag_of(long v) {
  return v == TF_ANY ? MPI_ANY_TAG : (int)v;
}
/* Peers are stored as offsets from the caller's rank in the communicator. */
HELPER int peer_of(MPI_Comm c, long offset) {
  if (offset == TF_ANY) return MPI_ANY_SOURCE;
  if (offset == TF_NULL || offset == TF_ABSENT) return MPI_PROC_NULL;
  return (int)((rank_in(c) + offset) % size_of(c));
}

/* List tables hold each list as its length, then its values. */
HELPER const int *next_list(const int *table, long n, long *at) {
  const int *p = table + *at;
  *at += 1 + p[0];
  if (*at >= n) *at = 0;
  return p + 1;
}
HELPER int list_len(const int *p) {
  return p ? p[-1] : 0;
}
/* A long sequence of values (a polling loop's) is kept as the trace folds
   it: runs of a repeated pattern. Run j holds the values before index
   end; its pattern is the len values from v[at]. */
struct run {
  long end, at, len;
};
HELPER long run_value(const struct run *r, long n, const long *v, long k) {
  long lo = 0, hi = n - 1;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (r[mid].end > k)
      hi = mid;
    else
      lo = mid + 1;
  }
  long start = lo ? r[lo - 1].end : 0;
  return v[r[lo].at + (k - start) % r[lo].len];
}
/* next_list for a list table kept as runs: the list is copied into buf
   (its length first, as in a list table). */
HELPER const int *next_run_list(const struct run *r, long n, const long *v, long *at, int *buf) {
  buf[0] = (int)run_value(r, n, v, *at);
  for (int j = 0; j < buf[0]; ++j) buf[1 + j] = (int)run_value(r, n, v, *at + 1 + j);
  *at += 1 + buf[0];
  if (*at >= r[n - 1].end) *at = 0;
  return buf + 1;
}
/* A lossy benchmark's receive counts: each at least the largest count a
   member can send (the list copied, as displs_of does). */
HELPER int *at_least_buf;
HELPER const int *counts_at_least(const int *counts, int least) {
  if (!counts) return NULL;
  int n = list_len(counts);
  at_least_buf = realloc(at_least_buf, sizeof(int) * (size_t)(n + 1));
  at_least_buf[0] = n;
  for (int k = 0; k < n; ++k) at_least_buf[k + 1] = counts[k] > least ? counts[k] : least;
  return at_least_buf + 1;
}
/* w-collectives move their recorded counts as bytes. The table only grows,
   so both type arguments of one call point at the same live array. */
HELPER MPI_Datatype *bytes_buf;
HELPER int bytes_cap;
HELPER MPI_Datatype *bytes_types(int n) {
  if (n > bytes_cap) {
    bytes_buf = realloc(bytes_buf, sizeof(MPI_Datatype) * (size_t)n);
    for (int k = bytes_cap; k < n; ++k) bytes_buf[k] = MPI_BYTE;
    bytes_cap = n;
  }
  return bytes_buf;
}
HELPER MPI_Aint *aint_displs_buf[2];
HELPER const MPI_Aint *aint_displs_of(const int *counts, int which_buf) {
  if (!counts) return NULL;
  int n = list_len(counts);
  MPI_Aint *d = aint_displs_buf[which_buf] =
      realloc(aint_displs_buf[which_buf], sizeof(MPI_Aint) * (size_t)(n + 1));
  MPI_Aint at = 0;
  for (int k = 0; k < n; ++k) {
    d[k] = at;
    at += counts[k];
  }
  return d;
}
HELPER int *displs_buf[2];
HELPER const int *displs_of(const int *counts, int which_buf) {
  if (!counts) return NULL;
  int n = list_len(counts);
  int *d = displs_buf[which_buf] = realloc(displs_buf[which_buf], sizeof(int) * (size_t)(n + 1));
  int at = 0;
  for (int k = 0; k < n; ++k) {
    d[k] = at;
    at += counts[k];
  }
  return d;
}
)";
}

namespace {

std::string requests_c(int ring, int width) {
  return "\n/* Requests: one ring row per call that makes or starts requests; a\n"
         "   completion names them by how many such calls back they were made. */\n"
         "#define RING " +
         std::to_string(ring) + "\n#define WIDTH " + std::to_string(width) +
         "\nstatic MPI_Request ring[RING][WIDTH];\nstatic long nreq;\nHELPER int indices[WIDTH > "
         "64 ? WIDTH : 64];\n"
         R"(HELPER MPI_Request *new_request(void) {
  MPI_Request *row = ring[++nreq % RING];
  for (int k = 0; k < WIDTH; ++k) row[k] = MPI_REQUEST_NULL;
  return row;
}
HELPER void push_requests(const MPI_Request *r, int n) {
  MPI_Request *row = new_request();
  for (int k = 0; k < n && k < WIDTH; ++k) row[k] = r[k];
}
/* The slot of the j-th link: a call that made several requests is named
   once per request, and the k-th naming in one call is its k-th request
   still held (calls that free requests one by one name the same row). */
HELPER MPI_Request *slot(const int *lk, int j) {
  long d = lk[j];
  if (d <= 0 || d > nreq) return NULL;
  int k = 0;
  for (int e = 0; e < j; ++e) k += lk[e] == d;
  MPI_Request *row = ring[(nreq - d + 1) % RING];
  for (int e = 0; e < WIDTH; ++e)
    if (row[e] != MPI_REQUEST_NULL && k-- == 0) return &row[e];
  return NULL;
}
HELPER void take_requests(const int *lk, int n, MPI_Request *r) {
  for (int j = 0; j < n; ++j) {
    MPI_Request *s = slot(lk, j);
    r[j] = s ? *s : MPI_REQUEST_NULL;
  }
}
HELPER void give_requests(const int *lk, int n, const MPI_Request *r) {
  for (int j = 0; j < n; ++j) {
    MPI_Request *s = slot(lk, j);
    if (s) *s = r[j];
  }
}
)";
}

// The prelude, without its wildcard branches when the program never uses
// a wildcard (the usual case once wildcards are resolved): such a program
// does not mention MPI_ANY_SOURCE or MPI_ANY_TAG anywhere.
std::string helpers_for(const std::string& program_text) {
  std::string p = prelude();
  if (program_text.find("TF_ANY") != std::string::npos ||
      program_text.find("MPI_ANY_") != std::string::npos)
    return p;
  auto cut = [&](const std::string& from, const std::string& to) {
    const auto at = p.find(from);
    if (at != std::string::npos) p.replace(at, from.size(), to);
  };
  cut("  if (v == TF_ANY) return MPI_ANY_SOURCE;\n", "");
  cut("  return v == TF_ANY ? MPI_ANY_TAG : (int)v;", "  return (int)v;");
  cut("  if (offset == TF_ANY) return MPI_ANY_SOURCE;\n", "");
  return p;
}

}  // namespace

std::string Gen::program() {
  // Request ring: deep enough for the farthest link, wide enough for the
  // largest Startall.
  int64_t far = 1, wide = 1;
  for (const Node& n : t.nodes) {
    if (const Elastic* e = n.field(links))
      for (const ElasticEntry& en : e->entries())
        for (auto c = en.values.cursor(); !c.done();) {
          const int64_t len = c.next();
          for (int64_t k = 0; k < len && !c.done(); ++k) far = std::max(far, c.next());
          wide = std::max(wide, len);
        }
  }
  request_ring = 1;
  while (request_ring <= far) request_ring *= 2;
  request_width = static_cast<int>(std::min<int64_t>(wide, 4096));
  // Communicators by the id of the call that made them.
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const Elastic* e = t.nodes[i].field(newcomm);
    if (!e) continue;
    for (const ElasticEntry& en : e->entries())
      for (auto c = en.values.cursor(); !c.done();) {
        const int64_t id = c.next();
        if (is_sentinel(id) || comm_names.count(id)) continue;
        std::string what = OpTable::name(t.nodes[i].key.op).substr(4);
        for (char& ch : what) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        comm_names[id] = fresh(what + "_comm" + std::to_string(id));
      }
  }
  // Communicators the program did not make (the recorder names them by
  // their members): those that are the same predefined one on every rank
  // that has them, as replay names them.
  for (const auto& [id, groups] : t.comms.all()) {
    if (id == CommTable::kWorld || comm_names.count(id)) continue;
    std::set<PredefinedComm> seen;
    for (const CommGroup& g : groups)
      for (int32_t r : g.members) seen.insert(predefined_comm(t, id, r));
    if (seen.size() != 1 || *seen.begin() == PredefinedComm::kNone) continue;
    predefined_comms[id] =
        *seen.begin() == PredefinedComm::kSelf ? "MPI_COMM_SELF" : "MPI_COMM_WORLD";
  }
  std::string thread_fns;
  if (threads)
    thread_fns = thread_functions();
  else
    structure(0, t.nodes.size(), "");
  std::ostringstream out;
  if (threads)
    out << "/* Generated by tracefold bench from a trace of " << t.world_size << " ranks x "
        << threads->count()
        << " threads: the traced program's MPI calls, each thread's\n"
           "   by a thread of its own, with its computation replaced by calibrated spinning.\n"
           "   Build: mpicc -std=c11 -O2 -pthread bench.c -o bench */\n";
  else
    out << "/* Generated by tracefold bench from a trace of " << t.world_size
        << " ranks: the traced program's MPI calls, with its computation replaced\n"
           "   by calibrated spinning. Build: mpicc -std=c11 -O2 bench.c -o bench */\n";
  out << helpers_for(decls.str() + body.str()) << named_tables()
      << requests_c(request_ring, request_width);
  out << "\n/* Communicators, named by the call that made them. */\n";
  for (const auto& [id, name] : comm_names)
    out << "static MPI_Comm " << name << " = MPI_COMM_NULL;\n";
  out << "HELPER MPI_Comm *comm_ref(long id) {\n  switch (id) {\n";
  for (const auto& [id, name] : comm_names)
    out << "    case " << id << ": return &" << name << ";\n";
  out << "    default: return &scratch_comm;\n  }\n}\n";
  out << "HELPER MPI_Comm comm_of(long id) {\n  switch (id) {\n    case 0: return MPI_COMM_WORLD;\n"
         "    case TF_NULL: return MPI_COMM_NULL;\n";
  for (const auto& [id, name] : predefined_comms)
    out << "    case " << id << ": return " << name << ";\n";
  out << "    default: return *comm_ref(id);\n  }\n}\n";
  if (threads) out << thread_helpers();
  out << R"(/* The recorded grid; traces without it: MPI_Dims_create's shape, periodic. */
HELPER void cart_create(MPI_Comm parent, int ndims, const int *rec_dims,
                        const int *rec_periods, MPI_Comm *made) {
  int dims[16] = {0}, periods[16];
  for (int k = 0; k < 16; ++k) periods[k] = 1;
  if (rec_dims)
    for (int k = 0; k < ndims && k < 16; ++k) dims[k] = rec_dims[k];
  else
    PMPI_Dims_create(size_of(parent), ndims, dims);
  if (rec_periods)
    for (int k = 0; k < ndims && k < 16; ++k) periods[k] = rec_periods[k];
  MPI_Cart_create(parent, ndims, dims, periods, 0, made);
}
/* Neighbours recorded as offsets from this rank in the parent. GCC 11+
   reads Open MPI's MPI_UNWEIGHTED (a small constant pointer) as an empty
   array and warns that MPI would read past it: it never reads it. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
HELPER void dist_graph_create(MPI_Comm parent, const int *srcs, const int *dsts,
                              MPI_Comm *made) {
  int me = 0, n = size_of(parent), ns = list_len(srcs), nd = list_len(dsts);
  PMPI_Comm_rank(parent, &me);
  int *s = malloc(sizeof(int) * (size_t)(ns + 1)), *d = malloc(sizeof(int) * (size_t)(nd + 1));
  for (int k = 0; k < ns; ++k) s[k] = srcs[k] < 0 ? srcs[k] : (me + srcs[k]) % n;
  for (int k = 0; k < nd; ++k) d[k] = dsts[k] < 0 ? dsts[k] : (me + dsts[k]) % n;
  MPI_Dist_graph_create_adjacent(parent, ns, s, MPI_UNWEIGHTED, nd, d, MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, made);
  free(s);
  free(d);
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif
)";
  out << R"(/* The world ranks of my group in a table of groups: count, then per
   group its size and members in rank order. */
HELPER const int *my_group(const int *groups, int *n) {
  const int *p = groups + 1;
  for (int g = 0; g < groups[0]; ++g, p += 1 + p[0])
    for (int k = 0; k < p[0]; ++k)
      if (p[1 + k] == rank) {
        *n = p[0];
        return p + 1;
      }
  *n = 0;
  return p;
}
/* MPI_Cart_sub with the remain_dims (not recorded) that make the
   recorded groups; every rank must agree, so the match is reduced. */
HELPER void cart_sub(MPI_Comm cart, const int *groups, MPI_Comm *made) {
  int ndims = 0, n = 0;
  PMPI_Cartdim_get(cart, &ndims);
  const int *want = my_group(groups, &n);
  MPI_Group world_group;
  PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
  for (int mask = 0; mask < (1 << ndims); ++mask) {
    int remain[16], ok = 1, all = 0;
    for (int d = 0; d < ndims; ++d) remain[d] = (mask >> (ndims - 1 - d)) & 1;
    MPI_Comm trial;
    PMPI_Cart_sub(cart, remain, &trial);
    /* MPICH gives MPI_COMM_NULL when no dimension remains. */
    if (trial == MPI_COMM_NULL || size_of(trial) != n) ok = 0;
    if (trial != MPI_COMM_NULL) {
      MPI_Group g;
      PMPI_Comm_group(trial, &g);
      for (int k = 0; ok && k < n; ++k) {
        int w = -1;
        PMPI_Group_translate_ranks(g, 1, &k, world_group, &w);
        ok = w == want[k];
      }
      PMPI_Group_free(&g);
      PMPI_Comm_free(&trial);
    }
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, cart);
    if (all) {
      PMPI_Group_free(&world_group);
      MPI_Cart_sub(cart, remain, made);
      return;
    }
  }
  fprintf(stderr, "bench: rank %d: no MPI_Cart_sub makes the recorded groups\n", rank);
  PMPI_Abort(MPI_COMM_WORLD, 1);
}
)";
  out << types_prelude();
  out << "\n/* Phases (the top-level loops) and their times. */\n#define PHASES "
      << phases.size() + 1 << "\nstatic const char *const phase_names[PHASES] = {";
  for (const auto& p : phases) out << "\"" << p << "\", ";
  out << "\"\"};\nstatic double phase_time[PHASES], phase_start, start_time;\n";
  out << R"(static void report_times(void) {
  double mine[PHASES + 1], most[PHASES + 1];
  for (int k = 0; k + 1 < PHASES; ++k) mine[k] = phase_time[k];
  mine[PHASES] = now() - start_time;
  PMPI_Reduce(mine, most, PHASES + 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank != 0) return;
  printf("bench: %d ranks, wall time %.6f s\n", size, most[PHASES]);
  for (int k = 0; k + 1 < PHASES; ++k) printf("bench: phase %d (%s) %.6f s\n", k, phase_names[k], most[k]);
  fflush(stdout);
}
)";
  if (by_pred) {
    out << "\n/* The call each rank made last (compute times depend on it). */\nenum after_call { ";
    after_name(kStartKey);
    for (const auto& [k, name] : after_names) out << name << ", ";
    out << "};\nstatic enum after_call after = AFTER_START;\n";
  }
  out << "\n/* Tables of values that vary between calls, counters that index them. */\n"
      << decls.str();
  std::string shared_setup;
  for (const auto& [buf, bytes] : shared_buffers) {
    out << "static char *" << buf << "; /* " << bytes << " bytes, for every blocking call */\n";
    shared_setup += "  " + buf + " = alloc_buffer(" + std::to_string(bytes) + ");\n";
  }
  out << funcs.str() << thread_fns;
  // A program that asked for threads gets MPI_Init_thread too (with one
  // thread per rank the benchmark makes every call from that thread).
  const bool thread = !t.nodes.empty() && OpTable::name(t.nodes[0].key.op) == "MPI_Init_thread";
  out << "\nint main(int argc, char **argv) {\n"
      << (threads  ? thread_init()
          : thread ? "  int provided;\n  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, "
                     "&provided);\n"
                   : "  MPI_Init(&argc, &argv);\n");
  out << "  statuses_ignore = MPI_STATUSES_IGNORE;\n";
  out << "  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);\n  PMPI_Comm_size(MPI_COMM_WORLD, &size);\n";
  out << "  if (size != " << t.world_size
      << ") {\n    if (rank == 0) fprintf(stderr, \"bench: generated for " << t.world_size
      << " ranks, run with %d\\n\", size);\n    MPI_Finalize();\n    return 1;\n  }\n";
  out << "  srand48(" << opt.seed << " + (long)rank);\n  calibrate();\n"
      << shared_setup << setup.str();
  // Ranks leave MPI_Init up to tenths of a second apart under mpirun; the
  // clock starts together (through PMPI: no call of the trace) so that
  // skew is not timed as the first exchange's wait.
  out << "  PMPI_Barrier(MPI_COMM_WORLD);\n  start_time = now();\n"
      << (threads ? "  start_threads();\n" : "") << "\n"
      << body.str() << "  return 0;\n}\n";
  return drop_unused(threads ? thread_local_state(out.str()) : out.str());
}

}  // namespace tracefold::benchgen

namespace tracefold::bench {

void check_clock(const Trace& trace, const Options& options) {
  if (options.clock == ComputeClock::kCpu && !has_statistic(trace, kComputeCpuStatistic))
    throw BenchError("--compute-clock cpu: the trace holds no " +
                     std::string(kComputeCpuStatistic) + " statistic; record with --stats " +
                     std::string(kComputeCpuStatistic));
}

void check_single_thread(const Trace& trace, const Options& options) {
  if (const auto node = other_thread_node(trace))
    throw BenchError(node_label(trace, *node) + ": " + std::to_string(trace.threads) + " " +
                     std::string(kThreadsRefusal));
  if (const auto init = init_thread_node(trace); init && !options.single_thread)
    throw BenchError(node_label(trace, *init) + ": " + std::string(kInitThreadRefusal));
}

// Whether some value of the trace is a histogram (recorded with a
// threshold) rather than a sequence (a count model's or a filter's output).
bool holds_histograms(const Trace& trace) {
  const auto any = [](const Elastic& e) {
    return std::any_of(e.entries().begin(), e.entries().end(),
                       [](const auto& en) { return en.values.is_histogram(); });
  };
  for (const Node& n : trace.nodes) {
    if (any(n.count)) return true;
    for (const auto& l : n.loops)
      if (any(l.members) || any(l.iters)) return true;
    for (const auto& [f, e] : n.fields)
      if (any(e)) return true;
  }
  return false;
}

namespace {

// The program of `trace` once the passes have run; `label` names its nodes
// (node_label of `trace` when null).
std::string generate(const Trace& trace, const Options& options,
                     std::function<std::string(std::size_t)> label) {
  if (other_thread_node(trace)) return benchgen::threaded_program(trace, options, std::move(label));
  benchgen::Gen g(trace, options);
  g.label = std::move(label);
  return g.program();
}

}  // namespace

std::string generate_c(const Trace& trace, const Options& options, Summary* summary) {
  // Each recorded thread's stream becomes a thread of the benchmark; only
  // a trace of one stream per rank that starts with MPI_Init_thread (from
  // a recorder that did not record threads) is refused unless
  // --single-thread says one thread called MPI.
  if (const auto init = init_thread_node(trace);
      init && trace.threads <= 1 && !options.single_thread)
    throw BenchError(node_label(trace, *init) + ": " + std::string(kInitThreadRefusal));
  check_clock(trace, options);
  const bool lossy = !trace.lossy.empty();
  // What --lossy-ok would do depends on what was lost: histograms lost
  // the order of their values, a model or a filter kept whole sequences.
  if (lossy && !options.lossy_ok)
    throw BenchError(
        "the trace is lossy (" + trace.lossy + "): the benchmark needs exact values (--lossy-ok " +
        (holds_histograms(trace) ? "draws them from the histograms, in an invented order)"
                                 : "generates it from the values the trace holds, each receive "
                                   "sized for the largest message it could meet)"));
  // Both checks cost one look at each node; a trace that needs neither pass
  // is generated as it is, without a copy. A lossy trace has lost the
  // order both passes walk.
  const bool resolve = !lossy && !options.keep_wildcards && has_wildcards(trace);
  const bool align = !lossy && needs_alignment(trace);
  Summary done;
  std::string text;
  if (resolve || align) {
    Trace prepared = trace;
    if (resolve) {
      const WildcardReport w = resolve_wildcards(prepared);
      done.wildcards_recorded = w.recorded;
      done.wildcards_chosen = w.chosen;
    }
    AlignReport a;
    if (align) a = align_collectives(prepared);
    done.collectives_merged = a.merged;
    text = generate(prepared, options, print_numbering(trace, std::move(a.origin)));
  } else {
    text = generate(trace, options, nullptr);
  }
  if (summary) *summary = done;
  return text;
}

Summary write_c(const Trace& trace, const Options& options, const std::string& path) {
  Summary summary;
  benchgen::write_whole(path, generate_c(trace, options, &summary));
  return summary;
}

}  // namespace tracefold::bench

namespace tracefold::benchgen {

void write_whole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    f.close();
    if (!f) {
      std::filesystem::remove(tmp);
      throw bench::BenchError("cannot write " + path);
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace tracefold::benchgen
