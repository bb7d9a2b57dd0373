// The C generator's state, shared by its parts: structure.cpp walks the
// node list into loops and guarded statements, values.cpp turns elastic
// values into C expressions, calls.cpp writes each MPI call, prelude.cpp
// the helpers every program carries. Internal to src/benchgen.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "exprs.hpp"
#include "tracefold/bench.hpp"
#include "tracefold/op_class.hpp"
#include "tracefold/trace.hpp"

namespace tracefold::benchgen {

/// What a value means in C, which decides how a number or a sentinel is
/// written.
enum class Kind : uint8_t { kInt, kTag, kPeer, kDtype, kRedop, kComm };

/// Sentinels in generated arrays (numbers no real value takes).
inline constexpr int64_t kCodeAny = -2000000001, kCodeNull = -2000000002, kCodeUndef = -2000000003,
                         kCodeAbsent = -2000000004;

/// The recorder numbers derived datatypes and user-defined reduction
/// operations from these ids up (src/common/mpi_ids.hpp, docs/recording.md).
inline constexpr int64_t kFirstDerivedType = 1000, kFirstUserOp = 100;

/// How a trace with threads is written (threads.cpp): its streams as one
/// node list over the ranks, thread by thread, and what the threads wait
/// for. Thread 0 runs in main, each other thread in a pthread of its own.
struct ThreadPlan {
  /// Thread T's nodes are [begin[T], begin[T + 1]) of the node list.
  std::vector<std::size_t> begin;
  /// The node of the trace with threads that each node came from.
  std::vector<std::size_t> origin;
  /// Per thread: the communicators another thread makes, each with the
  /// ranks on which this thread uses it.
  std::vector<std::map<int64_t, Ranklist>> awaits;
  /// Per communicator: the threads that use it on some rank.
  std::map<int64_t, std::set<int32_t>> users;
  /// Requests one thread makes and another completes (`lthreads`): per
  /// making thread, per rank, the request numbers after which it waits
  /// until the completing thread has taken them, as the program's threads
  /// took turns (the trace holds no order across threads; this one keeps
  /// every completion's `links` as recorded).
  std::vector<std::map<int32_t, std::vector<int64_t>>> handoffs;
  int32_t count() const { return static_cast<int32_t>(begin.size()) - 1; }
};

/// The streams of a trace with threads as one trace of `world_size`
/// ranks whose nodes are thread 0's, then thread 1's, ...; refuses (with
/// BenchError) what cannot run on threads of its own (thread_comms()).
Trace split_threads(const Trace& trace, ThreadPlan& plan);
/// The program of a trace with threads (after the passes); `label` names
/// its nodes (node_label of `trace` when null).
std::string threaded_program(const Trace& trace, const bench::Options& options,
                             std::function<std::string(std::size_t)> label);

struct Gen {
  Gen(const Trace& trace, const bench::Options& options);

  const Trace& t;
  bench::Options opt;
  std::ostringstream decls;  // file-scope tables and counters
  std::ostringstream body;   // main's statements
  std::ostringstream setup;  // buffer allocation, before the first call
  std::ostringstream funcs;  // after the tables: run_node() and walk() of shared rank groups
  int depth = 1;
  int loop_vars = 0;
  std::set<std::string> names;
  std::set<std::string> counters;  // call counters declared (read by some table)
  // Buffers of the call being written (name, bytes), declared if it uses them.
  std::vector<std::pair<std::string, int64_t>> pending_buffers;
  // The buffers blocking calls share (send_buf, recv_buf) and the largest
  // size any of them needs: a blocking call is done with its buffer when it
  // returns, so one per direction serves them all.
  std::map<std::string, int64_t> shared_buffers;
  int request_ring = 1;                       // slots in the request ring (a power of two)
  int request_width = 1;                      // requests one call may start (Startall)
  std::map<int64_t, std::string> comm_names;  // trace id -> C variable
  std::map<SiteId, int> site_nodes;           // nodes per call site
  std::vector<std::string> phases;            // top-level loops, by site name
  int top_depth = 1;
  int64_t p2p_bytes = -1;  // lossy_p2p_bytes(), once computed
  // Receives come from the senders' draws, not the receive calls
  // (lossy_plan.cpp): set by plan_receives().
  bool planned_receives = false;
  // Whether compute times depend on the preceding call, which the program
  // then tracks in `after` (compute_time.hpp).
  bool by_pred = false;
  std::map<EventKey, std::string> after_names;  // predecessor -> enum constant

  // Field ids the calls read.
  FieldId peer, rpeer, tag, rtag, count, rcount, dtype, rdtype, dsize, rdsize, root, redop, comm,
      newcomm, freecomm, color, key, links, counts, rcounts, ndims, high, pcomm, rleader;

  /// How messages name node `i`: as `tracefold print` numbers the trace
  /// the passes started from (node_label of that trace; set by generate_c).
  std::function<std::string(std::size_t)> label;
  /// Communicators no recorded call made, by trace id: the predefined one
  /// each stands for on every rank that has it (program()).
  std::map<int64_t, std::string> predefined_comms;

  [[noreturn]] void fail(std::size_t node, const std::string& what) const;
  std::string line() const { return std::string(static_cast<std::size_t>(depth) * 2, ' '); }
  /// A C identifier from `base` not used yet.
  std::string fresh(const std::string& base);
  /// `function_siteN` (or `MPI_Name_siteN` without symbols) for node `i`.
  std::string site_name(std::size_t i) const;
  /// `function (file:line)` of node i's call site, "" without symbols.
  std::string site_comment(std::size_t i) const;

