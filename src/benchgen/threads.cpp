// Benchmarks of traces with threads (gen.hpp): each recorded thread's
// stream becomes a function of its own, run by a pthread of its own under
// MPI_THREAD_MULTIPLE, as `tracefold replay` runs one thread per stream.
// The streams are projected onto the ranks (thread T of rank r, location
// T * P + r, becomes rank r of thread T's nodes), so that every rank
// predicate, peer and table is written as for a trace without threads.
#include <algorithm>

#include "gen.hpp"
#include "tracefold/event.hpp"
#include "tracefold/expand.hpp"
#include "tracefold/thread_comms.hpp"
#include "tracefold/thread_streams.hpp"
#include "tracefold/trace_query.hpp"

namespace tracefold::benchgen {

namespace {

// Every value of `e` for any rank.
template <class F>
void each_value(const Elastic* e, F&& f) {
  if (!e) return;
  for (const ElasticEntry& en : e->entries())
    for (auto c = en.values.cursor(); !c.done();) f(c.next());
}

// Where each thread that makes requests another completes waits for it.
// A completion names another thread's request by how many requests back
// that thread had made when the call was made, which is only defined if
// that thread waited meanwhile: the benchmark's making thread waits after
// its request N until the completing thread has taken it, where N is the
// farthest link beyond the requests taken so far (the requests are taken
// in the order they were made).
void hand_offs(const Trace& trace, ThreadPlan& plan) {
  const FieldId links = FieldTable::links(), lthreads = *FieldTable::find("lthreads");
  const int32_t p = trace.world_size, threads = std::max(trace.threads, 1);
  for (int32_t r = 0; r < p; ++r) {
    std::map<int32_t, int32_t> completer;  // making thread -> the thread completing its requests
    std::map<int32_t, int64_t> taken;      // making thread -> the last request taken
    for (int32_t c = 0; c < threads; ++c) {
      RankIterator it(trace, c * p + r);
      Event ev;
      while (it.next(ev)) {
        const FieldValue* lt = ev.find(lthreads);
        const FieldValue* lk = ev.find(links);
        if (!lt || !lk || lt->list.size() != lk->list.size()) continue;
        const auto node = static_cast<std::size_t>(it.current_node() - trace.nodes.data());
        std::map<int32_t, std::pair<int64_t, int64_t>> span;  // maker -> farthest, nearest link
        for (std::size_t j = 0; j < lt->list.size(); ++j) {
          const int64_t m = lt->list[j], d = lk->list[j];
          if (m < 0 || m >= threads || d <= 0) continue;
          auto [at, fresh] = span.try_emplace(static_cast<int32_t>(m), d, d);
          at->second = {std::max(at->second.first, d), std::min(at->second.second, d)};
        }
        for (const auto& [m, far_near] : span) {
          const auto [who, fresh] = completer.try_emplace(m, c);
          if (!fresh && who->second != c)
            throw bench::BenchError(node_label(trace, node) + ": threads " +
                                    std::to_string(who->second) + " and " + std::to_string(c) +
                                    " of rank " + std::to_string(r) +
                                    " both complete requests of thread " + std::to_string(m) +
                                    "; the benchmark hands a thread's requests to one other "
                                    "thread");
          int64_t& last = taken[m];
          const int64_t made = last + far_near.first;
          auto& ends = plan.handoffs[static_cast<std::size_t>(m)][r];
          if (ends.empty() || ends.back() < made) ends.push_back(made);
          last = std::max(last, made - far_near.second + 1);
        }
      }
    }
  }
}

}  // namespace

Trace split_threads(const Trace& trace, ThreadPlan& plan) {
  const int32_t p = trace.world_size, threads = std::max(trace.threads, 1);
  plan.handoffs.assign(static_cast<std::size_t>(threads), {});
  if (FieldTable::find("lthreads")) hand_offs(trace, plan);
  // What replay refuses, bench refuses: collectives of two threads on one
  // communicator. A communicator is made by the same thread on every rank,
  // so that the threads that wait for it know whom they wait for.
  std::map<int64_t, int32_t> creator;
  plan.awaits.assign(static_cast<std::size_t>(threads), {});
  plan.users.clear();
  for (int32_t r = 0; r < p; ++r) {
    const ThreadComms c = thread_comms(trace, r, "the benchmark");
    if (!c.error.empty()) throw bench::BenchError(c.error);
    // The generated threads run their calls freely; replay keeps this order.
    if (c.ordered)
      throw bench::BenchError(
          "rank " + std::to_string(r) +
          ": threads send or receive on one (communicator, peer, "
          "tag) in an order across threads the trace notes (" +
          node_label(trace, c.ordered_node) +
          "); the benchmark's threads would pair those messages by chance, so it refuses the "
          "trace (tracefold replay keeps the order)");
    for (const auto& [id, t] : c.creators) {
      const auto [it, fresh] = creator.emplace(id, t);
      if (!fresh && it->second != t)
        throw bench::BenchError("communicator " + std::to_string(id) + " is made by thread " +
                                std::to_string(it->second) + " on one rank and by thread " +
                                std::to_string(t) + " on rank " + std::to_string(r) +
                                "; the benchmark makes each by one thread");
    }
    for (std::size_t t = 0; t < c.last_use.size(); ++t)
      for (const auto& [id, last] : c.last_use[t]) {
        plan.users[id].insert(static_cast<int32_t>(t));
        const auto made = c.creators.find(id);
        if (made != c.creators.end() && made->second != static_cast<int32_t>(t))
          plan.awaits[t][id].insert(r);
      }
  }
  Trace out = same_header(trace);
  plan.begin.clear();
  plan.origin.clear();
  for (int32_t t = 0; t < threads; ++t) {
    plan.begin.push_back(out.nodes.size());
    Trace stream = thread_stream(trace, t, &plan.origin);
    for (Node& n : stream.nodes) out.nodes.push_back(std::move(n));
  }
  plan.begin.push_back(out.nodes.size());
  return out;
}

std::string threaded_program(const Trace& trace, const bench::Options& options,
                             std::function<std::string(std::size_t)> label) {
  // One function per recorded thread, written from the streams projected
  // onto the ranks: messages name the nodes of the trace with threads.
  ThreadPlan plan;
  const Trace split = split_threads(trace, plan);
  Gen g(split, options);
  if (!label) label = [&trace](std::size_t i) { return node_label(trace, i); };
  g.label = [&plan, label](std::size_t i) { return label(plan.origin.at(i)); };
  g.threads = &plan;
  return g.program();
}

std::string Gen::thread_init() const {
  return "  int provided;\n"
         "  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);\n"
         "  if (provided < MPI_THREAD_MULTIPLE) {\n"
         "    int me;\n"
         "    PMPI_Comm_rank(MPI_COMM_WORLD, &me);\n"
         "    if (me == 0)\n"
         "      fprintf(stderr, \"bench: the trace has " +
         std::to_string(threads->count()) +
         " threads per rank calling MPI at once, which need MPI_THREAD_MULTIPLE; this MPI "
         "provides level %d\\n\", provided);\n"
         "    MPI_Finalize();\n"
         "    return 1;\n"
         "  }\n";
}

void Gen::thread_before(std::size_t h) {
  const Node& n = t.nodes[h];
  if (op_traits(n.key.op).family != OpFamily::kCommFree) return;
  // The program freed the communicator after the other threads' last use
  // of it (another order is erroneous MPI); the benchmark's threads do not
  // run in step, so the free waits until those threads are done.
  std::set<int32_t> others;
  each_value(n.field(comm), [&](int64_t id) {
    if (const auto it = threads->users.find(id); it != threads->users.end())
      for (int32_t u : it->second)
        if (u != thread && u != 0) others.insert(u);
  });
  for (int32_t u : others) body << line() << "await_thread(" << u << ");\n";
}

void Gen::thread_after(std::size_t h, const std::string& written) {
  if (thread > 0 && thread + 1 < threads->count() && thread_firsts.count(h))
    body << line() << "first_call_made();\n";
  // A thread whose requests another completes tells it what it made.
  if (!threads->handoffs[static_cast<std::size_t>(thread)].empty() &&
      (written.find("new_request()") != std::string::npos ||
       written.find("push_requests(") != std::string::npos))
    body << line() << "handoff();\n";
  if (!t.nodes[h].field(newcomm)) return;
  // The communicator the call made, as the call names it: `&name`, or
  // `comm_ref(expression)` where it varies.
  for (const auto& [id, name] : comm_names)
    if (written.find("&" + name + ")") != std::string::npos ||
        written.find("&" + name + ",") != std::string::npos)
      body << line() << "comm_made(&" << name << ");\n";
  for (auto at = written.find("comm_ref("); at != std::string::npos;
       at = written.find("comm_ref(", at + 1)) {
    int open = 0;
    std::size_t e = at + 8;
    for (; e < written.size(); ++e) {
      if (written[e] == '(') ++open;
      if (written[e] == ')' && --open == 0) break;
    }
    body << line() << "comm_made(" << written.substr(at, e + 1 - at) << ");\n";
  }
}

std::string Gen::thread_functions() {
  const int32_t n = threads->count();
  std::vector<std::string> bodies(static_cast<std::size_t>(n));
  for (int32_t k = 0; k < n; ++k) {
    thread = k;
    body.str("");
    depth = 1;
    const auto from = threads->begin[static_cast<std::size_t>(k)];
    const auto to = threads->begin[static_cast<std::size_t>(k) + 1];
    if (k) body << line() << "thread_begins(" << k << ");\n";
    hand_off_table(k);
    // Communicators other threads make: waited for before the first call
    // (the program made them before this thread used them).
    for (const auto& [id, ranks] : threads->awaits[static_cast<std::size_t>(k)]) {
      const std::string pred =
          rank_predicate(ranks, Ranklist::range(0, t.world_size), t.world_size);
      body << line() << (pred == "1" ? "" : "if (" + pred + ") ") << "await_comm(comm_ref(" << id
           << "));\n";
    }
    // The recorder numbers threads 1.. by what they recorded, call sites
    // first, and sites by first call: each thread makes its first call
    // after the thread before it has made its own, so that the benchmark's
    // threads, each with its own call sites, are numbered as recorded.
    thread_firsts.clear();
    for (int32_t r = 0; r < t.world_size; ++r)
      for (std::size_t h = from; h < to; ++h)
        if (t.nodes[h].ranks.contains(r)) {
          thread_firsts.insert(h);
          break;
        }
    if (k > 1) {
      Ranklist before;  // the ranks where thread k - 1 calls MPI
      for (std::size_t h = threads->begin[static_cast<std::size_t>(k) - 1]; h < from; ++h)
        before.unite(t.nodes[h].ranks);
      const std::string pred =
          rank_predicate(before, Ranklist::range(0, t.world_size), t.world_size);
      body << line() << (pred == "1" ? "" : "if (" + pred + ") ") << "await_first_call(" << k - 1
           << ");\n";
    }
    structure(from, to, k ? "_t" + std::to_string(k) : "");
    bodies[static_cast<std::size_t>(k)] = body.str();
  }
  body.str("");
  body << bodies[0];
  thread = 0;
  std::ostringstream out;
  for (int32_t k = 1; k < n; ++k)
    out << "static void *thread" << k << "(void *arg) {\n  (void)arg;\n"
        << bodies[static_cast<std::size_t>(k)] << "  atomic_store_explicit(&thread_done[" << k
        << "], 1, memory_order_release);\n  return NULL;\n}\n";
  out << "static void start_threads(void) {\n  thread_begins(0);\n";
  for (int32_t k = 1; k < n; ++k)
    out << "  if (pthread_create(&thread_ids[" << k << "], NULL, thread" << k
        << ", NULL) != 0) {\n    fprintf(stderr, \"bench: rank %d: cannot start thread " << k
        << "\\n\", rank);\n    PMPI_Abort(MPI_COMM_WORLD, 1);\n  }\n";
  out << "}\nstatic void join_threads(void) {\n"
         "  for (int k = 1; k < THREADS; ++k) pthread_join(thread_ids[k], NULL);\n}\n";
  return out.str();
}

void Gen::hand_off_table(int32_t k) {
  const auto& by_rank = threads->handoffs[static_cast<std::size_t>(k)];
  if (by_rank.empty()) return;
  std::map<std::vector<int64_t>, Ranklist> groups;
  for (const auto& [r, ends] : by_rank) groups[ends].insert(r);
  const Ranklist all = Ranklist::range(0, t.world_size);
  for (const auto& [ends, ranks] : groups) {
    const std::string name = shared_table("long", "handoff" + std::to_string(k), ends);
    const std::string pred = rank_predicate(ranks, all, t.world_size);
    body << line() << (pred == "1" ? "" : "if (" + pred + ") ") << "handoff_ends = " << name
         << ", handoff_n = " << ends.size() << ";\n";
  }
}

std::string Gen::thread_helpers() const {
  const int32_t n = threads->count();
  std::ostringstream out;
  out << "\n/* Threads: thread 0's calls are main's, each other recorded thread's\n"
         "   calls are a function run by a pthread of its own. */\n"
         "#include <pthread.h>\n#include <sched.h>\n#include <stdatomic.h>\n"
         "#define THREADS "
      << n << "\nstatic atomic_int thread_done[THREADS];\n"
      << "static pthread_t thread_ids[THREADS];\n"
      << "/* Communicators made by one thread and used by another: made or not. */\n"
         "static MPI_Comm *const shared_comm_vars[] = {";
  for (const auto& [id, name] : comm_names) out << "&" << name << ", ";
  out << "NULL};\nstatic atomic_int shared_comm_made[sizeof shared_comm_vars / sizeof "
         "*shared_comm_vars];\n"
      << R"(/* Requests one thread makes and another completes: the maker says how
   many it has made (posted) and waits at its hand-off points until the
   other has taken them (taken). */
static MPI_Request (*ring_of[THREADS])[WIDTH];
static atomic_long posted[THREADS];
static atomic_long taken[THREADS];
static _Thread_local int me;
static _Thread_local const long *handoff_ends;
static _Thread_local long handoff_n;
static _Thread_local long handoff_at;
HELPER void thread_begins(int t) {
  me = t;
  ring_of[t] = ring;
}
HELPER void handoff(void) {
  atomic_store_explicit(&posted[me], nreq, memory_order_release);
  if (handoff_at < handoff_n && nreq == handoff_ends[handoff_at]) {
    while (atomic_load_explicit(&taken[me], memory_order_acquire) < nreq) sched_yield();
    ++handoff_at;
  }
}
/* The j-th link of a completion, in this thread's ring or, when lt[j]
   names another thread, in that thread's as it was when base[lt[j]]
   requests were made. */
HELPER MPI_Request *pick(const int *lk, const int *lt, int j, const long *base) {
  const long d = lk[j];
  const int m = lt[j] >= 0 && lt[j] < THREADS ? lt[j] : -1;
  const long made = m < 0 ? nreq : base[m];
  if (d <= 0 || d > made) return NULL;
  int k = 0;
  for (int e = 0; e < j; ++e) k += lk[e] == d && (lt[e] >= 0 && lt[e] < THREADS ? lt[e] : -1) == m;
  MPI_Request *row = (m < 0 ? ring : ring_of[m])[(made - d + 1) % RING];
  for (int e = 0; e < WIDTH; ++e)
    if (row[e] != MPI_REQUEST_NULL && k-- == 0) return &row[e];
  return NULL;
}
/* Another thread's requests are taken in the order it made them: this
   call's farthest link beyond those taken says how many it had made. */
HELPER void take_foreign(const int *lk, const int *lt, int n, MPI_Request *r, long *base) {
  for (int m = 0; m < THREADS; ++m) base[m] = 0;
  for (int j = 0; j < n; ++j)
    if (lt[j] >= 0 && lt[j] < THREADS && lk[j] > base[lt[j]]) base[lt[j]] = lk[j];
  for (int m = 0; m < THREADS; ++m) {
    if (!base[m]) continue;
    base[m] += atomic_load_explicit(&taken[m], memory_order_acquire);
    while (atomic_load_explicit(&posted[m], memory_order_acquire) < base[m]) sched_yield();
  }
  for (int j = 0; j < n; ++j) {
    MPI_Request *s = pick(lk, lt, j, base);
    r[j] = s ? *s : MPI_REQUEST_NULL;
  }
}
HELPER void give_foreign(const int *lk, const int *lt, int n, const MPI_Request *r, const long *base) {
  long last[THREADS] = {0};
  for (int j = 0; j < n; ++j) {
    MPI_Request *s = pick(lk, lt, j, base);
    if (s) *s = r[j];
    const int m = lt[j];
    if (m >= 0 && m < THREADS && lk[j] > 0 && base[m] - lk[j] + 1 > last[m]) last[m] = base[m] - lk[j] + 1;
  }
  for (int m = 0; m < THREADS; ++m)
    if (last[m] > atomic_load_explicit(&taken[m], memory_order_relaxed))
      atomic_store_explicit(&taken[m], last[m], memory_order_release);
}
HELPER void comm_made(MPI_Comm *c) {
  for (int k = 0; shared_comm_vars[k]; ++k)
    if (shared_comm_vars[k] == c) atomic_store_explicit(&shared_comm_made[k], 1, memory_order_release);
}
HELPER void await_comm(MPI_Comm *c) {
  for (int k = 0; shared_comm_vars[k]; ++k)
    if (shared_comm_vars[k] == c)
      while (!atomic_load_explicit(&shared_comm_made[k], memory_order_acquire)) sched_yield();
}
static atomic_int first_call[THREADS];
HELPER void first_call_made(void) {
  atomic_store_explicit(&first_call[me], 1, memory_order_release);
}
HELPER void await_first_call(int t) {
  while (!atomic_load_explicit(&first_call[t], memory_order_acquire)) sched_yield();
}
HELPER void await_thread(int t) {
  while (!atomic_load_explicit(&thread_done[t], memory_order_acquire)) sched_yield();
}
)";
  return out.str();
}

std::string thread_local_state(std::string c) {
  static const std::pair<const char*, const char*> kPerThread[] = {
      {"HELPER int flag, which, outcount;\n", "HELPER _Thread_local int flag, which, outcount;\n"},
      {"HELPER MPI_Message message =", "HELPER _Thread_local MPI_Message message ="},
      {"HELPER MPI_Comm scratch_comm =", "HELPER _Thread_local MPI_Comm scratch_comm ="},
      {"static MPI_Request ring[RING][WIDTH];\nstatic long nreq;\nHELPER int indices[",
       "static _Thread_local MPI_Request ring[RING][WIDTH];\nstatic _Thread_local long "
       "nreq;\nHELPER _Thread_local int indices["},
      {"static double phase_time[PHASES], phase_start, start_time;\n",
       "static double phase_time[PHASES], start_time;\nstatic _Thread_local double "
       "phase_start;\n"},
      {"static enum after_call after =", "static _Thread_local enum after_call after ="},
  };
  for (const auto& [from, to] : kPerThread)
    if (const auto at = c.find(from); at != std::string::npos)
      c.replace(at, std::string_view(from).size(), to);
  return c;
}

}  // namespace tracefold::benchgen
