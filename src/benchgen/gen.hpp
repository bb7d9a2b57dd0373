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
  void structure();  // the whole of main's body
  std::string program();
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

/// `c` without the file-scope `static`/`HELPER` definitions nothing else
/// in it refers to (prune.cpp), nor the comment lines just before them.
std::string drop_unused(const std::string& c);

/// Writes `text` to `path` through a temporary name, so a benchmark file
/// appears whole or not at all. Throws bench::BenchError.
void write_whole(const std::string& path, const std::string& text);

}  // namespace tracefold::benchgen