  /// The value of field `f` of node `i` at this execution, as C, for the
  /// ranks of `universe`; nullopt-like "" when the field is absent. Values
  /// that vary per execution index `counter`.
  std::string scalar(std::size_t i, FieldId f, Kind kind, const Ranklist& universe,
                     const std::string& counter, const std::string& comm_c = "");
  /// The same for an Elastic that is not a field (loop trip counts).
  std::string elastic(std::size_t i, const Elastic& e, const std::string& what, Kind kind,
                      const Ranklist& universe, const std::string& counter,
                      const std::string& comm_c = "");
  /// A value histogram of a lossy trace as a table: its values in an order
  /// drawn from opt.seed, node `i` and `what` (--lossy-ok).
  std::vector<int64_t> drawn(std::size_t i, const std::string& what, const ValueSeq& hist);
  /// A list field as `next_list(table, &cursor)` (int*), "" when absent.
  std::string list(std::size_t i, FieldId f, const Ranklist& universe);
  /// Whether every value of the field for the universe is absent/missing.
  bool has(std::size_t i, FieldId f) const;
  /// Largest value of a scalar field (or of a list field's sum) over the
  /// execution, 0 when absent.
  int64_t max_of(std::size_t i, FieldId f, bool list_sum) const;
  /// The largest message of any point-to-point send of the trace, in
  /// bytes: what a receive of a lossy benchmark makes room for.
  int64_t lossy_p2p_bytes();
  /// Whether a lossy trace's point-to-point peers or tags are histograms
  /// (with --lossy-ok): then receives are planned from the senders.
  bool needs_planned_receives() const;
  /// Sets planned_receives and, when set, writes each rank's planned
  /// receives (tables, post_planned() in the setup, wait_planned()).
  void plan_receives();
  /// C for one number of `kind` (sentinels by MPI name).
  std::string literal(int64_t v, Kind kind, const std::string& comm_c) const;
  std::string comm_var(int64_t id) const;
  /// The name of a `static const TYPE NAME[] = {values}` table, made from
  /// `base` the first time these values are asked for, shared after.
  std::string shared_table(const std::string& type, const std::string& base,
                           const std::vector<int64_t>& values);
  std::map<std::string, std::string> shared_tables;  // type, size, values -> name

  /// Writes the statement of node `i` (structure.cpp guards it).
  void call(std::size_t i, const Ranklist& universe, const std::string& counter);
  std::string compute(std::size_t i);
  /// The C constant naming predecessor `k` (`AFTER_MPI_Send_3`).
  std::string after_name(EventKey k);
  /// Datatype calls and MPI_Comm_create(_group) (calls_types.cpp); false
  /// when node `i` is none of them.
  bool call_types(std::size_t i, const Ranklist& universe, const std::string& counter);
  /// The C helpers of those calls: the tables of made types and user
  /// operations, sized for this trace.
  std::string types_prelude() const;

  /// Node `h` as a statement, for the ranks of `U` (structure.cpp).
  void leaf(std::size_t h, const Ranklist& U);
  /// Nodes [from, to) as statements of `body` (all of main's for a trace
  /// without threads). `suffix` names the shared rank groups' functions
  /// (run_node, loop_trips, walk) of one thread apart from another's.
  void structure(std::size_t from, std::size_t to, const std::string& suffix);
  std::string program();

  /// Set for a trace with threads (split_threads): then each thread's
  /// nodes become a function of their own (threads.cpp).
  const ThreadPlan* threads = nullptr;
  int32_t thread = 0;                   // the thread whose nodes are being written
  std::set<std::size_t> thread_firsts;  // a rank's first node in that thread
  /// What a thread waits for before node `h` (a free of a communicator
  /// other threads use), and what it tells the others after it (the
  /// communicators it made), given the node's C text `written`.
  void thread_before(std::size_t h);
  void thread_after(std::size_t h, const std::string& written);
  /// The threads' bodies: thread 0's is left in `body` (main's), the
  /// others are returned as pthread functions.
  std::string thread_functions();
  /// The helpers the threads share (after the communicators' table).
  std::string thread_helpers() const;
  /// Thread `k`'s hand-off points (ThreadPlan::handoffs), set at its start.
  void hand_off_table(int32_t k);
  /// Main's start for a trace with threads: MPI_THREAD_MULTIPLE or a
  /// clear refusal.
  std::string thread_init() const;
};

/// The id of a scalar (list) field by name, made if no trace has it yet.
inline FieldId scalar_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kScalar);
}
inline FieldId list_field(const char* n) {
  return FieldTable::intern(n, FieldKind::kList);
}

std::string prelude();
/// dtype_of() and op_of(): the named handles by trace id, as C; with
/// `derived`, other ids go to the derived types and user operations the
/// program makes (Gen::types_prelude).
std::string named_tables(bool derived = true);

/// A program of a trace with threads: its helpers' state that a call
/// changes (the request ring, output arguments, the last call made) is
/// made per thread (`_Thread_local`), tables and communicators stay shared.
std::string thread_local_state(std::string c);

/// `c` without the file-scope `static`/`HELPER` definitions nothing else
/// in it refers to (prune.cpp), nor the comment lines just before them.
std::string drop_unused(const std::string& c);

/// Writes `text` to `path` through a temporary name, so a benchmark file
/// appears whole or not at all. Throws bench::BenchError.
void write_whole(const std::string& path, const std::string& text);

}  // namespace tracefold::benchgen
